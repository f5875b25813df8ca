"""Consistency checks: what they flag on the fixtures and on hand-made rows."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from bench_records import cordatus_run

from logparse.bench.checks import CHECK_CODES, SEVERITIES, run_checks
from logparse.bench.derive import complete_record
from logparse.bench.readers import load_bench
from logparse.bench.schema import empty_record, to_frame

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"


def _checks(*names: str) -> pl.DataFrame:
    return run_checks(load_bench([FIXTURES / name for name in names]))


def _by_code(checks: pl.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["code"]: row for row in checks.iter_rows(named=True)}


def test_bench_gpustack_inflated_throughput_is_an_error() -> None:
    checks = _by_code(_checks("gpustack_vllm_kimi_k3_200k_inflated.json"))
    bound = 10 * 3000 / 295.21
    assert checks["throughput_bound"]["severity"] == "error"
    assert f"{1111.61 / bound:.1f}x" in checks["throughput_bound"]["message"]
    assert f"{bound:.1f} tok/s" in checks["throughput_bound"]["message"]  # one precision per unit
    little = 10 * 3000 / 284.58
    assert checks["concurrency_bound"]["severity"] == "error"
    assert f"{little:.1f} tok/s" in checks["concurrency_bound"]["message"]
    # the write-up's own table does not add up either: 125.21 s + 2999 x 45.21 ms != 284.58 s
    predicted = 125.2108 + 2999 * 0.04521
    assert abs(284.58 / predicted - 1) > 0.05
    assert checks["latency_decomposition"]["severity"] == "warning"
    assert checks["itl_vs_tpot"]["severity"] == "warning"


def test_bench_clean_vllm_run_is_all_ok() -> None:
    checks = _checks("vllm_bench_serve_c16.json")
    assert set(checks["severity"]) == {"ok"}
    assert {"throughput_bound", "concurrency_bound", "latency_decomposition", "percentile_order"} <= set(
        checks["code"]
    )
    # tps_vs_latency would only compare a derived TPS with its own formula: not reported
    assert "tps_vs_latency" not in set(checks["code"])


@pytest.mark.parametrize(
    "name",
    [
        "vllm_bench_serve_summary.txt",
        "sglang_bench_serving.jsonl",
        "sglang_bench_serving_summary.txt",
        "aiperf_conc8_profile_export_aiperf.csv",
        "genai_perf_concurrency4_profile_export_genai_perf.csv",
        "Kimi-K3-table.csv",
    ],
)
def test_bench_realistic_fixtures_have_no_errors(name: str) -> None:
    checks = _checks(name)
    assert not checks.is_empty()
    assert set(checks["code"]) <= set(CHECK_CODES)
    assert set(checks["severity"]) <= set(SEVERITIES)
    assert "error" not in set(checks["severity"])


def _row(**values: Any) -> pl.DataFrame:
    rec = empty_record()
    rec.update(
        source_file="synthetic.json", source_tool="vllm_bench_json", record=0, engine="vllm", mode="direct"
    )
    rec.update(values)
    return to_frame([complete_record(rec)])


def test_bench_latency_decomposition_severities() -> None:
    base = {"concurrency": 4, "output_len_requested": 101, "ttft_ms_mean": 100.0, "tpot_ms_mean": 10.0}
    for latency, severity in ((1.1, "ok"), (1.21, "warning"), (1.6, "error")):
        checks = _by_code(run_checks(_row(latency_s_mean=latency, **base)))
        assert checks["latency_decomposition"]["severity"] == severity


def test_bench_percentile_order_error_and_warning() -> None:
    rows = _row(concurrency=1, ttft_ms_mean=10.0, ttft_ms_p90=30.0, ttft_ms_p99=20.0)
    impossible = _by_code(run_checks(rows))
    assert impossible["percentile_order"]["severity"] == "error"
    assert "ttft_ms p99 20 < p90 30" in impossible["percentile_order"]["message"]
    heavy_tail = _by_code(run_checks(_row(concurrency=1, ttft_ms_mean=50.0, ttft_ms_p90=40.0)))
    assert heavy_tail["percentile_order"]["severity"] == "warning"


def test_bench_tps_below_rate_of_mean_latency_warns() -> None:
    rec = _row(
        concurrency=2,
        output_len_requested=128,
        latency_s_mean=2.0,
        tps_per_user_mean=50.0,  # 128 / 2 = 64: a mean of n / L_i cannot be below it
        tps_per_user_definition="tokens_over_e2e",
    )
    assert _by_code(run_checks(rec))["tps_vs_latency"]["severity"] == "warning"


def test_bench_throughput_bound_prefers_requested_length() -> None:
    rec = _row(
        num_requests=10,
        duration_s=100.0,
        output_len_requested=100,
        total_output_tokens=2000,  # counted twice what was requested
        output_throughput_tps=20.0,
    )
    check = _by_code(run_checks(rec))["throughput_bound"]
    assert check["severity"] == "error"
    assert "10 x 100 / 100.00 s = 10.0 tok/s" in check["message"]


def test_bench_optimistic_tail_warns_when_c_max_would_change() -> None:
    rows = [
        cordatus_run(
            c,
            c,
            ttft_ms_p90=100.0,
            tps_per_user_p90=40.0,
            tps_per_user_mean=30.0,
            latency_s_mean=latency_p90 * 0.8,
            latency_s_p90=latency_p90,
        )
        for c, latency_p90 in ((1, 2.0), (2, 9.0))  # 128 / 9 s = 14.2 tok/s at the slow tail
    ]
    checks = run_checks(to_frame(rows))
    (tail,) = checks.filter(pl.col("code") == "tps_slo_optimistic_tail").to_dicts()
    assert tail["severity"] == "warning"
    assert "C_max is 1 instead of 2" in tail["message"]
