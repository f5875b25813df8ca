"""The percentile the tools use, the fixtures' consistency with it, and which statistic each
SLO may be judged at (hypothesis invariants)."""
from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from bench_records import cordatus_run
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.bench.basis import MARK_LEGEND
from logparse.bench.percentiles import percentile
from logparse.bench.schema import to_frame
from logparse.bench.slo import slo_matrix

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
DETAILED = [
    "vllm_era1_benchmark_serving_c10.json",
    "vllm_era2_benchmark_serving.json",
    "vllm_era3_bench_serve_first.json",
    "vllm_era4_bench_serve_save_detailed.json",
    "vllm_era4_bench_serve_append_detailed.jsonl",
    "sglang_bench_serving_output_details.jsonl",
]
PROFILE = settings(max_examples=80, deadline=None, derandomize=True)


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


@PROFILE
@given(
    values=st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=2, max_size=40),
    q=st.integers(min_value=1, max_value=99),
)
def test_bench_percentile_is_numpy_linear(values: list[float], q: int) -> None:
    assert percentile(values, q) == pytest.approx(_p(values, q), rel=1e-9, abs=1e-9)
    assert min(values) <= percentile(values, q) <= max(values)


def test_bench_percentile_rejects_no_values_and_bad_ranks() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        percentile([1.0], 101)


@pytest.mark.parametrize("name", DETAILED)
def test_bench_fixture_arrays_reproduce_their_printed_summary(name: str) -> None:
    """The fixtures are consistent: the writer's printed statistics are those of its arrays."""
    for line in (FIXTURES / name).read_text().splitlines():
        obj: dict[str, Any] = json.loads(line)
        ok = [not error for error in obj["errors"]]
        ttfts = [t * 1000 for t, keep in zip(obj["ttfts"], ok, strict=True) if keep]
        assert statistics.fmean(ttfts) == pytest.approx(obj["mean_ttft_ms"], rel=1e-9)
        assert percentile(ttfts, 99) == pytest.approx(obj["p99_ttft_ms"], rel=1e-9)
        gaps = [g * 1000 for gaps, keep in zip(obj["itls"], ok, strict=True) if keep for g in gaps]
        assert percentile(gaps, 50) == pytest.approx(obj["median_itl_ms"], rel=1e-9)


_COLUMNS = [
    *(f"ttft_ms_{stat}" for stat in ("mean", "p90", "p95", "p99")),
    *(f"tps_per_user_{stat}" for stat in ("mean", "p10", "p90")),
    *(f"latency_s_{stat}" for stat in ("mean", "p90", "p99")),
]


@settings(max_examples=80, deadline=None, derandomize=True)
@given(present=st.sets(st.sampled_from(_COLUMNS)), value=st.floats(min_value=0.5, max_value=5000))
def test_bench_p90_basis_never_judges_at_a_mean(present: set[str], value: float) -> None:
    rec = cordatus_run(0, 4, **dict.fromkeys(present, value))
    (judged,) = slo_matrix(to_frame([rec]), basis="p90").to_dicts()
    assert judged["ttft_stat"] in {None, "p90", "p95", "p99"}
    assert judged["tps_stat"] in {None, "p10", "p90", "p5", "p1"}
    if "ttft_ms_p90" in present:
        assert judged["ttft_stat"] == "p90" and "^" not in judged["ttft_marks"]
    if judged["ttft_stat"] is None:
        assert judged["ttft_ok"] is None and judged["ttft_note"] == "no TTFT P90 in the file"
    # a cell says what it rests on: every mark it carries is explained by the legend
    assert set(judged["marks"]) <= set(MARK_LEGEND)
