"""Client half of reconciliation: client throughput against the bound and the engine's rate."""
from __future__ import annotations

from pathlib import Path

import pytest

from logparse.bench.readers import load_bench
from logparse.bench.reconcile import reconcile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
GPUSTACK = FIXTURES / "gpustack_vllm_kimi_k3_200k_inflated.json"
CLEAN = FIXTURES / "vllm_bench_serve_c16.json"


def test_bench_reconcile_inflated_client_trusts_the_server_log() -> None:
    # the GPUStack write-up's engine log: ~163 tok/s stable decode with all 10 requests decoding
    verdict = reconcile(load_bench([GPUSTACK]), server_stable_gen_tps=163.0, server_phase={"concurrency": 10})
    assert verdict["trust"] == "server_log"
    (run,) = verdict["runs"]
    bound = 10 * 3000 / 295.21
    assert run["physical_bound_tps"] == pytest.approx(bound)
    assert run["bound_ratio"] == pytest.approx(1111.61 / bound)
    assert run["server_ratio"] == pytest.approx(1111.61 / 163.0)
    assert len(run["problems"]) == 2
    assert f"{bound:.2f}" in verdict["reason"] and "latency" in verdict["reason"]


def test_bench_reconcile_without_server_falls_back_to_the_bound() -> None:
    verdict = reconcile(load_bench([GPUSTACK]), server_stable_gen_tps=None, server_phase=None)
    assert verdict["trust"] == "physical_bound"
    assert verdict["runs"][0]["consistent"] is False


def test_bench_reconcile_consistent_client_is_trusted() -> None:
    verdict = reconcile(load_bench([CLEAN]), server_stable_gen_tps=600.0, server_phase=None)
    assert verdict["trust"] == "client"
    (run,) = verdict["runs"]
    assert run["server_ratio"] == pytest.approx(510.47 / 600.0)
    assert "85%" in verdict["reason"]


def test_bench_reconcile_client_above_engine_rate_but_within_bound() -> None:
    verdict = reconcile(load_bench([CLEAN]), server_stable_gen_tps=400.0, server_phase=None)
    assert verdict["trust"] == "server_log"
    assert "1.3x the engine's stable decode" in verdict["reason"]


def test_bench_reconcile_token_count_against_server_phase() -> None:
    verdict = reconcile(load_bench([CLEAN]), server_stable_gen_tps=None, server_phase={"gen_tokens": 10000})
    assert verdict["trust"] == "server_log"
    assert "client counts 20480 output tokens" in verdict["runs"][0]["problems"][0]


def test_bench_reconcile_nothing_to_compare() -> None:
    rows = load_bench([FIXTURES / "Kimi-K3-table.csv"])  # Cordatus reports no output throughput
    verdict = reconcile(rows, server_stable_gen_tps=100.0, server_phase=None)
    assert verdict["trust"] == "undetermined" and verdict["runs"] == []
