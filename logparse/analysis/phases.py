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
}


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
) -> pl.DataFrame:
    """Split decode samples (and prefill lines) into phases of load.

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

    Returns
    -------
    pl.DataFrame
        `PHASE_SCHEMA`, phases numbered from 1 in time order; disjoint by construction.

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
    labelled = label_activity(samples, prefills=prefills, idle_gap_s=idle_gap_s)
    if labelled.is_empty():
        return pl.DataFrame(schema=PHASE_SCHEMA)
    rows = []
    for (raw,), part in labelled.filter(pl.col("_phase").is_not_null()).group_by(
        "_phase", maintain_order=True
    ):
        dec = part.filter(pl.col("_decode"))
        plateau = plateau_running(dec.get_column("running"), min_samples=min_plateau_samples)
        if plateau is None:  # all work fitted in one stats interval: the requests it served
            served = cast("int | None", dec.get_column("_served").max())
            plateau = None if dec.is_empty() else int(served or 0) or None
        # polars types Series.min/max as any Python scalar; `time` is a Datetime column, and
        # the lines of a phase have a time (the phases are cut by time gaps)
        times = part.get_column("time")
        start, end = cast(dt.datetime, times.min()), cast(dt.datetime, times.max())
        rows.append(
            {
                "phase": raw,
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
            }
        )
    frame = pl.DataFrame(rows, schema=PHASE_SCHEMA, orient="row").sort("start", "first_line")
    return frame.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("phase"))


def label_activity(
    samples: pl.DataFrame, *, prefills: pl.DataFrame | None, idle_gap_s: float
) -> pl.DataFrame:
    """Activity events in time order with a raw burst id ``_phase`` (null on idle samples).

    Columns ``line_no``, ``time``, ``running``, ``_decode`` (a decode sample, not a prefill line),
    ``_active``, ``_phase``.
    """
    active = (
        (pl.col("running").fill_null(0) > 0)
        | (pl.col("waiting").fill_null(0) > 0)
        | (pl.col("gen_tps").fill_null(0) > 0)
        | (pl.col("prompt_tps").fill_null(0) > 0)
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
            )
        )
    ev = pl.concat(events).filter(pl.col("time").is_not_null()).sort("time", "line_no")
    if ev.is_empty():
        return ev.with_columns(pl.lit(None, dtype=pl.Int64).alias("_phase"))
    # Gap to the previous *active* event; an idle sample in between also breaks the phase.
    prev_active_time = pl.when(pl.col("_active")).then(pl.col("time")).forward_fill().shift(1)
    prev_is_idle = (~pl.col("_active")).shift(1).fill_null(True)
    gap = (pl.col("time") - prev_active_time).dt.total_seconds(fractional=True)
    new_burst = pl.col("_active") & (prev_is_idle | gap.is_null() | (gap > idle_gap_s))
    return ev.with_columns(
        pl.when(pl.col("_active")).then(new_burst.cast(pl.Int64).cum_sum()).alias("_phase")
    )


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
    spans = phases.select("phase", "first_line", "last_line").sort("first_line")
    joined = frame.sort(by).join_asof(spans, left_on=by, right_on="first_line", strategy="backward")
    joined = joined.with_columns(
        pl.when(pl.col(by) <= pl.col("last_line")).then(pl.col("phase")).alias("phase")
    )
    return joined.drop("first_line", "last_line")


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
