"""Every rendered stats, spec, Prefill and Decode line matches its era's doc format."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import emulate_grammar as G  # noqa: E402

from logparse.emulate import (  # noqa: E402
    SGLANG_ERAS, VLLM_ERAS, LogStyle, PhaseParams, RunParams, StartupParams, emulate,
)

DOCS = Path(__file__).resolve().parents[3] / "shared" / "docs"
WRAPPERS = ("none", "docker", "compose")


def _vllm_params(era: str, i: int) -> RunParams:
    phase = PhaseParams(concurrency=5, input_len=3000, output_len=700, decode_tps=30.0, spec_accept_len=2.2,
                        spec_jitter=0.1, preemptions=(9.0,), oom_retries=2, jit_compiles=1, stall_s=1.0)
    style = LogStyle(wrapper=WRAPPERS[i % 3], color=bool(i % 2), health_poll_s=7.0, glue_tqdm=True)
    return RunParams(engine="vllm", era=era, seed=i, tp=2, spec_tokens=3,
                     warnings=("slow_tokenizer", "fp8_kv_scale"),
                     startup=StartupParams(compile_s=None if era == "0.6" else 5.0, oom_retries=2),
                     style=style,
                     phases=(phase, replace(phase, concurrency=3, input_len=9000, spec_accept_len=1.5)))


def _sglang_params(era: str, i: int, spec: bool) -> RunParams:
    hybrid = era != "0.4"
    phase = PhaseParams(concurrency=6, input_len=12_000, output_len=900, decode_tps=40.0, preemptions=(8.0,),
                        spec_accept_len=2.4 if spec else None, spec_jitter=0.1, jit_compiles=1)
    return RunParams(engine="sglang", era=era, seed=i, tp=4 if spec else 1, spec_tokens=3 if spec else 0,
                     hybrid_ssm=hybrid, max_num_batched_tokens=4096, warnings=("fp8_kv_scale",),
                     startup=StartupParams(mamba_gib=2.0 if hybrid else 0.0, mamba_slots=32, draft_load_s=1.0,
                                           draft_model="d" if spec else None, draft_kv_gib=0.5),
                     style=LogStyle(wrapper=WRAPPERS[i % 3], color=spec, metrics_poll_s=6.0),
                     phases=(phase, replace(phase, concurrency=2, input_len=2000)))


def _lines(params: RunParams) -> list[str]:
    return [G.strip(line)[0] for line in emulate(params).lines]


@pytest.mark.parametrize("era", [e.name for e in VLLM_ERAS])
def test_vllm_lines_match_their_era(era: str) -> None:
    prefix = G.VLLM_PREFIX["0.6" if era == "0.6" else "v1"]
    stats, spec = G.vllm_stats_regex(era), G.vllm_spec_regex(era)
    seen = {"stats": 0, "spec": 0, "engine": 0}
    for i in range(3):
        for line in _lines(_vllm_params(era, i)):
            m = prefix.match(line)
            if "Avg prompt throughput" in line:
                assert m and stats.fullmatch(m.group("msg")), line
                seen["stats"] += 1
            elif "SpecDecoding metrics" in line or "Speculative metrics" in line:
                assert m and spec.fullmatch(m.group("msg")), line
                seen["spec"] += 1
            if G.re.search(r"(?:INFO|WARNING) \d\d-\d\d \d\d:\d\d:\d\d ", line):
                assert m, f"engine line with a malformed prefix: {line!r}"
                seen["engine"] += 1
    assert seen["stats"] > 10 and seen["spec"] > 5 and seen["engine"] > 50


@pytest.mark.parametrize("era", [e.name for e in SGLANG_ERAS])
@pytest.mark.parametrize("spec", [False, True])
def test_sglang_lines_match_their_era(era: str, spec: bool) -> None:
    prefill, decode = G.sglang_prefill_regex(era), G.sglang_decode_regex(era)
    counts = {"prefill": 0, "decode": 0}
    for i in range(2):
        for line in _lines(_sglang_params(era, i, spec)):
            m = G.SGLANG_PREFIX.match(line)
            if line.startswith("[20"):
                assert m, line
            if "Prefill batch" in line:
                assert m and prefill.fullmatch(m.group("msg")), line
                counts["prefill"] += 1
            elif "Decode batch" in line:
                assert m and decode.fullmatch(m.group("msg")), line
                assert ("accept len" in line) == spec
                counts["decode"] += 1
    assert counts["prefill"] > 5 and counts["decode"] > 20


def test_rank_brackets_follow_tp() -> None:
    ranks = {G.SGLANG_PREFIX.match(line).group("ranks")
             for line in _lines(_sglang_params("0.5.14", 0, True)) if G.SGLANG_PREFIX.match(line)}
    assert ranks == {"", " TP0", " TP1", " TP2", " TP3"}
    single = {G.SGLANG_PREFIX.match(line).group("ranks")
              for line in _lines(_sglang_params("0.5.14", 0, False)) if G.SGLANG_PREFIX.match(line)}
    assert single == {""}


@pytest.mark.skipif(not DOCS.exists(), reason="../shared/docs not available")
def test_templates_are_quoted_from_the_docs() -> None:
    vllm_doc = (DOCS / "vllm-log-formats.md").read_text(encoding="utf-8")
    sglang_doc = (DOCS / "sglang-log-formats.md").read_text(encoding="utf-8")
    for template in (*G.VLLM_VERBATIM, G.VLLM_STATS_V0[:-1], G.VLLM_SPEC_V0):
        assert template in vllm_doc, template
    for template in G.SGLANG_VERBATIM:
        assert template in sglang_doc, template
