"""Altair chart functions for logparse reports: tidy polars frames in, `alt.Chart` out.

Every function only encodes columns of the frames it is given (style.md §6, §8.7); the numbers
come from `logparse.analysis` and `logparse.bench`, shaped by `logparse.report.frames`. Altair is
imported here and in the modules below only, never by `logparse` itself or the ingest path.
"""

from __future__ import annotations

from logparse.charts._base import PICK, ZOOM, style
from logparse.charts.bench import (
    aggregate_output_chart,
    bench_metric_chart,
    bench_metrics_chart,
    capacity_chart,
    slo_heatmap_chart,
    spec_speedup_chart,
)
from logparse.charts.coldstart import coldstart_chart
from logparse.charts.degradation import degradation_chart
from logparse.charts.kv import kv_usage_chart
from logparse.charts.memory import memory_split_chart
from logparse.charts.overlay import decode_overlay_chart, prefill_overlay_chart
from logparse.charts.prefill import prefill_chunk_chart
from logparse.charts.spec import spec_acceptance_chart, spec_draft_chart, spec_position_chart
from logparse.charts.timeline import decode_timeline_chart

__all__ = [
    "PICK",
    "ZOOM",
    "aggregate_output_chart",
    "bench_metric_chart",
    "bench_metrics_chart",
    "capacity_chart",
    "coldstart_chart",
    "decode_overlay_chart",
    "decode_timeline_chart",
    "degradation_chart",
    "kv_usage_chart",
    "memory_split_chart",
    "prefill_chunk_chart",
    "prefill_overlay_chart",
    "slo_heatmap_chart",
    "spec_acceptance_chart",
    "spec_draft_chart",
    "spec_position_chart",
    "spec_speedup_chart",
    "style",
]
