"""The input length is cross-checked against independent evidence in the same log (issue 14,
"One formula, no cross-check"): a disagreement is a diagnostic, never a silent pick, and a
value the log makes impossible is never printed as a result."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest

from logparse.analysis.analyze import Analysis, analyze_log
from logparse.analysis.inputs import PhaseInput, within_model
from logparse.analysis.evidence import EXACT, Figure
from logparse.emulate import PhaseParams, RunParams, StartupParams, emulate
from logparse.emulate.presets import gpustack

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _analyse(params: RunParams, tmp_path: Path) -> tuple[dict, Analysis]:
    run = emulate(params)
    path = tmp_path / "run.log"
    run.write(path)
    return run.truth, analyze_log(path, engine=params.engine, year=int(params.start[:4]))


def _codes(a: Analysis) -> dict[str, str]:
    return {d["code"]: d["message"] for d in a.diagnostics.to_dicts()}


def test_a_cached_token_that_counts_earlier_chunks_is_caught(tmp_path: Path) -> None:
    """The same 200K run, printed by a fork whose #cached-token counts the request's earlier chunks."""
    params = dataclasses.replace(gpustack("sglang", "200k"), cached_counts_chunks=True, dcp_size=1, tp=8,
                                 startup=dataclasses.replace(gpustack("sglang", "200k").startup,
                                                             kv_pool_tokens=2_400_000))
    truth, a = _analyse(params, tmp_path)
    ph = a.phases.row(0, named=True)
    sums = a.chunks.select(pl.col("new_token").sum() + pl.col("cached_token").sum()).item() / ph["n_requests"]
    assert sums > 2 * truth["phases"][0]["input_tokens"]          # the one formula alone: > 400K
    assert "input_estimates_disagree" in _codes(a)
    assert ph["input_confidence"] == "estimated"
    assert abs(ph["input_tokens"] - truth["phases"][0]["input_tokens"]) <= ph["input_bound"]
    w = a.windows.row(0, named=True)
    assert w["context_tokens_per_request"] >= ph["input_tokens"]    # the two figures of a row agree


def test_todays_sglang_input_is_exact_and_unflagged() -> None:
    a = analyze_log(FIXTURES / "sglang" / "emulated-0.5.14-tp1-color.log", engine="sglang", year=2026)
    assert a.phases.get_column("input_confidence").to_list() == [EXACT, EXACT]
    assert a.phases.get_column("input_tokens").to_list() == [40_000, 3_000]
    assert "input_estimates_disagree" not in _codes(a)


def test_a_decode_count_below_the_input_is_not_printed_as_context() -> None:
    """GPUStack SGLang with --dcp-size 8: each rank's Decode line counts its share of the context."""
    a = analyze_log(FIXTURES / "sglang" / "gpustack-200k.log", engine="sglang", year=2026)
    ph = a.phases.row(0, named=True)
    assert ph["input_tokens"] == 200_000 and ph["input_confidence"] == EXACT
    assert "context_contradicts_input" in _codes(a)
    w = a.windows.row(0, named=True)
    assert w["context_tokens_per_request"] is None and "not reported" in w["note"]


def test_vllm_prompt_estimate_and_kv_context_agree_within_bounds() -> None:
    a = analyze_log(FIXTURES / "vllm" / "gpustack-200k.log", engine="vllm", year=2026)
    ph = a.phases.row(0, named=True)
    assert ph["input_confidence"] == "estimated" and ph["input_bound"] > 0
    assert abs(ph["input_tokens"] - 200_000) <= ph["input_bound"]
    assert "input_estimates_disagree" not in _codes(a)


def test_recomputed_prompts_the_stats_do_not_show_are_flagged(tmp_path: Path) -> None:
    """vLLM 0.10 prints no preemption count: recomputed prompts inflate the prompt-throughput sum,
    and the KV context at the first full sample says so."""
    params = RunParams(engine="vllm", era="0.10.2", seed=11, startup=StartupParams(init_s=30.0, cuda_graph_s=9.0),
                       phases=(PhaseParams(concurrency=10, input_len=17_000, output_len=1200, decode_tps=30.0,
                                           preemptions=(12.0, 20.0)),))
    truth, a = _analyse(params, tmp_path)
    ph = a.phases.row(0, named=True)
    assert "input_estimates_disagree" in _codes(a) and "recomputed prompts" in ph["input_problem"]
    assert abs(ph["input_tokens"] - truth["phases"][0]["input_tokens"]) <= ph["input_bound"]


def test_an_input_longer_than_the_model_is_not_reported() -> None:
    found = PhaseInput(Figure(969_000, EXACT, "Σ (new + cached)"))
    checked = within_model(found, 262_144, 1)
    assert checked.figure is None and checked.problem is not None and "impossible" in checked.problem
    assert within_model(found, 1_000_000, 1).figure is found.figure

