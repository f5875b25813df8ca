"""Output tokens per request of each phase, as the engine's own throughput lines imply.

Neither engine prints a request's output length at INFO level. What it prints is the generation
throughput of every stats interval (vLLM `Avg generation throughput`, SGLang `gen throughput`):
throughput × interval, summed over the phase's samples and divided by the requests the phase
served, is the tokens each request generated. The requests are those the log counted
(``n_requests``: vLLM's request lines, SGLang's Prefill lines), else the phase's N: a request-rate
run (`--request-rate 4`, 200 prompts) serves many more requests than it holds at once. It is an estimate (``~``): a stats interval is rounded to the
printed second, a request that was preempted or retracted generates part of its output twice,
and the first sample's interval (which begins in the idle time before the phase) is taken as
the median interval. The idle sample right after a phase (a vLLM stats line printing nothing
running, which ends the phase: `analysis.phases`) still counts: its throughput averages the
interval in which the phase's last requests finished. On the emulated runs it lands within 15 %
of the truth.
"""

from __future__ import annotations

import polars as pl

from logparse.analysis._frames import median_interval

OUTPUT_SCHEMA: dict[str, pl.DataType] = {
    "phase": pl.Int64(),
    "output_tokens": pl.Int64(),
    "output_tokens_estimated": pl.Boolean(),
    "output_how": pl.String(),
}
HOW = "Σ generation throughput × stats interval ÷ the phase's requests (counted, else N)"


def phase_outputs(samples: pl.DataFrame, phases: pl.DataFrame) -> pl.DataFrame:
    """`OUTPUT_SCHEMA`, one row per phase of `phases` that has samples and an N.

    `samples` are `Analysis.samples` (with ``phase``, ``gen_tps``, ``interval_s``); `phases` has
    ``phase``, ``concurrency`` and, when the log counted them, ``n_requests``.

    Examples
    --------
    >>> samples = pl.DataFrame({"phase": [1, 1, 1], "gen_tps": [100.0, 400.0, 400.0],
    ...                         "interval_s": [None, 10.0, 10.0]})
    >>> phase_outputs(samples, pl.DataFrame({"phase": [1], "concurrency": [4]}))["output_tokens"].item()
    2250
    >>> closed = pl.concat([samples, pl.DataFrame({"phase": [None, None], "gen_tps": [200.0, 0.0],
    ...                                            "interval_s": [10.0, 10.0]})])
    >>> phase_outputs(closed, pl.DataFrame({"phase": [1], "concurrency": [4]}))["output_tokens"].item()
    2750
    """
    if samples.is_empty() or phases.is_empty() or "interval_s" not in samples.columns:
        return pl.DataFrame(schema=OUTPUT_SCHEMA)
    step = median_interval_s(samples)
    if step is None:
        return pl.DataFrame(schema=OUTPUT_SCHEMA)
    first = pl.int_range(pl.len()).over("phase") == 0  # its interval began in the idle time before
    interval = pl.when(first).then(pl.lit(step)).otherwise(pl.col("interval_s").fill_null(step))
    tokens = (
        _with_closing_samples(samples)
        .filter(pl.col("phase").is_not_null() & pl.col("gen_tps").is_not_null())
        .group_by("phase", maintain_order=True)
        .agg((pl.col("gen_tps") * interval).sum().alias("_tokens"))
    )
    counted = pl.col("n_requests") if "n_requests" in phases.columns else pl.lit(None, dtype=pl.Int64)
    out = (
        phases.select("phase", pl.coalesce(counted, pl.col("concurrency")).alias("_requests"))
        .join(tokens, on="phase", how="inner")
        .filter(pl.col("_requests").is_not_null() & (pl.col("_requests") > 0) & (pl.col("_tokens") > 0))
        .select(
            "phase",
            (pl.col("_tokens") / pl.col("_requests")).round(0).cast(pl.Int64).alias("output_tokens"),
            pl.lit(True).alias("output_tokens_estimated"),
            pl.lit(HOW).alias("output_how"),
        )
    )
    return out.cast(OUTPUT_SCHEMA).sort("phase")  # type: ignore[arg-type]


def _with_closing_samples(samples: pl.DataFrame) -> pl.DataFrame:
    """`samples` (in their order) with each phase's closing sample, the first one after its last
    that belongs to no phase, given that phase: the tokens of the interval it ends were generated
    by the phase's requests."""
    previous = pl.col("phase").shift(1)
    closing = pl.col("phase").is_null() & previous.is_not_null()
    return samples.with_columns(pl.when(closing).then(previous).otherwise(pl.col("phase")).alias("phase"))


def median_interval_s(samples: pl.DataFrame) -> float | None:
    """The usual stats interval of `samples` in seconds (their printed intervals' median, else
    the median gap between their times)."""
    printed = samples.get_column("interval_s").drop_nulls()
    if printed.len():
        return float(printed.median())  # type: ignore[arg-type]
    return median_interval(samples.get_column("time")) if "time" in samples.columns else None


__all__ = ["OUTPUT_SCHEMA", "median_interval_s", "phase_outputs"]
