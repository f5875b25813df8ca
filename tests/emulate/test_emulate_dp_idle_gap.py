"""Data-parallel runs with two load phases separated by an idle gap, where a DP group / engine
that sat idle in the first phase takes requests in the second.

vLLM engines log on the API server's wall-clock interval, so they stay aligned and the analysis
must find the truth's windows in both phases, per-engine or aggregated logging alike. SGLang DP
groups count their own decode steps, so after the idle phase their Decode lines drift apart
(`dp_aligned` false): the truth then states no combined stable window for the second phase,
while the analysis still pairs the groups' lines (the known gap, marked xfail below).
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
pytest.register_assert_rewrite("dp_helpers")  # its asserts then report values, as a test's do
from dp_helpers import (  # noqa: E402
    STARTUP, analyse, assert_window_as_stated, assert_windows_match_the_truth, stable_lines, window,
)

from logparse.emulate import LogStyle, PhaseParams, RunParams  # noqa: E402

QUIET = LogStyle(access_log=False)


Phases = tuple[PhaseParams, PhaseParams]


def two_phases(first: PhaseParams, split1: tuple[int, ...], split2: tuple[int, ...], n2: int) -> Phases:
    """Phase 1 with `split1` (empty: round-robin), then after a 60 s idle gap phase 2 with N = `n2`."""
    second = dataclasses.replace(first, concurrency=n2, dp_split=split2, gap_s=60.0)
    return dataclasses.replace(first, dp_split=split1), second


VLLM_PHASE = PhaseParams(concurrency=2, input_len=1000, output_len=1500, decode_tps=20.0, noise=0.02)
VLLM_CASES = {
    # engine 1 idle in phase 1 (round-robin, N=1 < dp), both busy in phase 2
    "round_robin": two_phases(dataclasses.replace(VLLM_PHASE, concurrency=1), (), (), 2),
    # uneven splits: engines 1 and 3 idle, then all four busy
    "split": two_phases(VLLM_PHASE, (1, 0, 1, 0), (2, 1, 1, 2), 6),
}

SGLANG_PHASE = PhaseParams(concurrency=1, input_len=300, output_len=300, decode_tps=15.0, noise=0.0)
SGLANG_CASES = {
    # group 1 idle while group 0 decodes N=1, then N=2 round-robin (dp_interleave 1)
    "round_robin": RunParams(engine="sglang", tp=2, dp=2, startup=STARTUP, style=QUIET,
                             phases=two_phases(SGLANG_PHASE, (), (), 2)),
    # four groups, groups 1 and 3 idle in phase 1, salted line order, noisy decode
    "split_interleaved": RunParams(
        engine="sglang", era="0.5.14", seed=3, tp=4, dp=4, dp_interleave=37, max_num_batched_tokens=16_384,
        startup=STARTUP, style=QUIET,
        phases=two_phases(dataclasses.replace(SGLANG_PHASE, concurrency=3, output_len=600, noise=0.02),
                          (2, 0, 1, 0), (1, 2, 1, 2), 6)),
}


def vllm_params(case: str, era: str, aggregate: bool) -> RunParams:
    """The vLLM run of `case`: dp engines, logged per engine or aggregated."""
    phases = VLLM_CASES[case]
    dp = 2 if case == "round_robin" else 4
    return RunParams(engine="vllm", era=era, seed=11, dp=dp, aggregate_engine_logging=aggregate,
                     startup=STARTUP, style=QUIET, phases=phases)


@pytest.mark.parametrize("case", sorted(VLLM_CASES))
@pytest.mark.parametrize(("era", "aggregate"),
                         [("0.10", False), ("0.31", False), ("0.11", True), ("0.31", True)])
def test_vllm_dp_windows_after_an_idle_phase(case: str, era: str, aggregate: bool) -> None:
    params = vllm_params(case, era, aggregate)
    truth_phases = assert_windows_match_the_truth(params)
    assert 0 in truth_phases[0]["dp_split"] and 0 not in truth_phases[1]["dp_split"]  # the scenario


@pytest.mark.parametrize("case", sorted(SGLANG_CASES))
def test_sglang_dp_groups_drift_after_an_idle_phase(case: str) -> None:
    """The scenario holds (a group idle in phase 1, the groups drifted in phase 2) and the
    analysis gets what it can agree on with the truth: both phases, their N, phase 1's window."""
    params = SGLANG_CASES[case]
    truth, _lines, a = analyse(params)
    phases = truth["phases"]
    assert 0 in phases[0]["dp_split"] and 0 not in phases[1]["dp_split"]
    assert [p["dp_aligned"] for p in phases] == [True, False]
    assert a.phases.height == 2
    assert a.phases.get_column("concurrency").to_list() == [p["concurrency"] for p in phases]
    assert_window_as_stated(a, 1, phases[0])


@pytest.mark.xfail(strict=True, reason=(
    "known gap: after an idle phase SGLang DP groups' Decode lines drift apart; the truth states "
    "no combined stable window for phase 2 (stable None, dp_aligned False), but "
    "analysis/samples.py decode_samples pairs each group's latest line within 2.5 intervals "
    "(join_asof) and reports a stable window"))
@pytest.mark.parametrize("case", sorted(SGLANG_CASES))
def test_sglang_dp_second_phase_window_after_an_idle_phase(case: str) -> None:
    truth, _lines, a = analyse(SGLANG_CASES[case])
    expected = truth["phases"][1]["stable"]
    got = window(a, 2)
    found = None if got is None else {"samples": got["samples"], "gen_tps_mean": got["gen_tps_mean"],
                                      "lines": stable_lines(a, 2)}
    assert found == (None if expected is None else {
        "samples": expected["samples"], "gen_tps_mean": expected["gen_tps_mean"], "lines": expected["lines"]})
