"""SGLang DP attention (`--dp-size N --enable-dp-attention`): the emulator renders one Prefill /
Decode line per DP group, and the analysis adds the groups up into the figures the truth states.

Hypothesis picks DP runs (dp 2/4/8, tp = dp or 8, uneven request splits, every SGLang era, which
all print ` DP{g}` rank tokens); each is rendered, parsed and analysed like a real log.
"""
from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
pytest.register_assert_rewrite("dp_helpers")  # its asserts then report values, as a test's do
import emulate_grammar as G  # noqa: E402
from dp_helpers import (  # noqa: E402
    FAST, STARTUP, analyse, assert_windows_match_the_truth, stable_lines, window,
)

from logparse.analysis import Analysis  # noqa: E402
from logparse.emulate import (  # noqa: E402
    SGLANG_ERAS, LogStyle, PhaseParams, RunParams, emulate,
)

BUDGET = 16_384
PREFIX = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?P<ranks>(?: [A-Z]+\d+)*)\] (?P<msg>.*)$")


@st.composite
def splits(draw: st.DrawFn, dp: int, idle: frozenset[int]) -> tuple[int, tuple[int, ...]]:
    """N and the per-group counts: round-robin (empty split, every group busy) or a drawn uneven
    split leaving the `idle` groups without requests (they print no Decode lines).

    The same groups stay idle in every phase: a group idle in one phase and busy in the next
    counts fewer decode steps than the others and prints at other instants from then on
    (`dp_aligned` false in the truth, see `test_groups_drift_apart_after_an_idle_phase`; such
    runs are drawn in `test_emulate_dp_idle_gap.py`)."""
    if not idle and draw(st.booleans()):
        return draw(st.integers(dp, 3 * dp)), ()
    counts = [0 if g in idle else draw(st.integers(1, 4)) for g in range(dp)]
    return sum(counts), tuple(counts)


@st.composite
def dp_runs(draw: st.DrawFn) -> RunParams:
    era = draw(st.sampled_from([e.name for e in SGLANG_ERAS]))
    dp = draw(st.sampled_from([2, 4, 8]))
    tp = draw(st.sampled_from(sorted({dp, 8})))
    ep = draw(st.sampled_from([1, tp])) if era != "0.4" else 1
    idle = frozenset(draw(st.sets(st.integers(0, dp - 1), max_size=dp - 1)))
    phases = []
    for _ in range(draw(st.integers(1, 2))):
        n, split = draw(splits(dp, idle))
        per_group = max(split) if split else -(-n // dp)
        phases.append(PhaseParams(
            concurrency=n, dp_split=split,
            # every group prefills its whole batch in one step, so the groups start decoding
            # (and count decode steps) together
            input_len=draw(st.integers(300, BUDGET // per_group)),
            # >= 300 decode steps: many samples at N, so every phase has a stable window
            output_len=draw(st.integers(300, 900)), gap_s=float(draw(st.integers(60, 120))),
            decode_tps=float(draw(st.integers(15, 60))),
            decode_ctx_slowdown=draw(st.sampled_from([0.0, 0.5])),
            noise=draw(st.sampled_from([0.0, 0.02, 0.06])),
        ))
    return RunParams(engine="sglang", era=era, seed=draw(st.integers(0, 10_000)), tp=tp, dp=dp, ep_size=ep,
                     dp_interleave=draw(st.integers(1, 1000)), max_num_batched_tokens=BUDGET,
                     startup=STARTUP, phases=tuple(phases), style=LogStyle(access_log=False))


def figures(a: Analysis) -> list[tuple[Any, ...]]:
    out = []
    for ph in a.phases.iter_rows(named=True):
        w = window(a, ph["phase"])
        out.append((ph["concurrency"], stable_lines(a, ph["phase"]),
                    None if w is None else (w["samples"], w["gen_tps_mean"], w["per_request_tps"])))
    return out


@FAST
@given(dp_runs())
def test_dp_stable_window_matches_the_truth(params: RunParams) -> None:
    for tp in assert_windows_match_the_truth(params):
        assert tp["dp_aligned"]
        assert len(tp["stable"]["group_lines"][0]) == sum(1 for c in tp["dp_split"] if c)


@FAST
@given(dp_runs())
def test_dp_lines_carry_the_group_ranks_and_interleave(params: RunParams) -> None:
    run = emulate(params)
    era = run.truth["era"]
    attn_tp = params.tp // params.dp
    decode_ranks: list[str] = []
    for line in run.lines:
        m = PREFIX.match(line)
        if m is None or not m.group("msg").startswith(("Decode batch", "Prefill batch")):
            continue
        assert G.SGLANG_PREFIX.match(line)
        regex = G.sglang_decode_regex(era) if m.group("msg").startswith("Decode") else G.sglang_prefill_regex(era)
        assert regex.fullmatch(m.group("msg")), line
        tokens = m.group("ranks").split()
        assert tokens[0].startswith("DP") and tokens[1].startswith("TP")
        g, r = int(tokens[0][2:]), int(tokens[1][2:])
        assert r == g * attn_tp                           # the group's attention-TP rank 0 prints
        assert tokens[2:] == ([f"EP{r}"] if params.ep_size > 1 else [])
        if m.group("msg").startswith("Decode batch"):
            decode_ranks.append(tokens[0])
    # one warm-up Prefill line per group, every group decodes
    warm = [ln for ln in run.lines[:run.truth["startup"]["ready_line"]] if "Prefill batch" in ln]
    assert len(warm) == params.dp
    busy = set()
    for phase in run.truth["phases"]:
        busy |= {f"DP{g}" for g, c in enumerate(phase["dp_split"]) if c}
    assert set(decode_ranks) == busy
    # the groups' lines of one instant are not printed in group order every time
    if all(sum(1 for c in phase["dp_split"] if c) > 2 for phase in run.truth["phases"]):
        width = sum(1 for c in run.truth["phases"][0]["dp_split"] if c)
        blocks = [decode_ranks[i:i + width] for i in range(0, 4 * width, width)]
        assert any(b != sorted(b, key=lambda t: int(t[2:])) for b in blocks)


@FAST
@given(dp_runs())
def test_interleaving_order_changes_no_figure(params: RunParams) -> None:
    _t, lines_a, a = analyse(params)
    _t, lines_b, b = analyse(dataclasses.replace(params, dp_interleave=0))
    assert sorted(lines_a) == sorted(lines_b)
    assert figures(a) == figures(b)


def test_dp_params_are_validated() -> None:
    base = RunParams(engine="sglang", tp=8, dp=4)
    emulate(dataclasses.replace(base, phases=(PhaseParams(concurrency=5, dp_split=(2, 0, 1, 2)),)))
    for bad, words in (
        (dataclasses.replace(base, tp=6), "multiple of dp"),
        (dataclasses.replace(base, engine="vllm", era="0.6"), "SGLang only"),   # V0: no DP engines
        (dataclasses.replace(base, era="0.4", ep_size=8), "EP rank token"),
        (dataclasses.replace(base, ep_size=2), "ep_size must be 1 or tp"),
        (dataclasses.replace(base, phases=(PhaseParams(concurrency=5, dp_split=(2, 2)),)), "dp_split"),
        (dataclasses.replace(base, phases=(PhaseParams(preemptions=(3.0,)),)), "preemptions"),
    ):
        with pytest.raises(ValueError, match=words):
            emulate(bad)


def test_params_round_trip_and_dp1_serialisation() -> None:
    dp = RunParams(engine="sglang", tp=8, dp=4, ep_size=8,
                   phases=(PhaseParams(concurrency=5, dp_split=(2, 0, 1, 2)),))
    assert RunParams.from_dict(dp.to_dict()) == dp
    plain = RunParams(engine="sglang")
    assert "dp" not in plain.to_dict() and "dp_split" not in plain.to_dict()["phases"][0]
    assert RunParams.from_dict(plain.to_dict()) == plain


def test_groups_drift_apart_after_an_idle_phase() -> None:
    """N=1 on two groups, then N=2: group 1 sat idle while group 0 counted 300 decode steps, so
    in phase 2 their Decode lines (every 40 steps of their own) no longer coincide. The truth's
    samples are then rounds: one line of each group, printed in turn (here a second or two
    apart), so 6 samples of 15 + 15 tok/s from 6 + 6 lines, not 12."""
    phase = PhaseParams(concurrency=1, input_len=300, output_len=300, decode_tps=15.0, noise=0.0)
    params = RunParams(engine="sglang", tp=2, dp=2, startup=STARTUP, style=LogStyle(access_log=False),
                       phases=(phase, dataclasses.replace(phase, concurrency=2)))
    run = emulate(params)
    truth = run.truth
    assert [p["dp_split"] for p in truth["phases"]] == [[1, 0], [1, 1]]
    assert [p["dp_aligned"] for p in truth["phases"]] == [True, False]
    stable = truth["phases"][1]["stable"]
    assert truth["phases"][0]["stable"] is not None and stable is not None
    assert (stable["samples"], stable["gen_tps_mean"], stable["gen_tps_cv"]) == (6, 30.0, 0.0)
    stamp = {i: PREFIX.match(line) for i, line in enumerate(run.lines, start=1)}
    for g0, g1 in stable["group_lines"]:
        first, second = stamp[g0], stamp[g1]
        assert first and second
        assert (first.group("ranks").split()[0], second.group("ranks").split()[0]) == ("DP0", "DP1")
        assert run.lines[g0 - 1][:21] != run.lines[g1 - 1][:21]   # not printed in the same second
