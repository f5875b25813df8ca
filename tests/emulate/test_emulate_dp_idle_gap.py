"""Data-parallel runs with two load phases separated by an idle gap, where a DP group / engine
that sat idle in the first phase takes requests in the second.

vLLM engines log on the API server's wall-clock interval, so they stay aligned and the analysis
must find the truth's windows in both phases, per-engine or aggregated logging alike. SGLang DP
groups count their own decode steps, so after the idle phase their Decode lines drift apart
(`dp_aligned` false): they print in turn, not together. A sample is then one round of the
groups' lines (one line of each busy group, each line counted once), in the truth and in the
analysis alike: the window's gen throughput is the sum of the groups' mean rates, and its
sample count the number of rounds, not of lines.
"""
from __future__ import annotations

import dataclasses
import re
import statistics
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
pytest.register_assert_rewrite("dp_helpers")  # its asserts then report values, as a test's do
from dp_helpers import (  # noqa: E402
    FAST, STARTUP, analyse, assert_window_as_stated, assert_windows_match_the_truth, stable_lines, window,
)

from logparse.emulate import SGLANG_ERAS, LogStyle, PhaseParams, RunParams  # noqa: E402

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
    analysis finds both phases, their N and the truth's stable windows."""
    params = SGLANG_CASES[case]
    truth, _lines, a = analyse(params)
    phases = truth["phases"]
    assert 0 in phases[0]["dp_split"] and 0 not in phases[1]["dp_split"]
    assert [p["dp_aligned"] for p in phases] == [True, False]
    assert a.phases.height == 2
    assert a.phases.get_column("concurrency").to_list() == [p["concurrency"] for p in phases]
    for i, phase in enumerate(phases, start=1):
        assert_window_as_stated(a, i, phase)


# Phase 2 of each SGLang case: one sample per round of the groups' lines. round_robin: the two
# groups print about a second apart, 6 + 6 lines make 6 samples (at the second group's lines),
# each 15 + 15 tok/s; group 0's last line has no partner (group 1 finished first) and is no
# sample. split_interleaved: the four groups print within one second, one step apart.
SECOND_PHASE = {
    "round_robin": {"samples": 6, "gen_tps_mean": 30.0, "lines": [41, 43, 45, 47, 49, 51]},
    "split_interleaved": {"samples": 14, "gen_tps_mean": pytest.approx(89.29857142857144, rel=1e-12),
                          "lines": list(range(89, 142, 4))},
}


@pytest.mark.parametrize("case", sorted(SGLANG_CASES))
def test_sglang_dp_second_phase_window_after_an_idle_phase(case: str) -> None:
    truth, lines, a = analyse(SGLANG_CASES[case])
    expected = truth["phases"][1]["stable"]
    got = window(a, 2)
    assert got is not None and expected is not None
    found = {"samples": got["samples"], "gen_tps_mean": got["gen_tps_mean"], "lines": stable_lines(a, 2)}
    assert found == {"samples": expected["samples"], "gen_tps_mean": pytest.approx(expected["gen_tps_mean"]),
                     "lines": expected["lines"]}
    assert found == SECOND_PHASE[case]
    # Each round holds one line of every group (in group order), and the window's throughput is
    # the sum over the groups of each group's mean printed rate over its lines in the window.
    rounds = expected["group_lines"]
    groups = [g for g, n in enumerate(truth["phases"][1]["dp_split"]) if n]
    assert all(len(r) == len(groups) for r in rounds)
    for j, g in enumerate(groups):
        assert all(f"DP{g} " in lines[r[j] - 1] for r in rounds)
    rate = {i + 1: float(m.group(1)) for i, line in enumerate(lines)
            if (m := re.search(r"gen throughput \(token/s\): ([\d.]+)", line))}
    by_group = [statistics.fmean(rate[r[j]] for r in rounds) for j in range(len(groups))]
    assert got["gen_tps_mean"] == pytest.approx(sum(by_group), rel=1e-9)


BUDGET = 16_384


@st.composite
def drifted_sglang_runs(draw: st.DrawFn) -> RunParams:
    """SGLang DP runs whose second phase gives requests to groups left idle in the first: those
    groups count fewer decode steps, so phase 2's Decode lines drift apart (unless the busy
    groups' step count happens to be a multiple of the logging interval)."""
    era = draw(st.sampled_from([e.name for e in SGLANG_ERAS]))
    dp = draw(st.sampled_from([2, 4, 8]))
    tp = draw(st.sampled_from(sorted({dp, 8})))
    idle = draw(st.sets(st.integers(0, dp - 1), min_size=1, max_size=dp - 1))
    phases = []
    for p in range(2):
        split = tuple(0 if p == 0 and g in idle else draw(st.integers(1, 4)) for g in range(dp))
        phases.append(PhaseParams(
            concurrency=sum(split), dp_split=split,
            input_len=draw(st.integers(300, BUDGET // max(split))),   # one prefill step per group
            output_len=draw(st.integers(300, 900)), gap_s=float(draw(st.integers(60, 120))),
            decode_tps=float(draw(st.integers(15, 60))),
            decode_ctx_slowdown=draw(st.sampled_from([0.0, 0.5])),
            noise=draw(st.sampled_from([0.0, 0.02, 0.06])),
        ))
    return RunParams(engine="sglang", era=era, seed=draw(st.integers(0, 10_000)), tp=tp, dp=dp,
                     dp_interleave=draw(st.integers(0, 1000)), max_num_batched_tokens=BUDGET,
                     startup=STARTUP, phases=tuple(phases), style=QUIET)


@FAST
@given(drifted_sglang_runs())
def test_drifted_dp_windows_match_the_truth(params: RunParams) -> None:
    """Whatever the drift (groups a step or most of an interval apart, their lines in one
    second or not, one or several lines per second), the analysis pairs the groups' lines into
    the truth's rounds: the same stable samples, throughput and KV context per request."""
    truth, _lines, a = analyse(params)
    phases = truth["phases"]
    assume(not phases[1]["dp_aligned"])
    assert a.phases.height == 2
    for i, phase in enumerate(phases, start=1):
        assert_window_as_stated(a, i, phase)
    busy = sum(1 for c in phases[1]["dp_split"] if c)
    assert all(len(g) == busy for g in phases[1]["stable"]["group_lines"])
