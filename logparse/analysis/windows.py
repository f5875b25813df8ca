"""Stable decode windows: the stretch of a phase in which all N requests decode undisturbed.

A sample belongs to the stable window of its phase when

* all N requests run (``running == N``) and none waits (``waiting == 0``),
* its measurement interval overlaps no prefill (vLLM: prompt throughput 0; SGLang: no Prefill
  line since the previous Decode line, so the first Decode line after a prefill is out),
* it is not the phase's first sample (whose interval starts in the idle time before the phase).

The window is the set of such samples (normally one unbroken run: with N running and nobody
waiting, no new prefill can start; a preemption's recompute is the exception). Its throughput is the plain mean of the
engine-reported generation throughput over those samples (what an engineer averaging the log
lines by hand gets), per request = mean / N, ms/token = 1000 / per request.
"""

from __future__ import annotations

from typing import cast

import polars as pl

WINDOW_SCHEMA: dict[str, pl.DataType] = {
    "phase": pl.Int64(),
    "concurrency": pl.Int64(),
    "samples": pl.Int64(),
    "start": pl.Datetime("us"),
    "end": pl.Datetime("us"),
    "duration_s": pl.Float64(),
    "first_line": pl.Int64(),
    "last_line": pl.Int64(),
    "gen_tps_mean": pl.Float64(),
    "gen_tps_median": pl.Float64(),
    "gen_tps_min": pl.Float64(),
    "gen_tps_max": pl.Float64(),
    "gen_tps_std": pl.Float64(),
    "cv": pl.Float64(),
    "per_request_tps": pl.Float64(),
    "per_request_tps_peak": pl.Float64(),
    "ms_per_token": pl.Float64(),
    "context_tokens_per_request": pl.Float64(),
    "trusted": pl.Boolean(),
    "note": pl.String(),
}


def mark_stable(samples: pl.DataFrame, phases: pl.DataFrame) -> pl.DataFrame:
    """Add ``stable`` (the sample meets the stable conditions of its phase) to `samples`.

    `samples` must carry a ``phase`` column (`phases.assign_phase`).
    """
    if samples.is_empty():
        return samples.with_columns(pl.lit(False).alias("stable"))
    n = phases.select("phase", pl.col("concurrency").alias("_n"))
    frame = samples.sort("time", "line_no").join(n, on="phase", how="left")
    first_in_phase = pl.col("sample") == pl.col("sample").min().over("phase")
    stable = (
        pl.col("phase").is_not_null()
        & (pl.col("running") == pl.col("_n"))
        & (pl.col("waiting").fill_null(0) == 0)
        & ~pl.col("prefill").fill_null(False)
        & pl.col("gen_tps").is_not_null()
        & ~first_in_phase
    )
    return frame.with_columns(stable.fill_null(False).alias("stable")).drop("_n").sort("time", "line_no")


def stable_windows(
    marked: pl.DataFrame, phases: pl.DataFrame, *, min_samples: int = 3, min_duration_s: float = 20.0
) -> pl.DataFrame:
    """One row per phase that has a stable window, with its statistics.

    Parameters
    ----------
    marked
        `mark_stable` output.
    phases
        `phases.find_phases` output.
    min_samples, min_duration_s
        A window with fewer samples or a shorter duration is reported with ``trusted = False``.

    Returns
    -------
    pl.DataFrame
        `WINDOW_SCHEMA`. ``duration_s`` is the time the samples' intervals cover (from the sample
        before the first one to the last); ``note`` says why a window is not trusted.

    Examples
    --------
    >>> import datetime as dt
    >>> t = [dt.datetime(2026, 1, 1, 0, 0, 0) + dt.timedelta(seconds=10 * i) for i in range(6)]
    >>> samples = pl.DataFrame({"sample": range(6), "line_no": range(1, 7), "time": t, "phase": [1] * 6,
    ...     "running": [10] * 6, "waiting": [0] * 6, "prefill": [True, True, False, False, False, False],
    ...     "gen_tps": [100.0, 400.0, 500.0, 510.0, 490.0, 500.0], "context_per_request": [None] * 6,
    ...     "interval_s": [None] + [10.0] * 5}, schema_overrides={"context_per_request": pl.Float64})
    >>> phases = pl.DataFrame({"phase": [1], "concurrency": [10]})
    >>> w = stable_windows(mark_stable(samples, phases), phases)
    >>> w[["samples", "first_line", "gen_tps_mean", "per_request_tps", "duration_s"]]
    shape: (1, 5)
    ┌─────────┬────────────┬──────────────┬─────────────────┬────────────┐
    │ samples ┆ first_line ┆ gen_tps_mean ┆ per_request_tps ┆ duration_s │
    │ ---     ┆ ---        ┆ ---          ┆ ---             ┆ ---        │
    │ i64     ┆ i64        ┆ f64          ┆ f64             ┆ f64        │
    ╞═════════╪════════════╪══════════════╪═════════════════╪════════════╡
    │ 4       ┆ 3          ┆ 500.0        ┆ 50.0            ┆ 40.0       │
    └─────────┴────────────┴──────────────┴─────────────────┴────────────┘
    """
    stable = marked.filter(pl.col("stable"))
    if stable.is_empty():
        return pl.DataFrame(schema=WINDOW_SCHEMA)
    n = phases.select("phase", pl.col("concurrency"))
    gen = pl.col("gen_tps")
    agg = (
        stable.sort("time")
        .group_by("phase", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("samples"),
            pl.col("time").min().alias("start"),
            pl.col("time").max().alias("end"),
            pl.col("interval_s").sum().alias("duration_s"),
            pl.col("line_no").min().alias("first_line"),
            pl.col("line_no").max().alias("last_line"),
            gen.mean().alias("gen_tps_mean"),
            gen.median().alias("gen_tps_median"),
            gen.min().alias("gen_tps_min"),
            gen.max().alias("gen_tps_max"),
            gen.std(ddof=0).alias("gen_tps_std"),
            pl.col("context_per_request").mean().alias("context_tokens_per_request"),
        )
        .join(n, on="phase", how="left")
    )
    agg = agg.with_columns(
        (pl.col("gen_tps_std") / pl.col("gen_tps_mean")).alias("cv"),
        (pl.col("gen_tps_mean") / pl.col("concurrency")).alias("per_request_tps"),
        (pl.col("gen_tps_max") / pl.col("concurrency")).alias("per_request_tps_peak"),
    ).with_columns(
        pl.when(pl.col("per_request_tps") > 0).then(1000.0 / pl.col("per_request_tps")).alias("ms_per_token"),
    )
    short = (pl.col("samples") < min_samples) | (pl.col("duration_s").fill_null(0.0) < min_duration_s)
    note = pl.format(
        "too short to trust: {} sample(s) over {} s (need {} samples and {} s)",
        pl.col("samples"),
        pl.col("duration_s").fill_null(0.0).round(1),
        pl.lit(min_samples),
        pl.lit(min_duration_s),
    )
    agg = agg.with_columns((~short).alias("trusted"), pl.when(short).then(note).alias("note"))
    return agg.select(list(WINDOW_SCHEMA)).cast(WINDOW_SCHEMA).sort("phase")  # type: ignore[arg-type]


def no_window_reasons(marked: pl.DataFrame, phases: pl.DataFrame) -> pl.DataFrame:
    """For each phase without a stable window, why not (``phase``, ``reason``)."""
    rows = []
    have = set(marked.filter(pl.col("stable")).get_column("phase").drop_nulls().to_list())
    for ph in phases.iter_rows(named=True):
        if ph["phase"] in have:
            continue
        part = marked.filter(pl.col("phase") == ph["phase"])
        n = ph["concurrency"]
        at_n = part.filter(pl.col("running") == n) if n is not None else part.head(0)
        no_wait = at_n.filter(pl.col("waiting").fill_null(0) == 0)
        no_prefill = no_wait.filter(~pl.col("prefill").fill_null(False))
        if part.is_empty():
            reason = "the phase has no decode stats lines"
        elif n is None:
            reason = "no stats line saw its requests running (they came and went within one interval)"
        elif at_n.is_empty():
            reason = _never_at_n(part.get_column("running"), n)
        elif no_wait.is_empty():
            reason = f"requests were always waiting while N={n} ran"
        elif no_prefill.is_empty():
            reason = f"every sample with N={n} running overlapped a prefill"
        elif no_prefill.filter(pl.col("gen_tps").is_not_null()).is_empty():
            reason = "the stats lines print no generation throughput"
        else:
            reason = "the only undisturbed sample is the phase's first, whose interval starts while idle"
        rows.append({"phase": ph["phase"], "reason": reason})
    return pl.DataFrame(rows, schema={"phase": pl.Int64(), "reason": pl.String()}, orient="row")


def _never_at_n(running: pl.Series, n: int) -> str:
    """Why no sample ran exactly N requests: N was above the peak, or running skipped past it."""
    # polars types Series.min/max as any Python scalar; `running` is an integer column
    low, high = cast("int | None", running.min()), cast("int | None", running.max())
    if high is None or high < n:
        return f"running never reached N={n} (peak {'-' if high is None else high})"
    return f"running was never exactly N={n} (it ranged {low}–{high})"


def without_impossible_context(
    windows: pl.DataFrame, phases: pl.DataFrame, *, context_len: int | None = None
) -> pl.DataFrame:
    """`windows` with no context per request that the log contradicts: none where the phase's
    input check found the Decode lines' context below the input (``context_problem``), nor one
    above the model's maximum length `context_len`; the window's ``note`` says why."""
    if windows.is_empty():
        return windows
    flagged = (
        phases.select("phase", pl.col("context_problem").is_not_null().alias("_contradicted"))
        if "context_problem" in phases.columns
        else phases.select("phase", pl.lit(False).alias("_contradicted"))
    )
    ctx = pl.col("context_tokens_per_request")
    too_long = (ctx > context_len).fill_null(False) if context_len else pl.lit(False)
    bad = pl.col("_contradicted").fill_null(False) | too_long
    why = (
        pl.when(pl.col("_contradicted").fill_null(False))
        .then(
            pl.lit("context per request not reported: the Decode lines' count contradicts the input length")
        )
        .otherwise(
            pl.format(
                "context per request not reported: {} tokens exceed the model's maximum length", ctx.round(0)
            )
        )
    )
    note = (
        pl.when(bad)
        .then(pl.concat_str([pl.col("note"), why], separator="; ", ignore_nulls=True))
        .otherwise(pl.col("note"))
    )
    return (
        windows.join(flagged, on="phase", how="left")
        .with_columns(
            pl.when(bad).then(None).otherwise(ctx).alias("context_tokens_per_request"), note.alias("note")
        )
        .drop("_contradicted")
    )
