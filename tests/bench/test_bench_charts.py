"""The aggregate output chart draws the file's measured throughput beside the derived estimate."""
from __future__ import annotations

from typing import Any

import polars as pl

from logparse.charts.bench import aggregate_output_chart


def _y_fields(spec: dict[str, Any]) -> list[str]:
    fields = []
    for layer in spec.get("layer", []):
        y = layer.get("encoding", {}).get("y", {}).get("field")
        if y is not None:
            fields.append(y)
    return fields


def _frame(measured: list[float | None]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "config": ["a", "a"],
            "concurrency": [8, 16],
            "aggregate_tps": [300.0, 528.2],
            "output_throughput_tps": pl.Series(measured, dtype=pl.Float64),
        }
    )


def test_bench_aggregate_chart_shows_measured_beside_derived() -> None:
    spec = aggregate_output_chart(_frame([290.5, 524.37])).to_dict()
    assert _y_fields(spec).count("aggregate_tps") == 2  # line and points of the estimate
    assert _y_fields(spec).count("output_throughput_tps") == 1


def test_bench_aggregate_chart_without_measured_draws_the_estimate_only() -> None:
    spec = aggregate_output_chart(_frame([None, None])).to_dict()
    assert "output_throughput_tps" not in _y_fields(spec)
