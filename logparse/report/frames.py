"""Thin adapters: the tidy frames each chart encodes, taken from the analysis and bench layers.

Nothing here measures anything new. Figures come from `logparse.analysis` (phases, stable
windows, degradation, spec, cold start, diagnostics) and `logparse.bench` (SLO matrix, capacity,
aggregate output, spec speedup); these functions select, rename, reshape and label them. Raw
time series (the per-sample queue, KV usage, spec acceptance lines) are columns selected from
the ingest tables or the analysis' sample frame.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from logparse.analysis.analyze import Analysis
    from logparse.bench.analyze import BenchAnalysis

MAX_POINTS = 1500  # per time series in a chart: keeps the page and the PNGs small


@dataclass
class LogRun:
    """One log of the report: its ingest tables and its post-mortem (None when analysis failed)."""

    path: str
    name: str
    engine: str
    tables: Mapping[str, pl.DataFrame]
    analysis: Analysis | None
    error: str | None = None


# -- helpers -------------------------------------------------------------------------------------


def rank_key(rank: str | None) -> tuple[Any, ...]:
    """Natural sort key for rank labels (`TP2` before `TP10`; the server row first)."""
    if rank is None or rank == "server":
        return (0,)
    parts = re.split(r"(\d+)", rank)
    return (1, *[(0, int(p)) if p.isdigit() else (1, p) for p in parts if p])


def thin(frame: pl.DataFrame, *, max_points: int = MAX_POINTS) -> pl.DataFrame:
    """Every k-th row so that at most about `max_points` rows remain (first and last kept)."""
    if frame.height <= max_points:
        return frame
    step = -(-frame.height // max_points)
    idx = sorted({*range(0, frame.height, step), frame.height - 1})
    return frame[idx]


def gap_segments(frame: pl.DataFrame, gap_s: float | None, *, time: str = "time") -> pl.DataFrame:
    """`frame` (sorted by `time`) with ``segment``: a number that goes up after every silence
    longer than `gap_s` (the analysis' idle gap), so a chart breaks its line there instead of
    holding the last value across a time the engine printed nothing (SGLang prints no line when
    idle; vLLM stops its stats lines)."""
    if gap_s is None or frame.is_empty():
        return frame.with_columns(pl.lit(0, dtype=pl.Int64).alias("segment"))
    gap = pl.col(time).diff().dt.total_seconds(fractional=True).fill_null(0.0) > gap_s
    return frame.with_columns(gap.cast(pl.Int64).cum_sum().alias("segment"))


def idle_gap(run: LogRun) -> float | None:
    """The silence the analysis reads as idle in this log (`analysis.phases.default_idle_gap`)."""
    if run.analysis is None:
        return None
    gap = run.analysis.options.get("idle_gap_s")
    return None if gap is None else float(gap)


def gap_note(run: LogRun) -> str:
    """What a gap in the run's time series means, for a chart's subtitle."""
    gap = idle_gap(run)
    if gap is None:
        return "lines join every printed sample"
    return f"a gap: no line for more than {gap:g} s (idle, as the phases count it)"


def tokens_label(tokens: float | None) -> str:
    """`64K` for 65,536 or 64,000, `200K` for 200,000 (`analysis.text.tokens_label`, as the
    analysis tables label input lengths)."""
    from logparse.analysis.text import tokens_label as label

    return "?" if tokens is None else label(round(float(tokens)))


def phase_labels(phases: pl.DataFrame) -> pl.DataFrame:
    """``phase`` and ``phase_label`` (``phase 2 (N=10, 200K)``) per phase."""
    if phases.is_empty():
        return pl.DataFrame(schema={"phase": pl.Int64(), "phase_label": pl.String()})
    labels = []
    for row in phases.iter_rows(named=True):
        parts = [f"N={row['concurrency']}"] if row.get("concurrency") is not None else []
        if row.get("input_tokens") is not None:
            parts.append(
                ("~" if row.get("input_tokens_estimated") else "") + tokens_label(row["input_tokens"])
            )
        labels.append(f"phase {row['phase']}" + (f" ({', '.join(parts)})" if parts else ""))
    return pl.DataFrame({"phase": phases.get_column("phase"), "phase_label": labels})


def _col(frame: pl.DataFrame | None, name: str, dtype: pl.DataType) -> pl.Expr:
    if frame is not None and name in frame.columns:
        return pl.col(name).cast(dtype)
    return pl.lit(None, dtype=dtype).alias(name)


def _table(tables: Mapping[str, pl.DataFrame], kind: str) -> pl.DataFrame | None:
    frame = tables.get(kind)
    return None if frame is None or frame.is_empty() else frame


# -- degradation ---------------------------------------------------------------------------------


def degradation_frame(runs: Sequence[LogRun]) -> pl.DataFrame:
    """Trusted stable windows of every log (`analysis.compare.compare_rows`), one row per window.

    Columns: ``series`` (the engine; with N when the engine ran several N; with the log name when
    two logs of one series share a context length), ``source``, ``engine``, ``phase``,
    ``input_tokens``, ``input_tokens_estimated``, ``context_label`` (`compare_rows`'
    ``input_label``: close lengths share one), ``context_tick`` (where that label's axis tick
    goes), ``concurrency``, ``per_request_tps``,
    ``per_request_tps_peak``, ``ms_per_token``, ``gen_tps_mean``, ``samples``, ``n_label``.
    """
    from logparse.analysis.compare import compare_rows

    analyses = [r.analysis for r in runs if r.analysis is not None]
    rows = compare_rows(analyses) if analyses else None
    schema = {
        "series": pl.String(),
        "source": pl.String(),
        "engine": pl.String(),
        "phase": pl.Int64(),
        "input_tokens": pl.Int64(),
        "input_tokens_estimated": pl.Boolean(),
        "context_label": pl.String(),
        "context_tick": pl.Int64(),
        "concurrency": pl.Int64(),
        "per_request_tps": pl.Float64(),
        "per_request_tps_peak": pl.Float64(),
        "ms_per_token": pl.Float64(),
        "gen_tps_mean": pl.Float64(),
        "samples": pl.Int64(),
        "n_label": pl.String(),
    }
    if rows is None:
        return pl.DataFrame(schema=schema)
    frame = rows.filter(
        pl.col("trusted").fill_null(False)
        & pl.col("input_tokens").is_not_null()
        & pl.col("per_request_tps").is_not_null()
    )
    # One line per engine; per engine and N when an engine ran several N (per-request speed
    # depends on N too); per log as well when two logs of one line share a context length.
    # (Only when some N of the engine was run at two context lengths: otherwise every line would
    # be a single point.)
    per_n = frame.group_by("engine", "concurrency").agg(pl.col("input_label").n_unique().alias("_ctx"))
    several_n = (
        per_n.group_by("engine")
        .agg(pl.len().alias("_n"), pl.col("_ctx").max().alias("_ctx"))
        .filter((pl.col("_n") > 1) & (pl.col("_ctx") > 1))
    ).get_column("engine")
    frame = frame.with_columns(
        pl.when(pl.col("engine").is_in(several_n.to_list()))
        .then(pl.format("{} N={}", "engine", "concurrency"))
        .otherwise(pl.col("engine"))
        .alias("series")
    )
    clash = frame.group_by("series", "input_label").agg(pl.col("source").n_unique().alias("_n"))
    split = clash.filter(pl.col("_n") > 1).get_column("series").to_list()
    frame = frame.with_columns(
        pl.when(pl.col("series").is_in(split))
        .then(pl.format("{} {}", "series", "source"))
        .otherwise(pl.col("series"))
        .alias("series"),
        pl.col("input_label").alias("context_label"),
        # One axis tick per label, at the label's shortest input length.
        pl.col("input_tokens").min().over("input_label").alias("context_tick"),
        pl.format("N={}", "concurrency").alias("n_label"),
    )
    return frame.select(list(schema)).cast(schema).sort("series", "input_tokens")  # type: ignore[arg-type]


def degradation_ratios(frame: pl.DataFrame) -> pl.DataFrame:
    """`analysis.degradation.degradation` per series over the windows of `degradation_frame`."""
    from logparse.analysis.degradation import degradation

    return degradation(frame, by="series", label="source")


# -- per-log time series ---------------------------------------------------------------------------


def timeline_frames(run: LogRun) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(samples, windows, events) for `decode_timeline_chart`.

    samples: ``time``, ``gen_tps``, ``running``, ``waiting``, ``phase``, ``stable``, ``segment``
    (`gap_segments`);
    windows: ``phase``, ``start``, ``end``, ``label``, ``gen_tps_mean``, ``trusted``;
    events: ``time``, ``event``, ``detail``, ``line_no`` within the plotted time range.
    """
    a = run.analysis
    assert a is not None
    samples = a.samples.filter(pl.col("time").is_not_null()).sort("time")
    series = samples.select(
        "time", "gen_tps", "running", "waiting", "phase", _col(samples, "stable", pl.Boolean())
    )
    if run.engine == "sglang" and not a.phases.is_empty():
        # SGLang prints no Decode line while it only prefills; its Prefill lines carry the queue.
        from logparse.analysis.phases import assign_phase
        from logparse.analysis.samples import prefill_lines

        pre = assign_phase(prefill_lines(run.tables), a.phases).filter(pl.col("phase").is_not_null())
        if not pre.is_empty():
            series = pl.concat(
                [
                    series,
                    pre.select(
                        pl.col("time").cast(pl.Datetime("us")),
                        pl.lit(None, dtype=pl.Float64).alias("gen_tps"),
                        pl.col("running_req").cast(pl.Int64).alias("running"),
                        pl.col("queue_req").cast(pl.Int64).alias("waiting"),
                        "phase",
                        pl.lit(False).alias("stable"),
                    ),
                ],
                how="vertical_relaxed",
            ).sort("time")
    series = thin(gap_segments(series, idle_gap(run)))
    # A window covers its first sample's interval too: shade from the sample before it.
    windows = a.windows.join(
        samples.select(pl.col("line_no").alias("first_line"), pl.col("interval_s").alias("_iv")),
        on="first_line",
        how="left",
    )
    windows = windows.select(
        "phase",
        (
            pl.col("start") - pl.duration(microseconds=(pl.col("_iv").fill_null(0.0) * 1e6).cast(pl.Int64))
        ).alias("start"),
        "end",
        pl.format(
            "stable N={}{}",
            "concurrency",
            pl.when(pl.col("trusted")).then(pl.lit("")).otherwise(pl.lit(" (untrusted)")),
        ).alias("label"),
        "gen_tps_mean",
        "trusted",
    )
    events = events_frame(run)
    if not samples.is_empty() and not events.is_empty():
        step = float(samples.get_column("interval_s").drop_nulls().median() or 10.0)  # type: ignore[arg-type]
        lo = samples.get_column("time").min() - dt.timedelta(seconds=2 * step)  # type: ignore[operator]
        hi = samples.get_column("time").max() + dt.timedelta(seconds=step)  # type: ignore[operator]
        events = events.filter(pl.col("time").is_between(lo, hi))
    return series, windows, events


def events_frame(run: LogRun) -> pl.DataFrame:
    """OOM, preemption / retraction and runtime JIT events with a time: ``time``, ``event``,
    ``detail``, ``line_no``."""
    from logparse.analysis.coldstart import ready_time
    from logparse.analysis.diagnostics import runtime_jit

    a = run.analysis
    tables = run.tables
    parts: list[pl.DataFrame] = []
    schema = {"time": pl.Datetime("us"), "event": pl.String(), "detail": pl.String(), "line_no": pl.Int64()}
    oom = _table(tables, "oom")
    if oom is not None:
        parts.append(
            oom.select(
                pl.col("time").cast(pl.Datetime("us")),
                pl.when(_col(oom, "recovered", pl.Boolean()).fill_null(False))
                .then(pl.lit("OOM (recovered)"))
                .otherwise(pl.lit("OOM"))
                .alias("event"),
                _col(oom, "detail", pl.String()).alias("detail"),
                pl.col("line_no").cast(pl.Int64),
            )
        )
    pre = _table(tables, "preemption")
    if pre is not None:
        mode = _col(pre, "mode", pl.String()).fill_null("")
        parts.append(
            pre.select(
                pl.col("time").cast(pl.Datetime("us")),
                pl.when(mode.str.to_lowercase().str.contains("retract"))
                .then(pl.lit("retraction"))
                .otherwise(pl.lit("preemption"))
                .alias("event"),
                pl.format("{} request(s) {}", _col(pre, "count", pl.Int64()).fill_null(1), mode).alias(
                    "detail"
                ),
                pl.col("line_no").cast(pl.Int64),
            )
        )
    if a is not None and not a.samples.is_empty():
        s = a.samples
        for column, event in (("preemptions", "preemption"), ("retracted", "retraction")):
            if column in s.columns:
                hit = s.filter(pl.col(column).fill_null(0) > 0)
                if not hit.is_empty():
                    parts.append(
                        hit.select(
                            pl.col("time").cast(pl.Datetime("us")),
                            pl.lit(event).alias("event"),
                            pl.format("{} in the stats line", pl.col(column)).alias("detail"),
                            pl.col("line_no").cast(pl.Int64),
                        )
                    )
        # Every JIT line with a time; the timeline keeps those inside its time range, and the
        # diagnostics (`runtime_jit`) say which ones count as runtime compilation.
        jit = _table(tables, "jit_compile")
        if jit is not None and not runtime_jit(tables, ready=ready_time(tables), phases=a.phases).is_empty():
            jit = runtime_jit(tables, ready=ready_time(tables), phases=a.phases)
        if jit is not None and not jit.is_empty():
            parts.append(
                jit.select(
                    pl.col("time").cast(pl.Datetime("us")),
                    pl.lit("JIT compile").alias("event"),
                    _col(jit, "what", pl.String()).alias("detail"),
                    pl.col("line_no").cast(pl.Int64),
                )
            )
    if not parts:
        return pl.DataFrame(schema=schema)
    return (
        pl.concat([p.cast(schema) for p in parts])  # type: ignore[arg-type]
        .filter(pl.col("time").is_not_null())
        .sort("time", "line_no")
    )


def kv_frames(run: LogRun) -> tuple[pl.DataFrame, pl.DataFrame, str] | None:
    """(usage, pool, unit) for `kv_usage_chart`, or None when the log reports no KV usage.

    usage: ``time``, ``used``, ``running``, ``kv_tokens``, ``segment`` (a silence longer than
    the idle gap is a gap in the chart: SGLang prints no Decode line while idle).

    The engines print usage as a share of the pool (vLLM `GPU KV cache usage`, SGLang `token
    usage`); that share is drawn, against the pool at 100 % labelled with its size in tokens.
    Token counts in the lines are not comparable across engines (SGLang with DCP counts the
    virtual token space), so they are kept for the tooltip only.
    """
    a = run.analysis
    if a is None or a.samples.is_empty():
        return None
    s = a.samples.filter(pl.col("time").is_not_null() & pl.col("kv_usage").is_not_null()).sort("time")
    if s.is_empty():
        return None
    pool = a.startup.get("kv_pool_tokens")
    label = f"KV pool: {int(pool):,} tokens" if pool else "KV pool (size not printed)"
    usage = s.select("time", pl.col("kv_usage").alias("used"), "running", "kv_tokens")
    usage = thin(gap_segments(usage, idle_gap(run)))
    return usage, pl.DataFrame({"pool": [1.0], "label": [label]}), "fraction"


def prefill_frame(run: LogRun) -> pl.DataFrame:
    """Prefill chunks inside phases (SGLang, `analysis.prefill`) of the requests prefilled in two
    or more chunks, with ``phase_label``."""
    a = run.analysis
    if a is None or a.chunks.is_empty() or "phase" not in a.chunks.columns:
        return pl.DataFrame(
            schema={
                "request": pl.Int64(),
                "chunk": pl.Int64(),
                "cached_tokens": pl.Int64(),
                "input_tps": pl.Float64(),
                "new_token": pl.Int64(),
                "phase": pl.Int64(),
                "phase_label": pl.String(),
            }
        )
    chunks = a.chunks.filter(
        pl.col("phase").is_not_null()
        & pl.col("input_tps").is_not_null()
        & pl.col("cached_tokens").is_not_null()
    ).sort("line_no")
    # A prompt that fit in one chunk draws no curve.
    chunks = chunks.filter(pl.len().over("request") >= 2)
    # A chunk that also starts the next prompt (#new-seq > 1) is shared: its throughput is not
    # this request's alone.
    kind = (
        pl.when(_col(chunks, "new_seq", pl.Int64()).fill_null(1) > 1)
        .then(pl.lit("shared with the next request"))
        .otherwise(pl.lit("this request only"))
        .alias("chunk_kind")
    )
    return chunks.join(phase_labels(a.phases), on="phase", how="left").select(
        "request", "chunk", "cached_tokens", "input_tps", "new_token", "phase", "phase_label", kind, "line_no"
    )


def spec_frames(run: LogRun) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(acceptance over time, per-position rates, drafted vs accepted) for the spec charts.

    acceptance: ``time``, ``accept_len``, ``phase_label`` (vLLM `SpecDecoding metrics` lines or
    SGLang Decode lines inside phases); positions: ``phase_label``, ``position``, ``rate``;
    draft: ``phase_label``, ``measure``, ``tps``, ``label``.
    """
    a = run.analysis
    assert a is not None
    labels = phase_labels(a.phases)
    empty_acc = pl.DataFrame(
        schema={"time": pl.Datetime("us"), "accept_len": pl.Float64(), "phase_label": pl.String()}
    )
    acc = empty_acc
    if run.engine == "vllm":
        spec = _table(run.tables, "spec_decode")
        if spec is not None and "mean_accept_len" in spec.columns:
            from logparse.analysis.phases import assign_phase_by_time

            lines = assign_phase_by_time(
                spec.filter(pl.col("mean_accept_len").is_not_null()), a.phases, slack_s=2.0
            )
            acc = (
                lines.filter(pl.col("phase").is_not_null())
                .join(labels, on="phase", how="left")
                .select(
                    pl.col("time").cast(pl.Datetime("us")),
                    pl.col("mean_accept_len").alias("accept_len"),
                    "phase_label",
                )
            )
    elif "accept_len" in a.samples.columns:
        acc = (
            a.samples.filter(pl.col("accept_len").is_not_null() & pl.col("phase").is_not_null())
            .join(labels, on="phase", how="left")
            .select(pl.col("time").cast(pl.Datetime("us")), "accept_len", "phase_label")
        )
    acc = thin(acc.sort("time"))
    spec = a.spec.join(labels, on="phase", how="left")
    positions = pl.DataFrame(
        schema={"phase_label": pl.String(), "position": pl.Int64(), "rate": pl.Float64()}
    )
    with_pos = spec.filter(pl.col("per_position").is_not_null())
    if not with_pos.is_empty():
        positions = (
            with_pos.select("phase_label", pl.col("per_position").alias("rate"))
            .with_columns(pl.int_ranges(1, pl.col("rate").list.len() + 1).alias("position"))
            .explode("rate", "position")
            .select("phase_label", pl.col("position").cast(pl.Int64), pl.col("rate").cast(pl.Float64))
        )
    draft = spec.filter(pl.col("drafted_tps").is_not_null() | pl.col("accepted_tps").is_not_null())
    rejected = (
        pl.when(pl.col("wasted_draft_pct").is_not_null())
        .then(pl.format(" ({}% of drafts rejected)", pl.col("wasted_draft_pct").round(0).cast(pl.Int64)))
        .otherwise(pl.lit(""))
    )
    draft = pl.concat(
        [
            draft.select(
                "phase_label",
                pl.lit("drafted").alias("measure"),
                pl.col("drafted_tps").alias("tps"),
                pl.format("{} drafted", pl.col("drafted_tps").round(1)).alias("label"),
            ),
            draft.select(
                "phase_label",
                pl.lit("accepted").alias("measure"),
                pl.col("accepted_tps").alias("tps"),
                pl.format("{} accepted{}", pl.col("accepted_tps").round(1), rejected).alias("label"),
            ),
        ]
    ).filter(pl.col("tps").is_not_null())
    return acc, positions, draft


# -- cold start and memory -----------------------------------------------------------------------

_STAGE_NAMES = {
    "weight_load": "weight loading",
    "compile": "compile / JIT",
    "kv_allocation": "KV allocation",
    "cuda_graph": "CUDA graph capture",
}


def coldstart_frames(run: LogRun) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(spans, instants) for `coldstart_chart` from `analysis.coldstart.timeline`.

    A stage that printed its duration becomes a span ending at its line; KV allocation and the
    server's ready time are instants. Ranks that printed nothing of their own are ``server``.
    """
    a = run.analysis
    span_schema = {
        "rank": pl.String(),
        "stage": pl.String(),
        "start_s": pl.Float64(),
        "end_s": pl.Float64(),
        "seconds": pl.Float64(),
        "detail": pl.String(),
    }
    inst_schema = {"rank": pl.String(), "stage": pl.String(), "at_s": pl.Float64(), "detail": pl.String()}
    if a is None or a.timeline.is_empty():
        return pl.DataFrame(schema=span_schema), pl.DataFrame(schema=inst_schema)
    tl = a.timeline.with_columns(pl.col("rank").fill_null("server"))
    spans = []
    for row in tl.iter_rows(named=True):
        stage, secs, end = row["stage"], row["seconds"], row["since_start_s"]
        if end is None:
            continue
        name = _STAGE_NAMES.get(stage) or (
            "engine init" if stage == "init_engine" else (stage or "").replace("_", " ").strip() or None
        )
        if name is None or secs is None or stage == "kv_allocation" or stage == "weight_begin":
            continue
        spans.append(
            {
                "rank": row["rank"],
                "stage": name,
                "start_s": max(0.0, end - secs),
                "end_s": end,
                "seconds": secs,
                "detail": row["detail"],
            }
        )
    frame = pl.DataFrame(spans, schema=span_schema, orient="row")
    if "weight loading" not in frame.get_column("stage").to_list():
        frame = pl.concat([frame, _sglang_weight_spans(run, tl)])
    if "weight loading" not in frame.get_column("stage").to_list():
        frame = pl.concat([frame, _stamped_weight_spans(tl)])
    # vLLM prints one load twice on a rank ("Loading weights took", "Model loading took") and
    # SGLang a second, empty load for the draft model: one weight-loading span per rank, the longest.
    frame = frame.filter(pl.col("seconds") > 0).sort("seconds", descending=True)
    frame = pl.concat(
        [
            frame.filter(pl.col("stage") == "weight loading").unique(["rank"], keep="first"),
            frame.filter(pl.col("stage") != "weight loading"),
        ]
    )
    inst = []
    for row in tl.filter(pl.col("stage") == "kv_allocation").iter_rows(named=True):
        if row["since_start_s"] is not None:
            inst.append(
                {
                    "rank": row["rank"],
                    "stage": "KV allocation",
                    "at_s": row["since_start_s"],
                    "detail": row["detail"],
                }
            )
    ready = a.startup.get("ready_s")
    if ready is not None:
        inst.append({"rank": "server", "stage": "ready", "at_s": float(ready), "detail": None})
    ranks = sorted(set(frame.get_column("rank").to_list()) | {i["rank"] for i in inst}, key=rank_key)
    order = {r: i for i, r in enumerate(ranks)}
    frame = frame.sort(pl.col("rank").replace_strict(order, default=len(order)), "start_s")
    instants = pl.DataFrame(inst, schema=inst_schema, orient="row")
    return frame, instants


def _stamped_weight_spans(timeline: pl.DataFrame) -> pl.DataFrame:
    """Weight loading of a rank whose lines print no duration (or print it on an unstamped
    progress bar): from its `Load weight begin` line to the next end of loading, by their stamps."""
    schema = {
        "rank": pl.String(),
        "stage": pl.String(),
        "start_s": pl.Float64(),
        "end_s": pl.Float64(),
        "seconds": pl.Float64(),
        "detail": pl.String(),
    }
    marks = timeline.filter(
        pl.col("stage").is_in(["weight_begin", "weight_load", "model_load"])
        & pl.col("since_start_s").is_not_null()
    ).sort("line_no")
    rows = []
    begun: dict[str, float] = {}
    for row in marks.iter_rows(named=True):
        if row["stage"] == "weight_begin":
            begun[row["rank"]] = row["since_start_s"]
        elif row["rank"] in begun:
            start = begun.pop(row["rank"])
            rows.append(
                {
                    "rank": row["rank"],
                    "stage": "weight loading",
                    "start_s": start,
                    "end_s": row["since_start_s"],
                    "seconds": row["since_start_s"] - start,
                    "detail": "from the stamps of its begin and end lines",
                }
            )
    return pl.DataFrame(rows, schema=schema, orient="row")


def _sglang_weight_spans(run: LogRun, timeline: pl.DataFrame) -> pl.DataFrame:
    """SGLang `Load weight end. elapsed=…` lines land in the memory table: weight-loading spans."""
    schema = {
        "rank": pl.String(),
        "stage": pl.String(),
        "start_s": pl.Float64(),
        "end_s": pl.Float64(),
        "seconds": pl.Float64(),
        "detail": pl.String(),
    }
    mem = _table(run.tables, "memory")
    if mem is None or "load_s" not in mem.columns:
        return pl.DataFrame(schema=schema)
    from logparse.analysis.coldstart import start_time

    start = start_time(run.tables)
    rows = mem.filter((pl.col("load_s").fill_null(0) > 0) & pl.col("time").is_not_null())
    if rows.is_empty() or start is None:
        return pl.DataFrame(schema=schema)
    end = (pl.col("time") - pl.lit(start)).dt.total_seconds(fractional=True)
    return rows.select(
        pl.col("rank").fill_null("server"),
        pl.lit("weight loading").alias("stage"),
        (end - pl.col("load_s")).clip(lower_bound=0.0).alias("start_s"),
        end.alias("end_s"),
        pl.col("load_s").cast(pl.Float64).alias("seconds"),
        _col(rows, "weights_gib", pl.String()).alias("detail"),
    ).cast(schema)  # type: ignore[arg-type]


_MAMBA_COLUMNS = (
    "conv_state_gb",
    "ssm_state_gb",
    "intermediate_ssm_state_cache_gb",
    "intermediate_conv_window_cache_gb",
)


def memory_frame(run: LogRun) -> pl.DataFrame:
    """GPU memory per rank and component (GiB): ``rank``, ``component``, ``gib``, ``order``.

    Per rank, from what that rank printed: weights (vLLM profiling summary or "Model loading
    took"; SGLang "Load weight end", target and draft), KV cache (vLLM summary / "Available KV
    cache memory"; SGLang K + V sizes, target and draft), Mamba / SSM state (SGLang "Mamba Cache
    is allocated", all its buffers), CUDA graphs, peak activation, non-torch memory, and free:
    the device total minus the rest when the total is printed (vLLM), else SGLang's last
    "avail mem" after graph capture. SGLang's "GB" is bytes / 2^30, so GiB like vLLM's figures.
    """
    from logparse.charts.memory import COMPONENT_ORDER

    t = run.tables
    per: dict[str, dict[str, float]] = {}

    def put(rank: str | None, component: str, value: Any, *, add: bool = False) -> None:
        if value is None:
            return
        slot = per.setdefault(rank or "server", {})
        if add:
            slot[component] = slot.get(component, 0.0) + float(value)
        elif component not in slot:
            slot[component] = float(value)

    total: dict[str, float] = {}
    mem = _table(t, "memory")
    if mem is not None:
        cols = {
            c: _col(mem, c, pl.Float64())
            for c in (
                "weights_gib",
                "kv_gib",
                "graph_gib",
                "peak_activation_gib",
                "non_torch_gib",
                "total_gpu_gib",
                "avail_gib",
            )
        }
        frame = mem.select(
            "line_no",
            "rank",
            _col(mem, "phase", pl.String()).alias("phase"),
            _col(mem, "model_type", pl.String()).alias("model_type"),
            *cols.values(),
        ).sort("line_no")
        loads = frame.filter(
            pl.col("phase").fill_null("").str.contains("load_weight_end")
            & pl.col("weights_gib").is_not_null()
        )
        for row in loads.iter_rows(named=True):
            first = loads.filter(pl.col("rank").eq_missing(row["rank"])).get_column("line_no").min()
            put(
                row["rank"],
                "weights" if row["line_no"] == first else "draft weights",
                row["weights_gib"],
                add=True,
            )
        summary = frame.filter(~pl.col("phase").fill_null("").str.contains("load_weight"))
        for row in summary.iter_rows(named=True):
            put(row["rank"], "weights", row["weights_gib"])
            put(row["rank"], "KV cache", row["kv_gib"])
            put(row["rank"], "CUDA graphs", row["graph_gib"])
            put(row["rank"], "activation (peak)", row["peak_activation_gib"])
            put(row["rank"], "non-torch", row["non_torch_gib"])
            if row["total_gpu_gib"] is not None:
                total[row["rank"] or "server"] = float(row["total_gpu_gib"])
    wl = _table(t, "weight_load")
    if wl is not None and "gib" in wl.columns:
        for row in wl.filter(pl.col("gib").is_not_null()).sort("line_no").iter_rows(named=True):
            put(row["rank"], "weights", row["gib"])
    kv = _table(t, "kv_pool")
    if kv is not None:
        state = [c for c in _MAMBA_COLUMNS if c in kv.columns]
        if state:
            for row in (
                kv.filter(pl.any_horizontal(pl.col(state).is_not_null()))
                .sort("line_no")
                .iter_rows(named=True)
            ):
                put(row["rank"], "Mamba / SSM state", sum(float(row[c] or 0.0) for c in state))
            kv = kv.filter(~pl.any_horizontal(pl.col(state).is_not_null()))
        kvf = kv.select(
            "line_no", "rank", *[_col(kv, c, pl.Float64()) for c in ("kv_gib", "k_gb", "v_gb", "kv_gb")]
        )
        seen: set[str] = set()
        for row in kvf.sort("line_no").iter_rows(named=True):
            rank = row["rank"] or "server"
            size = row["kv_gib"] if row["kv_gib"] is not None else row["kv_gb"]
            if size is None and (row["k_gb"] is not None or row["v_gb"] is not None):
                size = (row["k_gb"] or 0.0) + (row["v_gb"] or 0.0)
            if size is None:
                continue
            put(rank, "KV cache" if rank not in seen else "draft KV cache", size)
            seen.add(rank)
    graphs = _table(t, "cuda_graph")
    last_avail: dict[str, float] = {}
    if graphs is not None:
        gf = graphs.select(
            "line_no",
            "rank",
            _col(graphs, "phase", pl.String()).alias("phase"),
            *[_col(graphs, c, pl.Float64()) for c in ("gib", "mem_usage_gib", "avail_gib")],
        )
        ends = gf.filter(pl.col("phase").fill_null("") == "end").sort("line_no")
        captured: dict[str, float] = {}
        for row in ends.iter_rows(named=True):
            rank = row["rank"] or "server"
            size = row["mem_usage_gib"] if row["mem_usage_gib"] is not None else row["gib"]
            if size is not None:
                captured[rank] = captured.get(rank, 0.0) + float(size)
            if row["avail_gib"] is not None:
                last_avail[rank] = float(row["avail_gib"])
        for rank, size in captured.items():
            put(rank, "CUDA graphs", size)
    rows = []
    for rank, comps in per.items():
        if rank in total:
            used = sum(comps.values())
            if total[rank] > used:
                comps["free"] = total[rank] - used
        elif rank in last_avail and "free" not in comps:
            comps["free"] = last_avail[rank]
        for comp, gib in comps.items():
            if gib <= 0:
                continue
            rows.append(
                {
                    "rank": rank,
                    "component": comp,
                    "gib": gib,
                    "order": COMPONENT_ORDER.index(comp) if comp in COMPONENT_ORDER else 99,
                }
            )
    frame = pl.DataFrame(
        rows,
        schema={"rank": pl.String(), "component": pl.String(), "gib": pl.Float64(), "order": pl.Int64()},
        orient="row",
    )
    # A rank row needs more than a lone figure to be a split; "server" rows only if nothing else.
    keep = (
        frame.group_by("rank")
        .agg(pl.len().alias("_n"))
        .filter(pl.col("_n") >= 2)
        .get_column("rank")
        .to_list()
    )
    frame = frame.filter(pl.col("rank").is_in(keep))
    ranks = sorted(set(frame.get_column("rank").to_list()), key=rank_key)
    if len(ranks) > 1 and "server" in ranks:
        frame = frame.filter(pl.col("rank") != "server")
        ranks.remove("server")
    order = {r: i for i, r in enumerate(ranks)}
    return frame.sort(pl.col("rank").replace_strict(order, default=len(order)), "order")


# -- bench ---------------------------------------------------------------------------------------

BENCH_METRICS: list[tuple[str, str, float]] = [
    ("ttft_ms", "TTFT (ms)", 1.0),
    ("tpot_ms", "TPOT / per-request ITL (ms)", 1.0),
    ("itl_ms", "ITL, pooled chunk gaps (ms)", 1.0),
    ("tps_per_user", "TPS per user (tok/s)", 1.0),
    ("latency_s", "request latency (s)", 1.0),
]


def bench_metric_frame(bench: BenchAnalysis) -> pl.DataFrame:
    """Long table of the client metrics: ``config``, ``concurrency``, ``metric``, ``stat``
    (``mean`` / ``P90``), ``value``; metrics with no value in any row are left out."""
    rows = bench.rows.filter(pl.col("concurrency").is_not_null())
    parts = []
    for prefix, name, _ in BENCH_METRICS:
        for stat, label in (("mean", "mean"), ("p90", "P90")):
            column = f"{prefix}_{stat}"
            if column in rows.columns:
                parts.append(
                    rows.select(
                        "config",
                        "concurrency",
                        pl.lit(name).alias("metric"),
                        pl.lit(label).alias("stat"),
                        pl.col(column).alias("value"),
                    )
                )
    if not parts:
        return pl.DataFrame(
            schema={
                "config": pl.String(),
                "concurrency": pl.Int64(),
                "metric": pl.String(),
                "stat": pl.String(),
                "value": pl.Float64(),
            }
        )
    return pl.concat(parts).filter(pl.col("value").is_not_null())


def bench_slo_frame(bench: BenchAnalysis) -> pl.DataFrame:
    """The SLO thresholds as rules: ``metric``, ``threshold``, ``label``."""
    ttft = bench.settings.get("slo_ttft_ms")
    tps = bench.settings.get("slo_tps")
    rows = []
    if ttft is not None:
        rows.append({"metric": "TTFT (ms)", "threshold": float(ttft), "label": f"SLO ≤ {ttft:g} ms"})
    if tps is not None:
        rows.append(
            {"metric": "TPS per user (tok/s)", "threshold": float(tps), "label": f"SLO ≥ {tps:g} tok/s"}
        )
    return pl.DataFrame(
        rows, schema={"metric": pl.String(), "threshold": pl.Float64(), "label": pl.String()}, orient="row"
    )


def aggregate_frames(bench: BenchAnalysis) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(aggregate per config × concurrency, the peak per config with a label)."""
    agg = bench.aggregate.filter(pl.col("aggregate_tps").is_not_null()).select(
        "config", "concurrency", "aggregate_tps", "tps_per_user_mean", "output_throughput_tps"
    )
    peaks = bench.configs.filter(pl.col("peak_aggregate_tps").is_not_null()).select(
        "config",
        pl.col("peak_aggregate_concurrency").alias("concurrency"),
        pl.col("peak_aggregate_tps").alias("aggregate_tps"),
        pl.format("peak {} tok/s", pl.col("peak_aggregate_tps").round(0).cast(pl.Int64)).alias("label"),
    )
    return agg, peaks


def capacity_frame(bench: BenchAnalysis) -> pl.DataFrame:
    """Long table of C_max and users N per configuration and basis: ``config``, ``basis``,
    ``measure``, ``value``, ``latency_s``."""
    c = bench.configs
    parts = []
    for basis, label in (("p90", "P90"), ("mean", "mean")):
        for measure, column in (("C_max", f"c_max_{basis}"), ("users N", f"users_{basis}")):
            parts.append(
                c.select(
                    "config",
                    pl.lit(label).alias("basis"),
                    pl.lit(measure).alias("measure"),
                    pl.col(column).cast(pl.Float64).alias("value"),
                    pl.col(f"latency_s_mean_at_c_max_{basis}").alias("latency_s"),
                )
            )
    return pl.concat(parts)


def speedup_frames(bench: BenchAnalysis) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(speedup per pair × concurrency with ``series``, break-even per pair with a label)."""
    sp = bench.speedup.with_columns(
        pl.when(pl.col("label").is_not_null())
        .then(pl.format("{} {}", "engine", "label"))
        .otherwise(pl.col("engine"))
        .alias("series")
    )
    rows = []
    for s in bench.spec:
        series = s["engine"] if s.get("label") is None else f"{s['engine']} {s['label']}"
        if s.get("break_even_concurrency") is not None:
            lo, hi = s["break_even_between"]
            rows.append(
                {
                    "series": series,
                    "concurrency": float(s["break_even_concurrency"]),
                    "label": f"{series}: break-even c≈{s['break_even_concurrency']:.1f} ({lo}–{hi})",
                }
            )
    be = pl.DataFrame(
        rows, schema={"series": pl.String(), "concurrency": pl.Float64(), "label": pl.String()}, orient="row"
    )
    return sp.select("series", "concurrency", "ratio", "direct_tps", "spec_tps"), be


def slo_frame(bench: BenchAnalysis) -> pl.DataFrame:
    """SLO matrix cells: ``basis``, ``config``, ``concurrency``, ``status``, ``marks``, ``ttft_ms``,
    ``tps``, ``tps_stat``."""
    m = bench.slo
    tick = (
        pl.when(pl.col("ttft_ok").is_null())
        .then(pl.lit("–"))
        .when(pl.col("ttft_ok"))
        .then(pl.lit("✓"))
        .otherwise(pl.lit("✗"))
    )
    tick_tps = (
        pl.when(pl.col("tps_ok").is_null())
        .then(pl.lit("–"))
        .when(pl.col("tps_ok"))
        .then(pl.lit("✓"))
        .otherwise(pl.lit("✗"))
    )
    t, p = pl.col("ttft_ok"), pl.col("tps_ok")
    status = (
        pl.when(t.is_null() & p.is_null())
        .then(pl.lit("not judged"))
        .when(t.fill_null(True) & p.fill_null(True))
        .then(pl.lit("meets both SLOs"))
        .when(~t.fill_null(True) & ~p.fill_null(True))
        .then(pl.lit("both fail"))
        .when(~t.fill_null(True))
        .then(pl.lit("TTFT fails"))
        .otherwise(pl.lit("TPS fails"))
    )
    return m.select(
        pl.col("basis").replace({"p90": "P90"}),
        "config",
        "concurrency",
        status.alias("status"),
        pl.concat_str([tick, tick_tps]).alias("marks"),
        "ttft_ms",
        "tps",
        "tps_stat",
    )
