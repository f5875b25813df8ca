"""Aggregate output per concurrency level and its peak per configuration.

The Openzeka report's "Total Tokens Produced / Second" is per-user TPS (mean) x concurrency:
the output of C requests each streaming at the mean per-user rate, TTFT included in that rate.
It is an estimate of system output, not a measurement; `output_throughput_tps` (tokens / wall
time), where a tool reports it, sits beside it for comparison. The peak is the highest aggregate
over the tested levels (ties go to the lower concurrency). On the Openzeka data the peaks are at
c = 64 / 32 / 64 / 64; the report's own "most efficient point" list gives c = 16 (698) for vLLM
spec and c = 32 (493) for SGLang spec, while its own table has 740 at c = 32 and 931 at c = 64.
"""

from __future__ import annotations

import polars as pl


def aggregate_output(rows: pl.DataFrame) -> pl.DataFrame:
    """Per run with a concurrency level: `aggregate_tps` = tps_per_user_mean x concurrency."""
    return rows.filter(pl.col("concurrency").is_not_null()).select(
        "row",
        "config",
        "engine",
        "mode",
        "concurrency",
        "tps_per_user_mean",
        (pl.col("tps_per_user_mean") * pl.col("concurrency")).alias("aggregate_tps"),
        "output_throughput_tps",
    )


def peak_aggregate(rows: pl.DataFrame) -> pl.DataFrame:
    """Per configuration: the highest aggregate output and the concurrency where it occurs."""
    aggregate = aggregate_output(rows)
    configs = aggregate.select("config").unique(maintain_order=True)
    peaks = (
        aggregate.filter(pl.col("aggregate_tps").is_not_null())
        .sort(["config", "aggregate_tps", "concurrency"], descending=[False, True, False])
        .unique("config", keep="first", maintain_order=True)
        .select(
            "config",
            pl.col("aggregate_tps").alias("peak_aggregate_tps"),
            pl.col("concurrency").alias("peak_aggregate_concurrency"),
        )
    )
    return configs.join(peaks, on="config", how="left", maintain_order="left")
