"""Where a burst of load changes workload: the cuts inside a burst that make a sweep's phases.

A benchmark sweep runs one client level after another against the same server, often with no
idle time in between (c = 1, then 2, then 4; or one input length, then another). Within a burst
(`phases.label_activity`) a new phase begins

* where the running-request plateau changes: a plateau is a run of at least `PLATEAU_RUN`
  consecutive decode samples printing the same running count (one sample of another count
  between two runs of it does not break the run); two consecutive plateaus at
  different counts are two phases, cut where the earlier plateau ends (the samples between
  them, a ramp or a tail, go with the later one). A burst is cut this way only when its
  plateaus hold at least `PLATEAU_SHARE` of its samples: a request-rate run's rising and falling
  load, where a count now and then holds for a few samples, is one phase;
* where the input length changes: SGLang's Prefill lines pin each request's input down
  (`prefill.request_inputs`); a request more than `INPUT_APART` times longer or shorter than the
  median of the requests before it in the phase, followed by one that agrees with it, starts a
  new phase (vLLM prints no per-request input length, so its phases are cut by the running
  count and idle time only).

A cut is expressed as the line of the last decode sample before the new phase, so a plateau cut
and an input cut at the same change are one cut.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import polars as pl

PLATEAU_RUN = 3  # consecutive samples at one running count that make a plateau
PLATEAU_SHARE = 0.5  # plateaus must hold this share of a burst's samples for it to be cut by them
INPUT_APART = 2.0  # inputs this many times longer or shorter are another workload
INPUT_HISTORY = 3  # requests before a change whose median it is compared with


@dataclass(frozen=True)
class Cut:
    """A new phase begins after the decode sample on `after_line`; `why` says what changed."""

    after_line: int
    why: str


def plateau_cuts(decode: pl.DataFrame, *, min_run: int = PLATEAU_RUN) -> list[Cut]:
    """Cuts where the running-request plateau changes (`decode`: one burst's running counts,
    ``line_no`` and ``running``, in time order; with a boolean ``decode`` column, only runs
    holding a decode sample are plateaus: SGLang's chunked prefill admits long requests one by
    one, a staircase of Prefill lines with no decoding in between).

    Examples
    --------
    >>> d = pl.DataFrame({"line_no": range(1, 11), "running": [1, 1, 1, 2, 2, 2, 4, 3, 4, 4]})
    >>> [(c.after_line, c.why) for c in plateau_cuts(d)]  # doctest: +NORMALIZE_WHITESPACE
    [(3, 'where the running count changed from 1 to 2 (line 4)'),
     (6, 'where the running count changed from 2 to 4 (line 7)')]
    >>> d = pl.DataFrame({"line_no": range(1, 8), "running": [4, 4, 4, 4, 1, 1, 1]})
    >>> [c.after_line for c in plateau_cuts(d)]
    [4]
    >>> d = pl.DataFrame({"line_no": range(1, 11), "running": [2, 2, 2, 4, 1, 4, 4, 1, 1, 1]})
    >>> [c.after_line for c in plateau_cuts(d)]
    [3, 7]
    """
    lines = decode.get_column("line_no").to_list()
    running = decode.get_column("running").to_list()
    decoding = decode.get_column("decode").to_list() if "decode" in decode.columns else [True] * len(lines)
    plateaus = [
        r
        for r in _bridge_dips(_runs(running))
        if r[0] > 0 and r[2] >= min_run and any(decoding[r[1] : r[1] + r[2]])
    ]
    if sum(r[2] for r in plateaus) < PLATEAU_SHARE * len(running):
        return []  # the load rises and falls (a request-rate run): no levels to tell apart
    cuts = []
    for before, after in itertools.pairwise(plateaus):
        if before[0] == after[0]:
            continue
        # The samples between two plateaus (a ramp, a tail, a dip) go with the later one.
        first = before[1] + before[2]
        cuts.append(
            Cut(
                int(lines[first - 1]),
                f"where the running count changed from {before[0]} to {after[0]} (line {lines[first]})",
            )
        )
    return cuts


def _runs(running: list[int | None]) -> list[tuple[int, int, int]]:
    """Maximal runs of one count: (count, first index, length); a null count breaks a run."""
    runs: list[tuple[int, int, int]] = []
    for i, value in enumerate(running):
        if runs and value is not None and runs[-1][0] == value and runs[-1][1] + runs[-1][2] == i:
            runs[-1] = (value, runs[-1][1], runs[-1][2] + 1)
        elif value is not None:
            runs.append((value, i, 1))
    return runs


def _bridge_dips(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """`runs` with every single sample between two runs of one count merged into them: a request
    that finished just before a stats line and was replaced just after it is no new level."""
    out: list[tuple[int, int, int]] = []
    i = 0
    while i < len(runs):
        value, first, length = runs[i]
        while i + 2 < len(runs) and runs[i + 1][2] == 1 and runs[i + 2][0] == value:
            length += 1 + runs[i + 2][2]
            i += 2
        out.append((value, first, length))
        i += 1
    return out


def input_cuts(events: pl.DataFrame, requests: pl.DataFrame) -> list[Cut]:
    """Cuts where the requests' input length changes (`requests`: ``first_line``,
    ``input_tokens`` of the burst's requests, `prefill.request_inputs`; `events`: the burst's
    activity lines, ``line_no``): the new phase begins at the line where the first request of
    the new length starts.

    Examples
    --------
    >>> d = pl.DataFrame({"line_no": [2, 4, 6, 8, 10], "running": [1] * 5})
    >>> r = pl.DataFrame({"first_line": [1, 3, 5, 7, 9], "input_tokens": [70, 72, 8000, 8010, 8005]})
    >>> [(c.after_line, c.why) for c in input_cuts(d, r)]
    [(4, 'where the input length changed from 71 to 8,000 tokens per request (line 5)')]
    """
    if requests.is_empty() or events.is_empty():
        return []
    ordered = requests.sort("first_line").select("first_line", "input_tokens").drop_nulls()
    firsts, inputs = ordered.get_column("first_line").to_list(), ordered.get_column("input_tokens").to_list()
    event_lines = sorted(events.get_column("line_no").to_list())
    cuts: list[Cut] = []
    since = 0  # index of the first request of the current phase
    for i in range(1, len(inputs)):
        history = sorted(inputs[max(since, i - INPUT_HISTORY) : i])
        if not history:
            continue
        median = (
            history[len(history) // 2]
            if len(history) % 2
            else (history[len(history) // 2 - 1] + history[len(history) // 2]) / 2
        )
        if not _apart(inputs[i], median):
            continue
        if i + 1 < len(inputs) and _apart(inputs[i + 1], inputs[i]):
            continue  # a single odd request, not a new workload
        before = [line for line in event_lines if line < firsts[i]]
        if not before:
            continue
        since = i
        cuts.append(
            Cut(
                before[-1],
                f"where the input length changed from {median:,.0f} to {inputs[i]:,} tokens per request"
                f" (line {firsts[i]})",
            )
        )
    return cuts


def _apart(a: float, b: float) -> bool:
    low, high = min(a, b), max(a, b)
    return low <= 0 < high or (low > 0 and high / low > INPUT_APART)


def merge_cuts(*groups: list[Cut]) -> dict[int, str]:
    """``{after_line: why}`` of every cut; two cuts after the same sample are one, both reasons kept."""
    merged: dict[int, str] = {}
    for group in groups:
        for cut in group:
            merged[cut.after_line] = (
                f"{merged[cut.after_line]}; {cut.why}" if cut.after_line in merged else cut.why
            )
    return merged


__all__ = ["INPUT_APART", "PLATEAU_RUN", "Cut", "input_cuts", "merge_cuts", "plateau_cuts"]
