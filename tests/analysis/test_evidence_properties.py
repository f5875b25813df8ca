"""Property test over emulated runs (issue 14, Done when): every figure the post-mortem calls exact
equals the emulator's truth, every estimated one is within the bound it states, and none is
outside what the run made physically possible."""
from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from emulated_runs import FAST, STARTUP, analyse
from hypothesis import given
from hypothesis import strategies as st

from logparse.analysis import summary_dict
from logparse.emulate import SGLANG_ERAS, VLLM_ERAS, LogStyle, PhaseParams, RunParams

@st.composite
def runs(draw: st.DrawFn) -> RunParams:
    """1-2 phases, either engine and any era; SGLang with decode context parallelism or a
    #cached-token that counts earlier chunks; preemptions the stats may not show."""
    engine = draw(st.sampled_from(["vllm", "sglang"]))
    era = draw(st.sampled_from([e.name for e in (VLLM_ERAS if engine == "vllm" else SGLANG_ERAS)]))
    dcp = draw(st.sampled_from([1, 1, 2, 4])) if engine == "sglang" else 1
    phases = tuple(PhaseParams(
        concurrency=draw(st.integers(1, 10)), input_len=draw(st.integers(500, 40_000)),
        output_len=draw(st.integers(400, 1500)), gap_s=float(draw(st.integers(60, 200))),
        decode_tps=float(draw(st.integers(15, 60))), noise=draw(st.sampled_from([0.0, 0.03])),
        preemptions=draw(st.sampled_from([(), (), (12.0,)])) if dcp == 1 else ()) for _ in range(draw(st.integers(1, 2))))
    return RunParams(engine=engine, era=era, seed=draw(st.integers(0, 5000)), tp=max(dcp, draw(st.sampled_from([1, 2]))),
                     dcp_size=dcp, cached_counts_chunks=engine == "sglang" and draw(st.booleans()),
                     max_num_batched_tokens=draw(st.sampled_from([8192, 16384])),
                     startup=dataclasses.replace(STARTUP, max_model_len=65_536, kv_pool_tokens=600_000),
                     phases=phases, style=LogStyle(access_log=False))


def _check(name: str, value: float | None, evidence: dict[str, Any] | None, truth: float) -> None:
    if value is None or evidence is None:
        return
    if evidence["confidence"] == "exact":
        assert value == pytest.approx(truth, rel=1e-9, abs=1e-3), name   # the summary rounds to 3 digits
    elif evidence["confidence"] == "estimated":
        assert evidence["bound"] is not None, name
        assert abs(value - truth) <= evidence["bound"] + 1e-3, (name, value, truth, evidence)


@FAST
@given(runs())
def test_figures_are_as_sure_as_they_say(params: RunParams) -> None:
    truth, a = analyse(params)
    summary = summary_dict(a)
    pool = summary["startup"]["evidence"].get("kv_pool_tokens")
    _check("kv_pool_tokens", summary["startup"]["kv_pool_tokens"], pool, truth["startup"]["kv_pool_tokens"])
    for ph, tp in zip(summary["phases"], truth["phases"], strict=False):
        ev = ph["evidence"]
        _check("input_tokens", ph["input_tokens"], ev.get("input_tokens"), tp["input_tokens"])
        stable, expected = ph["stable"], tp["stable"]
        if stable is None or expected is None or stable["samples"] != expected["samples"]:
            continue
        _check("gen_tps_mean", stable["gen_tps_mean"], ev.get("gen_tps_mean"), expected["gen_tps_mean"])
        printed = params.engine == "sglang"   # SGLang's own count is the figure; vLLM's estimates the true context
        ctx_truth = expected["context_tokens_per_request_printed" if printed else "context_tokens_per_request"]
        _check("context", stable["context_tokens_per_request"], ev.get("context_tokens_per_request"), ctx_truth)


@FAST
@given(runs())
def test_no_figure_outside_what_the_run_made_possible(params: RunParams) -> None:
    truth, a = analyse(params)
    limit = params.startup.max_model_len
    for ph in summary_dict(a)["phases"]:
        if ph["input_tokens"] is not None:
            assert 0 < ph["input_tokens"] <= limit
        stable = ph["stable"]
        if stable is not None and stable["context_tokens_per_request"] is not None:
            assert stable["context_tokens_per_request"] <= limit
            if ph["input_tokens"] is not None and ph["input_confidence"] == "exact":
                # a request's context holds its prompt: the two figures of one row agree
                assert stable["context_tokens_per_request"] >= ph["input_tokens"] * 0.98
    assert (a.samples.get_column("kv_usage").drop_nulls() <= 1.0).all()
