"""The per-request arrays of a vLLM / SGLang result object, and the statistics they give.

Which arrays each writer saves (fixtures/bench/SOURCES.md names the source versions read):

- vLLM `benchmarks/benchmark_serving.py` (v0.5 to v0.8) and the first `vllm bench serve`:
  input_lens, output_lens, ttfts, itls, generated_texts, errors, always (the `--save-detailed`
  deletion, where there is one, runs before the run's keys are merged in), and before the
  summary statistics (mean_ttft_ms, ...).
- current `vllm bench serve --save-detailed`: also latencies, start_times, queue_times; without
  `--save-detailed` the `latencies` and `queue_times` arrays are still written.
- SGLang `bench_serving --output-details`: input_lens, output_lens, ttfts, itls, generated_texts,
  errors, after the summary keys.

Each array has one entry per request sent, failed ones included (ttft 0, output_len 0, an error
text). The successful requests are picked by an empty error (and, if that does not count them, a
positive output length); a pick is used only when it counts the file's own `completed` and, where
the file prints them, reproduces its mean TTFT and mean latency. Times in the arrays are seconds.

What is exact and what is not: TTFT, pooled ITL and (with a `latencies` array) latency, TPOT and
per-user TPS are the tools' own per-request samples. Without `latencies`, latency is taken as
ttft + sum(itls), the time to the last streamed chunk, which can fall short of the tool's latency
(some versions stop its clock at the final [DONE] event); the columns built on it are marked
derived.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from logparse.bench.percentiles import LATENCY_PERCENTILES, RATE_PERCENTILES, mean, summarize

_LATENCY_KEYS = ("latencies", "e2els")  # vLLM writes `latencies`; `e2els` is the same idea elsewhere
_TOLERANCE_MS = 0.005  # half a unit of the 2 decimals a summary is printed with


@dataclass(frozen=True)
class Requests:
    """The successful requests of one run, one entry each; None for an array the file lacks."""

    sent: int
    ttft_s: list[float] | None
    itl_s: list[list[float]] | None
    output_len: list[int] | None
    latency_s: list[float] | None
    arrays: tuple[str, ...]


@dataclass(frozen=True)
class RequestStats:
    """Statistics from per-request arrays: schema column -> value, which of them rest on the
    ttft + sum(itls) latency (derived), and a note saying what was read."""

    values: dict[str, float]
    derived: frozenset[str]
    note: str


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _arrays(values: dict[str, Any]) -> dict[str, list[Any]]:
    keys = ("ttfts", "itls", "output_lens", "errors", *_LATENCY_KEYS)
    return {key: values[key] for key in keys if isinstance(values.get(key), list)}


def _shape_problem(arrays: dict[str, list[Any]]) -> str | None:
    """Why the arrays cannot be read per request, or None."""
    lengths = {key: len(items) for key, items in arrays.items()}
    if len(set(lengths.values())) > 1:
        return "the arrays differ in length (" + ", ".join(f"{k} {n}" for k, n in lengths.items()) + ")"
    numeric = [key for key in ("ttfts", "output_lens", *_LATENCY_KEYS) if key in arrays]
    for key in numeric:
        if not all(_is_number(item) for item in arrays[key]):
            return f"'{key}' holds a value that is not a number"
    if "itls" in arrays and not all(
        isinstance(gaps, list) and all(_is_number(gap) for gap in gaps) for gaps in arrays["itls"]
    ):
        return "'itls' holds an entry that is not a list of numbers"
    return None


def _success_mask(arrays: dict[str, list[Any]], completed: int) -> list[bool] | None:
    """The first way of telling successful requests apart that counts `completed` of them."""
    sent = len(next(iter(arrays.values())))
    candidates: list[list[bool]] = []
    no_error = [not error for error in arrays["errors"]] if "errors" in arrays else [True] * sent
    candidates.append(no_error)
    if "output_lens" in arrays:
        candidates.append([ok and n > 0 for ok, n in zip(no_error, arrays["output_lens"], strict=True)])
    latency = next((arrays[key] for key in _LATENCY_KEYS if key in arrays), None)
    if latency is not None:
        candidates.append([ok and value > 0 for ok, value in zip(no_error, latency, strict=True)])
    return next((mask for mask in candidates if sum(mask) == completed), None)


def read_requests(values: dict[str, Any], completed: int | None) -> Requests | str | None:
    """The successful requests of a result object; a reason (str) when its arrays cannot be
    used; None when it has no per-request timing arrays at all."""
    arrays = _arrays(values)
    if not any(key in arrays for key in ("ttfts", *_LATENCY_KEYS)):
        return None
    problem = _shape_problem(arrays)
    if problem is not None:
        return problem
    sent = len(next(iter(arrays.values())))
    mask = _success_mask(arrays, completed) if completed is not None else None
    if mask is None:
        return f"no reading of their {sent} entries counts the file's {completed} completed requests"

    def kept(key: str) -> list[Any] | None:
        return [item for item, ok in zip(arrays[key], mask, strict=True) if ok] if key in arrays else None

    latency_key = next((key for key in _LATENCY_KEYS if key in arrays), None)
    return Requests(
        sent=sent,
        ttft_s=kept("ttfts"),
        itl_s=kept("itls"),
        output_len=kept("output_lens"),
        latency_s=kept(latency_key) if latency_key else None,
        arrays=tuple(arrays),
    )


def _family(prefix: str, samples: Sequence[float], stats: Sequence[tuple[str, float]]) -> dict[str, float]:
    return {f"{prefix}_{stat}": value for stat, value in summarize(samples, stats).items()} if samples else {}


def _latency(requests: Requests) -> tuple[list[float] | None, bool]:
    """Per-request latency in s and whether it is the tool's own (else ttft + sum(itls))."""
    if requests.latency_s is not None:
        return requests.latency_s, True
    if requests.ttft_s is not None and requests.itl_s is not None:
        pairs = zip(requests.ttft_s, requests.itl_s, strict=True)
        return [ttft + math.fsum(gaps) for ttft, gaps in pairs], False
    return None, False


def _decode_stats(requests: Requests, latency: list[float]) -> dict[str, float]:
    """TPOT and per-user TPS, which need output lengths besides latency."""
    if requests.output_len is None:
        return {}
    out: dict[str, float] = {}
    if requests.ttft_s is not None:
        tpot = [
            (total - ttft) / (n - 1) * 1000.0
            for total, ttft, n in zip(latency, requests.ttft_s, requests.output_len, strict=True)
            if n > 1
        ]
        out.update(_family("tpot_ms", tpot, LATENCY_PERCENTILES))
    rates = [n / total for total, n in zip(latency, requests.output_len, strict=True) if total > 0]
    out.update(_family("tps_per_user", rates, RATE_PERCENTILES))
    return out


def request_stats(requests: Requests) -> RequestStats:
    """Every statistic the arrays of `requests` give, in schema columns and units."""
    values: dict[str, float] = {}
    if requests.ttft_s is not None:
        values.update(_family("ttft_ms", [t * 1000.0 for t in requests.ttft_s], LATENCY_PERCENTILES))
    if requests.output_len is not None and requests.output_len:
        values["output_len"] = mean([float(n) for n in requests.output_len])
    if requests.itl_s is not None:
        pooled = [gap * 1000.0 for gaps in requests.itl_s for gap in gaps]
        values.update(_family("itl_ms", pooled, LATENCY_PERCENTILES))
    latency, measured = _latency(requests)
    built_on_latency: dict[str, float] = {}
    if latency is not None:
        built_on_latency.update(_family("latency_s", latency, LATENCY_PERCENTILES))
        built_on_latency.update(_decode_stats(requests, latency))
    values.update(built_on_latency)
    kept = len(requests.ttft_s or requests.latency_s or [])
    note = f"per-request arrays {', '.join(requests.arrays)}: {kept} successful of {requests.sent} sent"
    if latency is not None and not measured:
        note += "; latency = ttft + sum(itls), the time to the last streamed chunk (no per-request latency)"
    derived = frozenset() if measured else frozenset(built_on_latency)
    return RequestStats(values=values, derived=derived, note=note)


def contradiction(stats: RequestStats, printed: dict[str, Any]) -> str | None:
    """Why the arrays do not describe the printed summary (its mean TTFT or latency), or None."""
    for column, scale, unit in (("ttft_ms_mean", 1.0, "ms"), ("latency_s_mean", 1000.0, "ms")):
        if column in stats.derived:
            continue
        ours, theirs = stats.values.get(column), printed.get(column)
        if ours is None or theirs is None:
            continue
        if abs(ours - theirs) * scale > _TOLERANCE_MS + 1e-6 * abs(theirs) * scale:
            name = column.removesuffix("_mean").split("_")[0].upper()
            ours_text, theirs_text = f"{ours * scale:.2f} {unit}", f"{theirs * scale:.2f} {unit}"
            return f"their mean {name} {ours_text} is not the file's {theirs_text}"
    return None


def fill_from_arrays(record: dict[str, Any], values: dict[str, Any]) -> None:
    """Fill the statistics `record` lacks from the result object's per-request arrays.

    The file's printed statistics are kept; filled columns are listed in `computed` (exact
    per-request statistics) or `derived` (built on ttft + sum(itls)); `per_request` says what was
    read, or why the arrays were not used.
    """
    requests = read_requests(values, record.get("num_requests"))
    if requests is None:
        return
    if isinstance(requests, str):
        record["per_request"] = f"per-request arrays not used: {requests}"
        return
    stats = request_stats(requests)
    problem = contradiction(stats, record)
    if problem is not None:
        record["per_request"] = f"per-request arrays not used: {problem}"
        return
    computed = [c for c in (record.get("computed") or "").split(",") if c]
    derived = [c for c in (record.get("derived") or "").split(",") if c]
    for column, value in stats.values.items():
        if record.get(column) is None:
            record[column] = value
            (derived if column in stats.derived else computed).append(column)
    if any(column.startswith("tps_per_user_") for column in computed + derived):
        record["tps_per_user_definition"] = "tokens_over_e2e"
    record["computed"] = ",".join(computed) or None
    record["derived"] = ",".join(derived) or None
    record["per_request"] = stats.note
