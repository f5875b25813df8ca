"""Speculative-decoding speedup per concurrency and the break-even concurrency.

speedup(c) = spec per-user TPS (mean) / direct per-user TPS (mean) of the same engine (and
label) at the same concurrency c. The break-even concurrency is where the speedup crosses 1.0
from above: between the first pair of adjacent tested levels c1 < c2 with ratio(c1) >= 1 >
ratio(c2), interpolated linearly in log2(c), because the levels are powers of two:

    log2(c*) = log2(c1) + (r1 - 1) / (r1 - r2) * (log2(c2) - log2(c1))

On the Openzeka data: vLLM 61.04 / 54.03 = 1.130 at c = 8 and 43.60 / 43.95 = 0.992 at c = 16
give c* ~ 15.4; SGLang 87.02 / 63.79 = 1.364 at c = 2 and 56.92 / 59.33 = 0.959 at c = 4 give
c* ~ 3.7 (the report says "~c16" and "~c4").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

BREAK_EVEN_METHOD = (
    "interpolated, not measured: where the spec/direct TPS ratio crosses 1.0, linear in log2(c)"
    " between the two tested levels around the crossing"
)


@dataclass(frozen=True)
class BreakEven:
    """Where the speedup crosses 1.0: the interpolated concurrency and the two bracketing levels."""

    concurrency: float
    lower: int
    upper: int


def break_even(concurrency: Sequence[int], ratio: Sequence[float]) -> BreakEven | None:
    """Interpolate the first crossing of `ratio` from >= 1 to < 1 on a log2 concurrency axis.

    `concurrency` must be increasing and positive. Returns None when the ratio never goes from
    >= 1 to < 1 between adjacent levels (spec faster everywhere, or slower from the start).

    Examples
    --------
    >>> found = break_even([4, 8, 16], [99.43 / 73.17, 61.04 / 54.03, 43.60 / 43.95])
    >>> round(found.concurrency, 1), found.lower, found.upper
    (15.4, 8, 16)
    """
    if len(concurrency) != len(ratio):
        msg = "concurrency and ratio must have the same length"
        raise ValueError(msg)
    for i in range(len(concurrency) - 1):
        c1, c2, r1, r2 = concurrency[i], concurrency[i + 1], ratio[i], ratio[i + 1]
        if c1 <= 0 or c2 <= c1:
            msg = f"concurrency levels must be positive and increasing (got {c1}, {c2})"
            raise ValueError(msg)
        if r1 >= 1.0 > r2:
            x1, x2 = math.log2(c1), math.log2(c2)
            fraction = (r1 - 1.0) / (r1 - r2)
            return BreakEven(concurrency=2.0 ** (x1 + fraction * (x2 - x1)), lower=c1, upper=c2)
    return None


def _one_each(group: pl.DataFrame) -> tuple[str, str] | None:
    direct = group.filter(pl.col("mode") == "direct")["config"].unique(maintain_order=True).to_list()
    spec = group.filter(pl.col("mode") == "spec")["config"].unique(maintain_order=True).to_list()
    return (direct[0], spec[0]) if len(direct) == 1 and len(spec) == 1 else None


def spec_pairs(rows: pl.DataFrame) -> list[tuple[str, str | None, str, str]]:
    """(engine, label, direct config, spec config): configurations of one engine and label, one
    direct and one spec; when there are several, those of the same workload are paired."""
    configs = rows.select("config", "engine", "mode", "label", "workload").unique(maintain_order=True)
    pairs = []
    for (engine, label), group in configs.group_by(["engine", "label"], maintain_order=True):
        if engine is None:
            continue
        found = [_one_each(group)]
        if found[0] is None:
            found = [_one_each(sub) for _, sub in group.group_by("workload", maintain_order=True)]
        for pair in found:
            if pair is not None:
                pairs.append((str(engine), None if label is None else str(label), *pair))
    return pairs


def spec_speedup(rows: pl.DataFrame) -> pl.DataFrame:
    """Per spec/direct pair and shared concurrency: direct TPS, spec TPS and their ratio."""
    frames = []
    for engine, label, direct_config, spec_config in spec_pairs(rows):
        runs = rows.filter(pl.col("concurrency").is_not_null()).unique(
            ["config", "concurrency"], keep="first", maintain_order=True
        )
        direct = runs.filter(pl.col("config") == direct_config).select(
            "concurrency", pl.col("tps_per_user_mean").alias("direct_tps")
        )
        spec = runs.filter(pl.col("config") == spec_config).select(
            "concurrency", pl.col("tps_per_user_mean").alias("spec_tps")
        )
        joined = direct.join(spec, on="concurrency", how="inner").sort("concurrency")
        frames.append(
            joined.select(
                pl.lit(engine).alias("engine"),
                pl.lit(label, dtype=pl.String).alias("label"),
                pl.lit(direct_config).alias("direct_config"),
                pl.lit(spec_config).alias("spec_config"),
                "concurrency",
                "direct_tps",
                "spec_tps",
                (pl.col("spec_tps") / pl.col("direct_tps")).alias("ratio"),
            )
        )
    if not frames:
        return pl.DataFrame(
            schema={
                "engine": pl.String,
                "label": pl.String,
                "direct_config": pl.String,
                "spec_config": pl.String,
                "concurrency": pl.Int64,
                "direct_tps": pl.Float64,
                "spec_tps": pl.Float64,
                "ratio": pl.Float64,
            }
        )
    return pl.concat(frames)


def spec_summary(rows: pl.DataFrame) -> list[dict[str, Any]]:
    """Per spec/direct pair: the speedup list, the break-even concurrency and its brackets."""
    speedup = spec_speedup(rows)
    out = []
    for engine, label, direct_config, spec_config in spec_pairs(rows):
        pair = speedup.filter(
            (pl.col("direct_config") == direct_config) & (pl.col("spec_config") == spec_config)
        ).filter(pl.col("ratio").is_not_null())
        levels = pair["concurrency"].to_list()
        ratios = pair["ratio"].to_list()
        found = break_even(levels, ratios) if levels else None
        if found is not None:
            note = (
                f"spec stops paying off between c={found.lower} and c={found.upper}"
                f" (break-even c ~{found.concurrency:.1f}, interpolated)"
            )
        elif not ratios:
            note = "no concurrency level tested in both modes"
        elif all(r >= 1.0 for r in ratios):
            note = "spec is at least as fast at every tested level"
        elif all(r < 1.0 for r in ratios):
            note = "spec is slower at every tested level"
        else:
            note = "the ratio never falls from >= 1 to < 1 between adjacent tested levels"
        out.append(
            {
                "engine": engine,
                "label": label,
                "direct_config": direct_config,
                "spec_config": spec_config,
                "speedup": [
                    {"concurrency": c, "ratio": r, "direct_tps": d, "spec_tps": s}
                    for c, r, d, s in zip(
                        levels, ratios, pair["direct_tps"].to_list(), pair["spec_tps"].to_list(), strict=True
                    )
                ],
                "break_even_concurrency": None if found is None else found.concurrency,
                "break_even_interpolated": found is not None,
                "break_even_method": None if found is None else BREAK_EVEN_METHOD,
                "break_even_between": None if found is None else [found.lower, found.upper],
                "note": note,
            }
        )
    return out
