"""Stable decode windows: the stretch of a phase in which all N requests decode undisturbed.

A sample is stable when

* all N requests run (``running == N``) and none waits (``waiting == 0``),
* its measurement interval overlaps no prefill (vLLM: prompt throughput 0; SGLang: no Prefill
  line since the previous Decode line, so the first Decode line after a prefill is out),
* it prints a generation throughput above 0 (a line with requests running and nothing generated
  measures no decoding: a long prompt's prefill held them),
* it is not the phase's first sample (whose interval starts in the idle time before the phase).

A window is an unbroken run of stable samples of one phase: consecutive samples, none of the
phase's samples left out between them. A phase may hold several such runs (a sweep level whose
requests are restarted one by one); its window is the longest (the steadiest of equally long
ones). Its throughput is the plain mean of the engine-reported generation throughput over the
run (what an engineer averaging the log lines by hand gets), per request = mean / N, ms/token =
1000 / per request.

A window is trusted when it has at least `MIN_SAMPLES` samples, covers at least
`MIN_DURATION_S` seconds and its throughput's coefficient of variation is at most `MAX_CV`;
otherwise it is still reported, untrusted, with a note saying which of these it misses.
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
    "runs": pl.Int64(),
}
MIN_SAMPLES = 5  # a trusted window has at least this many samples
MIN_DURATION_S = 20.0  # ... covers at least this many seconds
MAX_CV = 0.2  # ... and its printed throughput varies by at most this coefficient of variation


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
        & (pl.col("gen_tps").fill_null(0.0) > 0)
        & ~first_in_phase
    )
    return frame.with_columns(stable.fill_null(False).alias("stable")).drop("_n").sort("time", "line_no")


def stable_windows(
    marked: pl.DataFrame,
    phases: pl.DataFrame,
    *,
    min_samples: int = MIN_SAMPLES,
    min_duration_s: float = MIN_DURATION_S,
    max_cv: float = MAX_CV,
) -> pl.DataFrame:
    """One row per phase that has stable samples: its best unbroken run of them, with statistics.

    Parameters
    ----------
    marked
        `mark_stable` output.
    phases
        `phases.find_phases` output.
    min_samples, min_duration_s, max_cv
        A window with fewer samples, a shorter duration or a larger cv is reported with
        ``trusted = False`` and a ``note`` saying why.

    Returns
    -------
    pl.DataFrame
        `WINDOW_SCHEMA`. ``duration_s`` is the time the samples' intervals cover (from the sample
        before the first one to the last); ``runs`` how many unbroken runs of stable samples the
        phase has (the window is the longest).

    Examples
    --------
    >>> import datetime as dt
    >>> t = [dt.datetime(2026, 1, 1, 0, 0, 0) + dt.timedelta(seconds=10 * i) for i in range(8)]
    >>> samples = pl.DataFrame({"sample": range(8), "line_no": range(1, 9), "time": t, "phase": [1] * 8,
    ...     "running": [10] * 8, "waiting": [0] * 8, "prefill": [True, True] + [False] * 6,
    ...     "gen_tps": [100.0, 400.0, 500.0, 510.0, 490.0, 500.0, 505.0, 495.0],
    ...     "context_per_request": [None] * 8, "interval_s": [None] + [10.0] * 7},
    ...     schema_overrides={"context_per_request": pl.Float64})
    >>> phases = pl.DataFrame({"phase": [1], "concurrency": [10]})
    >>> w = stable_windows(mark_stable(samples, phases), phases)
    >>> w[["samples", "first_line", "gen_tps_mean", "per_request_tps", "duration_s", "trusted"]]
    shape: (1, 6)
    ┌─────────┬────────────┬──────────────┬─────────────────┬────────────┬─────────┐
    │ samples ┆ first_line ┆ gen_tps_mean ┆ per_request_tps ┆ duration_s ┆ trusted │
    │ ---     ┆ ---        ┆ ---          ┆ ---             ┆ ---        ┆ ---     │
    │ i64     ┆ i64        ┆ f64          ┆ f64             ┆ f64        ┆ bool    │
    ╞═════════╪════════════╪══════════════╪═════════════════╪════════════╪═════════╡
    │ 6       ┆ 3          ┆ 500.0        ┆ 50.0            ┆ 60.0       ┆ true    │
    └─────────┴────────────┴──────────────┴─────────────────┴────────────┴─────────┘
    """
    runs = stable_runs(marked)
    if runs.is_empty():
        return pl.DataFrame(schema=WINDOW_SCHEMA)
    n = phases.select("phase", pl.col("concurrency"))
    gen = pl.col("gen_tps")
    agg = (
        runs.group_by("phase", "_run", maintain_order=True)
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
        .with_columns(
            (pl.col("gen_tps_std") / pl.col("gen_tps_mean")).alias("cv"),
            pl.len().over("phase").cast(pl.Int64).alias("runs"),
        )
        # the longest run of each phase; of equally long ones the steadiest, then the first
        .sort(
            "phase",
            pl.col("samples"),
            pl.col("cv").fill_null(float("inf")),
            "first_line",
            descending=[False, True, False, False],
        )
        .group_by("phase", maintain_order=True)
        .first()
        .join(n, on="phase", how="left")
    )
    agg = agg.with_columns(
        (pl.col("gen_tps_mean") / pl.col("concurrency")).alias("per_request_tps"),
        (pl.col("gen_tps_max") / pl.col("concurrency")).alias("per_request_tps_peak"),
    ).with_columns(
        pl.when(pl.col("per_request_tps") > 0).then(1000.0 / pl.col("per_request_tps")).alias("ms_per_token"),
    )
    few = pl.col("samples") < min_samples
    short = pl.col("duration_s").fill_null(0.0) < min_duration_s
    swings = pl.col("cv").is_null() | (pl.col("cv") > max_cv)
    reasons = pl.concat_str(
        [
            pl.when(few).then(pl.format("{} sample(s), need {}", pl.col("samples"), pl.lit(min_samples))),
            pl.when(short).then(
                pl.format(
                    "{} s, need {} s", pl.col("duration_s").fill_null(0.0).round(1), pl.lit(min_duration_s)
                )
            ),
            pl.when(swings).then(pl.format("cv {} above {}", pl.col("cv").round(3), pl.lit(max_cv))),
        ],
        separator=", ",
        ignore_nulls=True,
    )
    broken = pl.when(pl.col("runs") > 1).then(
        pl.format("the longest of {} unbroken runs of stable samples", pl.col("runs"))
    )
    trusted = ~(few | short | swings)
    note = pl.concat_str(
        [pl.when(~trusted).then(pl.format("not trusted: {}", reasons)), broken],
        separator="; ",
        ignore_nulls=True,
    )
    agg = agg.with_columns(trusted.alias("trusted"), pl.when(note != "").then(note).alias("note"))
    return agg.select(list(WINDOW_SCHEMA)).cast(WINDOW_SCHEMA).sort("phase")  # type: ignore[arg-type]


def stable_runs(marked: pl.DataFrame) -> pl.DataFrame:
    """The stable samples of `marked`, each with ``_run``: the number of its unbroken run within
    its phase (a run ends at any sample of the phase that is not stable)."""
    ordered = marked.filter(pl.col("phase").is_not_null()).sort("phase", "time", "line_no")
    starts = pl.col("stable") & ~pl.col("stable").shift(1).over("phase").fill_null(False)
    return ordered.with_columns(starts.cast(pl.Int64).cum_sum().over("phase").alias("_run")).filter(
        pl.col("stable")
    )


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
        elif no_prefill.filter(pl.col("gen_tps").fill_null(0.0) > 0).is_empty():
            reason = f"every undisturbed sample with N={n} running generated nothing (0 tok/s)"
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
