"""Phase segmentation: cut a run into bursts of load separated by idle time.

Activity is read from the decode samples (a sample with requests running or waiting, or tokens
generated or prefilled) and, for SGLang, the Prefill lines. A sample with nothing running,
nothing waiting and no throughput is idle; so is a gap between activity lines longer than
``idle_gap_s`` (vLLM stops printing stats when idle, SGLang prints nothing without work).
Lines before the server said it was ready (SGLang's warm-up request) are left out by the caller.

Each phase gets its concurrency N: the plateau of running requests (the largest count held by
at least ``min_plateau_samples`` samples), or the given ``concurrency``.
"""

from __future__ import annotations

import datetime as dt
from typing import cast

import polars as pl

from logparse.analysis._frames import median_interval

PHASE_SCHEMA: dict[str, pl.DataType] = {
    "phase": pl.Int64(),
    "start": pl.Datetime("us"),
    "end": pl.Datetime("us"),
    "duration_s": pl.Float64(),
    "first_line": pl.Int64(),
    "last_line": pl.Int64(),
    "n_samples": pl.Int64(),
    "n_prefill_lines": pl.Int64(),
    "peak_running": pl.Int64(),
    "concurrency": pl.Int64(),
    "concurrency_source": pl.String(),
    "start_boundary": pl.String(),
    "end_boundary": pl.String(),
}
FIRST_ACTIVITY = "the log's first activity line after start-up"
IDLE_STATS = "a stats line with nothing running or waiting"
QUIET_S = 3.0  # no request in flight for this long (by the request lines) is idle time
_STARTS = ("added", "received")
_ENDS = ("finished", "aborted", "failed")
LAST_ACTIVITY = "the log's last activity line"


def default_idle_gap(samples: pl.DataFrame, *, engine: str) -> float:
    """The silence (s) read as idle: a few stats intervals, at least 20 s.

    vLLM V0 logs from the engine step every ≥ 5 s and from a 10 s poll, so one interval can
    stretch to ~15 s while busy; V1 logs every 10 s (`VLLM_LOG_STATS_INTERVAL`).
    """
    step = median_interval(samples.get_column("time")) if not samples.is_empty() else None
    if engine == "vllm":
        return max(2.5 * (step or 10.0), 20.0)
    return max(5.0 * (step or 4.0), 20.0)


def find_phases(
    samples: pl.DataFrame,
    *,
    prefills: pl.DataFrame | None = None,
    idle_gap_s: float,
    concurrency: int | None = None,
    min_plateau_samples: int = 2,
    requests: pl.DataFrame | None = None,
    quiet: pl.DataFrame | None = None,
    levels: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Split decode samples (and prefill lines) into phases of load.

    A burst of activity (`label_activity`: cut by idle samples and silences) is one phase unless
    its workload changes inside it: the running-count plateau or the requests' input length
    (`boundaries`), as in a sweep's back-to-back client runs.

    Parameters
    ----------
    samples
        `samples.decode_samples` output (``line_no``, ``time``, ``running``, ``waiting``,
        ``gen_tps``, ``prompt_tps``).
    prefills
        SGLang prefill lines (``line_no``, ``time``), counted as activity.
    idle_gap_s
        A silence longer than this between activity lines ends a phase.
    concurrency
        N for every phase, instead of the plateau of running requests.
    min_plateau_samples
        A running count must be held by this many samples to be the plateau.
    requests
        Requests whose input length the log pins down (``first_line``, ``input_tokens``,
        `prefill.request_inputs`): a change of input length cuts a phase.
    quiet
        Stretches with no request in flight by the log's request lines (`request_quiet`): each
        ends a phase, like an idle stats line.
    levels
        Running counts to find the plateaus in (``line_no``, ``running``; default: the decode
        samples'); SGLang's Prefill lines add theirs (`prefill_levels`).

    Returns
    -------
    pl.DataFrame
        `PHASE_SCHEMA`, phases numbered from 1 in time order; disjoint by construction.
        ``start_boundary`` and ``end_boundary`` say how each end of the phase was found.

    Examples
    --------
    >>> import datetime as dt
    >>> t = [dt.datetime(2026, 1, 1, 0, 0, 0) + dt.timedelta(seconds=s) for s in (0, 10, 20, 100, 110)]
    >>> samples = pl.DataFrame({"line_no": [1, 2, 3, 4, 5], "time": t, "running": [4, 4, 4, 2, 2],
    ...     "waiting": [0] * 5, "gen_tps": [100.0] * 5, "prompt_tps": [0.0] * 5})
    >>> find_phases(samples, idle_gap_s=25)[["phase", "first_line", "last_line", "concurrency"]]
    shape: (2, 4)
    ┌───────┬────────────┬───────────┬─────────────┐
    │ phase ┆ first_line ┆ last_line ┆ concurrency │
    │ ---   ┆ ---        ┆ ---       ┆ ---         │
    │ i64   ┆ i64        ┆ i64       ┆ i64         │
    ╞═══════╪════════════╪═══════════╪═════════════╡
    │ 1     ┆ 1          ┆ 3         ┆ 4           │
    │ 2     ┆ 4          ┆ 5         ┆ 2           │
    └───────┴────────────┴───────────┴─────────────┘
    """
    from logparse.analysis.boundaries import input_cuts, merge_cuts, plateau_cuts

    labelled = label_activity(samples, prefills=prefills, idle_gap_s=idle_gap_s, quiet=quiet)
    if labelled.is_empty():
        return pl.DataFrame(schema=PHASE_SCHEMA)
    rows: list[dict[str, object]] = []
    bursts = labelled.filter(pl.col("_phase").is_not_null()).group_by("_phase", maintain_order=True)
    for (_,), burst in bursts:
        dec = burst.filter(pl.col("_decode"))
        asked = (
            pl.DataFrame(schema={"first_line": pl.Int64(), "input_tokens": pl.Int64()})
            if requests is None
            else requests.filter(
                pl.col("first_line").is_between(
                    burst.get_column("line_no").min(), burst.get_column("line_no").max()
                )
            )
        )
        span = pl.col("line_no").is_between(
            burst.get_column("line_no").min(), burst.get_column("line_no").max()
        )
        counts = dec.select("line_no", "running") if levels is None else levels.filter(span).sort("line_no")
        cuts = merge_cuts(plateau_cuts(counts), input_cuts(burst.select("line_no"), asked))
        opened = str(burst.get_column("_start_why")[0])
        closed = str(burst.get_column("_end_why")[-1])
        after_cut = burst.get_column("line_no").shift(1).is_in(list(cuts)).fill_null(False)
        parts = burst.with_columns(after_cut.cast(pl.Int64).cum_sum().alias("_part"))
        pieces = list(parts.group_by("_part", maintain_order=True))
        for k, ((_,), part) in enumerate(pieces):
            start_why = opened if k == 0 else cuts[int(pieces[k - 1][1].get_column("line_no")[-1])]
            end_why = closed if k == len(pieces) - 1 else cuts[int(part.get_column("line_no")[-1])]
            rows.append(_phase_row(part, concurrency, min_plateau_samples, start_why, end_why))
    frame = pl.DataFrame(rows, schema=PHASE_SCHEMA, orient="row").sort("start", "first_line")
    return frame.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("phase"))


def _phase_row(
    part: pl.DataFrame, concurrency: int | None, min_plateau_samples: int, start_why: str, end_why: str
) -> dict[str, object]:
    """One `PHASE_SCHEMA` row (its number set later) from the activity events of one phase."""
    dec = part.filter(pl.col("_decode"))
    plateau = plateau_running(dec.get_column("running"), min_samples=min_plateau_samples)
    if plateau is None:  # all work fitted in one stats interval: the requests it served
        served = cast("int | None", dec.get_column("_served").max())
        plateau = None if dec.is_empty() else int(served or 0) or None
    # polars types Series.min/max as any Python scalar; `time` is a Datetime column, and
    # the lines of a phase have a time (the phases are cut by time gaps)
    times = part.get_column("time")
    start, end = cast(dt.datetime, times.min()), cast(dt.datetime, times.max())
    return {
        "phase": 0,
        "start": start,
        "end": end,
        "duration_s": (end - start).total_seconds(),
        "first_line": part.get_column("line_no").min(),
        "last_line": part.get_column("line_no").max(),
        "n_samples": dec.height,
        "n_prefill_lines": part.height - dec.height,
        "peak_running": dec.get_column("running").max(),
        "concurrency": concurrency if concurrency is not None else plateau,
        "concurrency_source": "given" if concurrency is not None else "plateau",
        "start_boundary": start_why,
        "end_boundary": end_why,
    }


def label_activity(
    samples: pl.DataFrame,
    *,
    prefills: pl.DataFrame | None,
    idle_gap_s: float,
    quiet: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Activity events in time order with a raw burst id ``_phase`` (null on idle samples).

    A decode sample printing nothing running and nothing waiting is idle, whatever its averaged
    throughput still shows (vLLM's averages trail off over the first idle interval); a sample
    that prints no running count is active when it shows throughput. Columns ``line_no``,
    ``time``, ``running``, ``_decode`` (a decode sample, not a prefill line), ``_active``,
    ``_phase``, and ``_start_why`` / ``_end_why``: how the event's burst was opened and closed
    (set on every event of a burst). A `quiet` stretch (`request_quiet`) is an idle event at
    the line whose request left nothing in flight.
    """
    printed = pl.col("running").is_not_null() | pl.col("waiting").is_not_null()
    active = (
        pl.when(printed)
        .then((pl.col("running").fill_null(0) > 0) | (pl.col("waiting").fill_null(0) > 0))
        .otherwise((pl.col("gen_tps").fill_null(0) > 0) | (pl.col("prompt_tps").fill_null(0) > 0))
    )
    served = pl.max_horizontal(pl.col("running").fill_null(0), pl.col("waiting").fill_null(0)).cast(pl.Int64)
    events = [
        samples.select(
            "line_no",
            "time",
            pl.col("running").cast(pl.Int64),
            served.alias("_served"),
            pl.lit(True).alias("_decode"),
            active.alias("_active"),
            pl.when(~active).then(pl.lit(IDLE_STATS)).alias("_idle_what"),
        )
    ]
    if prefills is not None and not prefills.is_empty():
        events.append(
            prefills.select(
                "line_no",
                "time",
                pl.lit(None, dtype=pl.Int64).alias("running"),
                pl.lit(None, dtype=pl.Int64).alias("_served"),
                pl.lit(False).alias("_decode"),
                pl.lit(True).alias("_active"),
                pl.lit(None, dtype=pl.String).alias("_idle_what"),
            )
        )
    if quiet is not None and not quiet.is_empty():
        events.append(
            quiet.select(
                "line_no",
                "time",
                pl.lit(None, dtype=pl.Int64).alias("running"),
                pl.lit(None, dtype=pl.Int64).alias("_served"),
                pl.lit(False).alias("_decode"),
                pl.lit(False).alias("_active"),
                pl.format(
                    "the last request in flight finished and none came for {} s", pl.col("seconds").round(0)
                ).alias("_idle_what"),
            )
        )
    ev = pl.concat(events).filter(pl.col("time").is_not_null()).sort("time", "line_no")
    if ev.is_empty():
        return ev.with_columns(
            pl.lit(None, dtype=pl.Int64).alias("_phase"),
            pl.lit(None, dtype=pl.String).alias("_start_why"),
            pl.lit(None, dtype=pl.String).alias("_end_why"),
        )
    # Gap to the previous *active* event; an idle sample in between also breaks the phase.
    prev_active_time = pl.when(pl.col("_active")).then(pl.col("time")).forward_fill().shift(1)
    prev_is_idle = (~pl.col("_active")).shift(1).fill_null(True)
    gap = (pl.col("time") - prev_active_time).dt.total_seconds(fractional=True)
    new_burst = pl.col("_active") & (prev_is_idle | gap.is_null() | (gap > idle_gap_s))
    idle_line = pl.col("line_no").shift(1)
    why = (
        pl.when(gap.is_null() & prev_is_idle & idle_line.is_null())
        .then(pl.lit(FIRST_ACTIVITY))
        .when(prev_is_idle & idle_line.is_not_null())
        .then(pl.format("after line {}: {}", idle_line, pl.col("_idle_what").shift(1)))
        .when(gap > idle_gap_s)
        .then(
            pl.format("after {} s without activity (idle gap {} s)", gap.round(0), pl.lit(round(idle_gap_s)))
        )
        .otherwise(pl.lit(FIRST_ACTIVITY))
    )
    next_idle = (~pl.col("_active")).shift(-1)
    next_gap = (pl.col("time").shift(-1) - pl.col("time")).dt.total_seconds(fractional=True)
    closed = (
        pl.when(next_idle.is_null())
        .then(pl.lit(LAST_ACTIVITY))
        .when(next_idle)
        .then(pl.format("before line {}: {}", pl.col("line_no").shift(-1), pl.col("_idle_what").shift(-1)))
        .when(next_gap > idle_gap_s)
        .then(
            pl.format(
                "followed by {} s without activity (idle gap {} s)",
                next_gap.round(0),
                pl.lit(round(idle_gap_s)),
            )
        )
        .otherwise(pl.lit(LAST_ACTIVITY))
    )
    ev = ev.with_columns(
        pl.when(pl.col("_active")).then(new_burst.cast(pl.Int64).cum_sum()).alias("_phase"),
        pl.when(pl.col("_active") & new_burst).then(why).alias("_opened"),
        closed.alias("_closed"),
    )
    burst_ends = (
        ev.filter(pl.col("_phase").is_not_null())
        .group_by("_phase")
        .agg(
            pl.col("_opened").drop_nulls().first().alias("_start_why"),
            pl.col("_closed").last().alias("_end_why"),
        )
    )
    return (
        ev.join(burst_ends, on="_phase", how="left")
        .drop("_opened", "_closed", "_idle_what")
        .sort("time", "line_no")
    )


def prefill_levels(samples: pl.DataFrame, prefills: pl.DataFrame) -> pl.DataFrame:
    """The running count after each SGLang line, for `find_phases`' plateaus: a Decode line's
    ``running``, a Prefill line's ``#running-req`` plus the ``#new-seq`` it admits (a level held
    by two Decode lines only is still seen, through the Prefill lines between them)."""
    return pl.concat(
        [
            samples.select("line_no", pl.col("running").cast(pl.Int64), pl.lit(True).alias("decode")),
            prefills.select(
                "line_no",
                (pl.col("running_req").fill_null(0) + pl.col("new_seq").fill_null(0))
                .cast(pl.Int64)
                .alias("running"),
                pl.lit(False).alias("decode"),
            ),
        ]
    ).sort("line_no")


def request_quiet(requests: pl.DataFrame, *, min_s: float = QUIET_S) -> pl.DataFrame:
    """Stretches of at least `min_s` seconds with no request in flight, by the request lines
    (vLLM's `Added request` / `Received request` and `Finished request` / `Aborted request`).

    `requests`: the ``request`` table (``line_no``, ``time``, ``event``). Returns ``line_no`` and
    ``time`` of the line that left nothing in flight and ``seconds`` until the next request came;
    empty when the log prints no such lines (request logging off, SGLang).

    Examples
    --------
    >>> import datetime as dt
    >>> t = [dt.datetime(2026, 1, 1, 0, 0, s) for s in (0, 0, 5, 6, 20, 21, 22)]
    >>> r = pl.DataFrame({"line_no": range(1, 8), "time": t,
    ...     "event": ["added", "added", "finished", "finished", "added", "finished", None]})
    >>> request_quiet(r)
    shape: (1, 3)
    ┌─────────┬─────────────────────┬─────────┐
    │ line_no ┆ time                ┆ seconds │
    │ ---     ┆ ---                 ┆ ---     │
    │ i64     ┆ datetime[μs]        ┆ f64     │
    ╞═════════╪═════════════════════╪═════════╡
    │ 4       ┆ 2026-01-01 00:00:06 ┆ 14.0    │
    └─────────┴─────────────────────┴─────────┘
    """
    schema = {"line_no": pl.Int64(), "time": pl.Datetime("us"), "seconds": pl.Float64()}
    events = requests.filter(pl.col("time").is_not_null() & pl.col("event").is_not_null())
    start = next((e for e in _STARTS if (events.get_column("event") == e).any()), None)
    if start is None or not events.get_column("event").is_in(list(_ENDS)).any():
        return pl.DataFrame(schema=schema)
    step = (
        pl.when(pl.col("event") == start)
        .then(1)
        .when(pl.col("event").is_in(list(_ENDS)))
        .then(-1)
        .otherwise(0)
    )
    flow = (
        events.sort("line_no")
        .with_columns(step.alias("_step"))
        .filter(pl.col("_step") != 0)
        .with_columns(pl.col("_step").cum_sum().alias("_in_flight"))
    )
    # A log that starts mid-run ends more requests than it saw start: count from its lowest point.
    flow = flow.with_columns(
        (pl.col("_in_flight") - pl.col("_in_flight").min().clip(upper_bound=0)).alias("_in_flight")
    )
    next_time = pl.col("time").shift(-1)
    quiet = flow.with_columns(next_time.alias("_next")).filter(
        (pl.col("_step") == -1) & (pl.col("_in_flight") == 0) & pl.col("_next").is_not_null()
    )
    seconds = (pl.col("_next") - pl.col("time")).dt.total_seconds(fractional=True)
    return (
        quiet.with_columns(seconds.alias("seconds"))
        .filter(pl.col("seconds") >= min_s)
        .select(pl.col("line_no").cast(pl.Int64), pl.col("time").cast(pl.Datetime("us")), "seconds")
    )


def requests_per_phase(requests: pl.DataFrame, phases: pl.DataFrame) -> dict[int, int]:
    """Phase → requests the request lines saw start in it (`Added request`, else `Received
    request`): those after the previous phase's last line up to the phase's own last line (no
    request starts while idle, so the idle time before a phase belongs to it). Empty when the
    log prints no such lines."""
    events = requests.filter(pl.col("event").is_not_null())
    start = next((e for e in _STARTS if (events.get_column("event") == e).any()), None)
    if start is None or phases.is_empty():
        return {}
    lines = events.filter(pl.col("event") == start).get_column("line_no").sort()
    counts: dict[int, int] = {}
    before = 0
    for ph in phases.sort("first_line").iter_rows(named=True):
        counts[int(ph["phase"])] = int(((lines > before) & (lines <= ph["last_line"])).sum())
        before = ph["last_line"]
    return counts


def plateau_running(running: pl.Series, *, min_samples: int = 2) -> int | None:
    """The largest running count held by at least `min_samples` samples (else the maximum)."""
    values = running.drop_nulls()
    values = values.filter(values > 0)
    if values.is_empty():
        return None
    counts = values.value_counts().sort(values.name, descending=True)
    need = min(min_samples, values.len())
    for value, count in counts.iter_rows():
        if count >= need:
            return int(value)
    return int(values.max())  # type: ignore[arg-type]


def assign_phase(frame: pl.DataFrame, phases: pl.DataFrame, *, by: str = "line_no") -> pl.DataFrame:
    """Add a ``phase`` column: the phase whose line span holds the row's `by` line (else null)."""
    if phases.is_empty() or frame.is_empty():
        return frame.with_columns(pl.lit(None, dtype=pl.Int64).alias("phase"))
    spans = phases.select(
        pl.col("phase").alias("_phase"),
        pl.col("first_line").alias("_first"),
        pl.col("last_line").alias("_last"),
    ).sort("_first")
    joined = frame.drop("phase", strict=False).sort(by)
    joined = joined.join_asof(spans, left_on=by, right_on="_first", strategy="backward")
    joined = joined.with_columns(pl.when(pl.col(by) <= pl.col("_last")).then(pl.col("_phase")).alias("phase"))
    return joined.select(frame.columns if "phase" in frame.columns else [*frame.columns, "phase"])


def assign_phase_by_time(
    frame: pl.DataFrame, phases: pl.DataFrame, *, slack_s: float = 1.0, lead_s: float = 0.0
) -> pl.DataFrame:
    """Add a ``phase`` column from ``time``: the phase whose [start - slack - lead, end + slack]
    holds it. `lead_s` (a stats interval) reaches back over the first sample's interval, where
    the phase's first requests already ran."""
    if phases.is_empty() or frame.is_empty():
        return frame.with_columns(pl.lit(None, dtype=pl.Int64).alias("phase"))
    slack = pl.duration(microseconds=int(slack_s * 1_000_000))
    lead = pl.duration(microseconds=int(lead_s * 1_000_000))
    spans = phases.select(
        "phase", (pl.col("start") - slack - lead).alias("_s"), (pl.col("end") + slack).alias("_e")
    )
    with_idx = frame.with_row_index("_row")
    hit = (
        with_idx.filter(pl.col("time").is_not_null())
        .sort("time")
        .join_asof(spans.sort("_s"), left_on="time", right_on="_s", strategy="backward")
        .filter(pl.col("time") <= pl.col("_e"))
        .select("_row", "phase")
    )
    return with_idx.join(hit, on="_row", how="left").sort("_row").drop("_row")
