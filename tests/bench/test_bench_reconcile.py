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
    assert f"{bound:.1f} tok/s" in verdict["reason"] and "latency" in verdict["reason"]


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
    assert "client counts 20,480 output tokens" in verdict["runs"][0]["problems"][0]


def test_bench_reconcile_nothing_to_compare() -> None:
    rows = load_bench([FIXTURES / "Kimi-K3-table.csv"])  # Cordatus reports no output throughput
    verdict = reconcile(rows, server_stable_gen_tps=100.0, server_phase=None)
    assert verdict["trust"] == "undetermined" and verdict["runs"] == []


def test_bench_reconcile_another_engine_and_input_length_is_a_mismatch() -> None:
    # an SGLang 64K log against the vLLM 200K client: not the client's run at all
    phase = {"engine": "sglang", "concurrency": 10, "input_tokens": 64_000, "input_tokens_estimated": False}
    verdict = reconcile(load_bench([GPUSTACK]), server_stable_gen_tps=335.0, server_phase=phase)
    (run,) = verdict["runs"]
    assert [m.split()[0] for m in run["mismatches"]] == ["engine", "input"]
    assert sum(p.startswith("not the same run") for p in run["problems"]) == 2
    assert verdict["trust"] == "physical_bound"  # the bound still holds; the engine's rate does not apply
    assert not any("stable decode" in p for p in run["problems"])
    assert "not the client's run" in verdict["reason"] and "sglang" in verdict["reason"]


def test_bench_reconcile_other_concurrency_and_workload_is_never_trust_client() -> None:
    phase = {"engine": "vllm", "concurrency": 10, "input_tokens": 64_000, "input_tokens_estimated": True}
    verdict = reconcile(load_bench([CLEAN]), server_stable_gen_tps=501.36, server_phase=phase)
    (run,) = verdict["runs"]
    assert [m.split()[0] for m in run["mismatches"]] == ["input", "concurrency"]
    assert "c=16" in run["mismatches"][1] and "N=10" in run["mismatches"][1]
    assert verdict["trust"] == "undetermined"
    assert not any("the rest is prefill" in n for n in run["notes"])


def test_bench_reconcile_input_lengths_within_2x_match() -> None:
    phase = {"engine": "vllm", "concurrency": 16, "input_tokens": 1900}  # 1024 vs 1900: same workload
    verdict = reconcile(load_bench([CLEAN]), server_stable_gen_tps=600.0, server_phase=phase)
    assert verdict["runs"][0]["mismatches"] == [] and verdict["trust"] == "client"


def test_bench_reconcile_slightly_above_the_engine_rate_is_said_so() -> None:
    verdict = reconcile(load_bench([CLEAN]), server_stable_gen_tps=501.36, server_phase=None)
    assert verdict["trust"] == "client"
    (note,) = [n for n in verdict["runs"][0]["notes"] if "stable decode" in n]
    assert "102%" in note and "above it, but within the 10% tolerance" in note
    assert "the rest is prefill" not in note  # nothing is left over above 100%


def test_bench_reconcile_one_precision_per_unit() -> None:
    import re

    verdict = reconcile(load_bench([GPUSTACK]), server_stable_gen_tps=163.206, server_phase={"concurrency": 10})
    text = " ".join([verdict["reason"], *verdict["runs"][0]["problems"]])
    rates = re.findall(r"([\d,.]+) tok/s", text)
    assert rates and all(re.fullmatch(r"[\d,]+\.\d", r) for r in rates), rates
    assert "163.2 tok/s" in text
