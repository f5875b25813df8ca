"""Everything `logparse bench` computes from the tidy table, in one object."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from logparse.bench.basis import MARK_LEGEND, SOURCE_DOCS
from logparse.bench.capacity import aggregate_output, peak_aggregate
from logparse.bench.checks import CHECK_CODES, run_checks
from logparse.bench.schema import COLUMN_DOCS, TOOL_DEFINITIONS
from logparse.bench.slo import BASES, capacity, slo_matrix
from logparse.bench.spec import BREAK_EVEN_METHOD, spec_speedup, spec_summary

_CONFIG_COLUMNS = [
    "config",
    "engine",
    "mode",
    "c_max_p90",
    "users_p90",
    "users_p90_exact",
    "latency_s_mean_at_c_max_p90",
    "c_max_mean",
    "users_mean",
    "users_mean_exact",
    "latency_s_mean_at_c_max_mean",
    "peak_aggregate_tps",
    "peak_aggregate_concurrency",
    "tps_optimistic_p90",
    "stricter_p90",
    "unjudged_p90",
    "unjudged_mean",
]


@dataclass(frozen=True)
class BenchAnalysis:
    """The tidy rows and every table derived from them, with the settings used."""

    rows: pl.DataFrame
    slo: pl.DataFrame
    configs: pl.DataFrame
    aggregate: pl.DataFrame
    speedup: pl.DataFrame
    spec: list[dict[str, Any]]
    checks: pl.DataFrame
    settings: dict[str, float] = field(default_factory=dict)

    def tables(self) -> dict[str, pl.DataFrame]:
        """The flat tables, by name, as written by `--out`."""
        return {
            "rows": self.rows,
            "slo": self.slo,
            "configs": self.configs,
            "aggregate": self.aggregate,
            "speedup": self.speedup,
            "checks": self.checks,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: rows, configs, spec, checks, the SLO matrix and the definitions."""
        tools = self.rows["source_tool"].unique(maintain_order=True).to_list()
        return _finite(
            {
                "settings": self.settings,
                "rows": self.rows.to_dicts(),
                "configs": self.configs.to_dicts(),
                "spec": self.spec,
                "checks": self.checks.to_dicts(),
                "slo_matrix": self.slo.to_dicts(),
                "aggregate": self.aggregate.to_dicts(),
                "definitions": {
                    "columns": COLUMN_DOCS,
                    "tools": {tool: TOOL_DEFINITIONS[tool] for tool in tools if tool in TOOL_DEFINITIONS},
                    "checks": CHECK_CODES,
                    "slo_marks": MARK_LEGEND,
                    "slo_sources": SOURCE_DOCS,
                    "break_even": BREAK_EVEN_METHOD,
                },
            }
        )


def _finite(value: Any) -> Any:
    """Replace NaN and infinities (not valid JSON) with None, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def analyze_bench(
    rows: pl.DataFrame, *, slo_ttft_ms: float = 1000.0, slo_tps: float = 15.0, think_s: float = 45.0
) -> BenchAnalysis:
    """SLO matrix, capacity (C_max, users), aggregate output, spec speedup and checks of `rows`."""
    slo = pl.concat(
        [slo_matrix(rows, ttft_ms=slo_ttft_ms, tps=slo_tps, basis=basis) for basis in BASES], how="vertical"
    )
    configs = (
        capacity(rows, ttft_ms=slo_ttft_ms, tps=slo_tps, think_s=think_s)
        .join(peak_aggregate(rows), on="config", how="left", maintain_order="left")
        .select(_CONFIG_COLUMNS)
    )
    return BenchAnalysis(
        rows=rows,
        slo=slo,
        configs=configs,
        aggregate=aggregate_output(rows),
        speedup=spec_speedup(rows),
        spec=spec_summary(rows),
        checks=run_checks(rows, ttft_ms=slo_ttft_ms, tps=slo_tps),
        settings={"slo_ttft_ms": slo_ttft_ms, "slo_tps": slo_tps, "think_s": think_s},
    )
