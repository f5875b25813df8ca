"""The frames of the charts that overlay several runs: decode throughput from each phase's start,
and prefill chunk throughput against the cached context, with the captions that state them.

Like `frames`, nothing here measures anything new: the samples, phases, stable windows and
prefill chunks are the analysis' own; these functions align them (seconds since the phase's
start), name the lines and say which runs could not be drawn and why.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from logparse.report.frames import LogRun, gap_segments, idle_gap, prefill_frame, thin

MAX_POINTS_PER_LINE = 600  # the overlay holds every run: keep each line light

DECODE_SCHEMA: dict[str, pl.DataType] = {
    "run": pl.String(),
    "source": pl.String(),
    "phase": pl.Int64(),
    "since_start_s": pl.Float64(),
    "gen_tps": pl.Float64(),
    "running": pl.Int64(),
    "waiting": pl.Int64(),
    "stable": pl.Boolean(),
    "segment": pl.Int64(),
    "time": pl.Datetime("us"),
}


def line_name(run: LogRun, phase: int) -> str:
    """The overlay's name of one phase of a run: the run's name, with the phase when it has several."""
    a = run.analysis
    several = a is not None and a.phases.height > 1
    return f"{run.name} · phase {phase}" if several else run.name


def decode_overlay_frame(runs: Sequence[LogRun]) -> pl.DataFrame:
    """Every phase's decode samples of every analysed run, against the seconds since the phase's
    start (`DECODE_SCHEMA`): ``stable`` marks the samples of the phase's stable window,
    ``segment`` the silences (`frames.gap_segments`)."""
    parts = []
    for run in runs:
        a = run.analysis
        if a is None or a.samples.is_empty() or a.phases.is_empty():
            continue
        stable = pl.col("stable") if "stable" in a.samples.columns else pl.lit(False)
        samples = (
            a.samples.filter(pl.col("phase").is_not_null() & pl.col("time").is_not_null())
            .join(a.phases.select("phase", pl.col("start").alias("_start")), on="phase", how="inner")
            .sort("time")
        )
        for (phase,), part in samples.group_by("phase", maintain_order=True):
            line = part.select(
                pl.lit(line_name(run, int(phase))).alias("run"),
                pl.lit(run.name).alias("source"),
                "phase",
                (pl.col("time") - pl.col("_start")).dt.total_seconds(fractional=True).alias("since_start_s"),
                "gen_tps",
                "running",
                "waiting",
                stable.fill_null(False).alias("stable"),
                "time",
            )
            line = gap_segments(line, idle_gap(run))
            parts.append(thin(line, max_points=MAX_POINTS_PER_LINE).select(list(DECODE_SCHEMA)))
    if not parts:
        return pl.DataFrame(schema=DECODE_SCHEMA)
    return pl.concat(parts, how="vertical_relaxed").cast(DECODE_SCHEMA)  # type: ignore[arg-type]


def decode_overlay_caption(runs: Sequence[LogRun]) -> str:
    """Each line's stable window: its mean and when it began after the phase's start."""
    parts = []
    for run in runs:
        a = run.analysis
        if a is None or a.windows.is_empty():
            continue
        starts = dict(zip(a.phases.get_column("phase").to_list(), a.phases.get_column("start").to_list()))
        for row in a.windows.iter_rows(named=True):
            began = starts.get(row["phase"])
            offset = "" if began is None else f" from +{(row['start'] - began).total_seconds():,.0f} s"
            short = "" if row["trusted"] else ", too short to trust"
            parts.append(
                f"{line_name(run, row['phase'])} {row['gen_tps_mean']:,.0f} tok/s "
                f"(N={row['concurrency']}){offset} for {row['duration_s']:,.0f} s{short}"
            )
    return "stable decode (thick): " + "; ".join(parts) if parts else "no run has a stable decode window"


NO_CHUNK_LINES = "its engine prints no per-chunk prefill line (vLLM: prompt throughput per stats interval)"
NO_CHUNKED_REQUEST = "no request was prefilled in two chunks or more"


def prefill_overlay_frame(runs: Sequence[LogRun]) -> tuple[pl.DataFrame, list[tuple[str, str]]]:
    """(chunks of every run with a ``run`` column, (run, why) for each analysed run left out).

    Chunks are `frames.prefill_frame`'s (requests prefilled in two chunks or more)."""
    parts, without = [], []
    for run in runs:
        if run.analysis is None:
            continue
        chunks = prefill_frame(run)
        if chunks.is_empty():
            why = NO_CHUNKED_REQUEST if run.analysis.chunks.height else NO_CHUNK_LINES
            without.append((run.name, why))
            continue
        parts.append(
            chunks.select(
                pl.lit(run.name).alias("run"),
                pl.col("request").cast(pl.Int64),
                pl.col("chunk").cast(pl.Int64),
                pl.col("cached_tokens").cast(pl.Int64),
                pl.col("input_tps").cast(pl.Float64),
                pl.col("new_token").cast(pl.Int64),
                "phase_label",
            )
        )
    frame = pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame()
    return frame, without


def prefill_overlay_caption(frame: pl.DataFrame, without: Sequence[tuple[str, str]]) -> str:
    """Per run, its longest request's first and last chunk throughput; the runs left out."""
    parts = []
    for (run,), part in frame.group_by("run", maintain_order=True):
        longest = part.group_by("request").len().sort(["len", "request"], descending=[True, False])
        request = longest.get_column("request")[0]
        req = part.filter(pl.col("request") == request).sort("chunk")
        first, last = req.row(0, named=True), req.row(-1, named=True)
        parts.append(
            f"{run}: {first['input_tps']:,.0f} → {last['input_tps']:,.0f} tok/s over {req.height} chunks "
            f"({first['cached_tokens']:,} → {last['cached_tokens']:,} tokens cached)"
        )
    reasons: dict[str, list[str]] = {}
    for name, why in without:
        reasons.setdefault(why, []).append(name)
    parts += [f"not drawn ({why}): {', '.join(names)}" for why, names in reasons.items()]
    return "; ".join(parts)
