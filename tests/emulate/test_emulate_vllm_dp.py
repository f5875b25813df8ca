"""vLLM V1 data parallelism (`--data-parallel-size N`): the emulator renders one `Engine 00k:`
stats line per engine per interval, and the analysis adds the engines up into the figures the
truth states.

Hypothesis picks DP runs (dp 2/4, tp 1/2, optional expert parallelism, uneven request splits
with idle engines, every V1 era); each is rendered, parsed and analysed like a real log. The
structure follows `test_emulate_dp.py` (SGLang DP attention).
"""
from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
pytest.register_assert_rewrite("dp_helpers")  # its asserts then report values, as a test's do
import emulate_grammar as G  # noqa: E402
from dp_helpers import FAST, STARTUP, analyse, assert_windows_match_the_truth, window  # noqa: E402

from logparse.emulate import (  # noqa: E402
    VLLM_ERAS, LogStyle, PhaseParams, RunParams, emulate,
)

V1_ERAS = [e.name for e in VLLM_ERAS if e.v1]
ENGINE_LINE = re.compile(r"\((?P<proc>[A-Za-z_][\w]*(?:[ _][\w=]+)*?) pid=(?P<pid>\d+)\) "
                         r"(?:INFO|WARNING) \d\d-\d\d (?P<ts>\d\d:\d\d:\d\d) \[[\w./-]+:\d+\] (?P<msg>.*)$")
STATS = re.compile(r"Engine (\d{3}): Avg prompt throughput")


@st.composite
def splits(draw: st.DrawFn, dp: int) -> tuple[int, tuple[int, ...]]:
    """N and the per-engine counts: round-robin (empty split; N < dp leaves engines idle) or a
    drawn uneven split with 0..dp-1 idle engines. vLLM logs by wall-clock interval, not by
    decode step, so an engine idle in one phase and busy in the next stays aligned."""
    if draw(st.booleans()):
        return draw(st.integers(1, 3 * dp)), ()
    idle = draw(st.sets(st.integers(0, dp - 1), max_size=dp - 1))
    counts = [0 if d in idle else draw(st.integers(1, 4)) for d in range(dp)]
    return sum(counts), tuple(counts)


@st.composite
def vllm_dp_runs(draw: st.DrawFn) -> RunParams:
    dp = draw(st.sampled_from([2, 4]))
    tp = draw(st.sampled_from([1, 2]))
    phases = []
    for _ in range(draw(st.integers(1, 2))):
        n, split = draw(splits(dp))
        phases.append(PhaseParams(
            concurrency=n, dp_split=split,
            input_len=draw(st.integers(300, 6000)),
            # >= 40 s of decoding: several 10 s intervals with all N requests decoding
            output_len=draw(st.integers(1200, 2000)), gap_s=float(draw(st.integers(60, 120))),
            decode_tps=float(draw(st.integers(15, 30))),
            decode_ctx_slowdown=draw(st.sampled_from([0.0, 0.5])),
            noise=draw(st.sampled_from([0.0, 0.02, 0.06])),
        ))
    return RunParams(engine="vllm", era=draw(st.sampled_from(V1_ERAS)), seed=draw(st.integers(0, 10_000)),
                     tp=tp, dp=dp, ep_size=draw(st.sampled_from([1, dp * tp])), startup=STARTUP,
                     phases=tuple(phases), style=LogStyle(access_log=False))


def engine_lines(lines: list[str]) -> list[tuple[str, str, str]]:
    """(process label, HH:MM:SS, message) of every vLLM log record, ANSI stripped."""
    out = []
    for line in lines:
        m = ENGINE_LINE.match(G.strip(line)[0])
        if m:
            out.append((m.group("proc"), m.group("ts"), m.group("msg")))
    return out


@FAST
@given(vllm_dp_runs())
def test_vllm_dp_stable_window_matches_the_truth(params: RunParams) -> None:
    for tp in assert_windows_match_the_truth(params):
        # one line per engine holding requests, printed together (consecutive, engine order)
        busy = sum(1 for c in tp["dp_split"] if c)
        for group in tp["stable"]["engine_lines"]:
            assert len(group) >= busy and group == list(range(group[0], group[0] + len(group)))


@FAST
@given(vllm_dp_runs())
def test_vllm_dp_lines_per_engine(params: RunParams) -> None:
    run = emulate(params)
    era = next(e for e in VLLM_ERAS if e.name == run.truth["era"])
    records = engine_lines(run.lines)
    stats_re = G.vllm_stats_regex(era.name)
    # stats: APIServer only, one line per engine per tick, in engine order, busy engines only
    ticks: dict[str, list[int]] = {}
    for proc, ts, msg in records:
        m = STATS.match(msg)
        if m:
            assert proc == "APIServer" and stats_re.fullmatch(msg), msg
            ticks.setdefault(ts, []).append(int(m.group(1)))
    assert ticks
    busy = {d for phase in run.truth["phases"] for d, c in enumerate(phase["dp_split"]) if c}
    assert set().union(*ticks.values()) == busy           # an engine never given requests is silent
    for engines in ticks.values():
        assert engines == sorted(set(engines))
    # start-up: every engine core prints its own KV size and init lines, labelled EngineCore_DP{d}
    for key in ("init engine (profile", "KV cache size:"):
        procs = [proc for proc, _ts, msg in records if key in msg]
        # (engines start side by side, so their lines interleave in no fixed order)
        assert sorted(procs) == [f"EngineCore_DP{d}" for d in range(params.dp)], (key, procs)
    workers = {proc for proc, _ts, msg in records if msg.startswith("Model loading took")}
    if params.tp == 1:
        assert workers == {f"EngineCore_DP{d}" for d in range(params.dp)}
    else:
        ep = [f"_EP{d * params.tp + r}" if params.ep_size > 1 else "" for d in range(params.dp)
              for r in range(params.tp)]
        assert workers == {f"Worker_DP{d}_TP{r}{ep[d * params.tp + r]}" for d in range(params.dp)
                           for r in range(params.tp)}
    pids = {proc: pid for proc, pid in re.findall(r"\((\w+) pid=(\d+)\)", G.strip("\n".join(run.lines))[0])}
    assert len(set(pids.values())) == len(pids)           # one process, one pid


def test_an_idle_engine_prints_nothing_and_adds_nothing() -> None:
    """Engine 001 never gets a request (split 3/0): it prints no stats line (idle suppression),
    and the window is engine 000's alone, N = 3."""
    phase = PhaseParams(concurrency=3, dp_split=(3, 0), input_len=1000, output_len=1500, decode_tps=20.0,
                        noise=0.0)
    params = RunParams(engine="vllm", era="0.11", dp=2, startup=STARTUP, phases=(phase,),
                       style=LogStyle(access_log=False))
    truth, lines, a = analyse(params)
    assert not any("Engine 001:" in line for line in lines)
    stable = truth["phases"][0]["stable"]
    assert stable["engine_lines"] == [[line] for line in stable["lines"]]
    got = window(a, 1)
    assert got is not None and a.phases.row(0, named=True)["concurrency"] == 3
    assert got["samples"] == stable["samples"] and got["gen_tps_mean"] == pytest.approx(stable["gen_tps_mean"])


def test_vllm_dp_params_are_validated() -> None:
    base = RunParams(engine="vllm", tp=2, dp=4)
    emulate(dataclasses.replace(base, ep_size=8, phases=(PhaseParams(concurrency=5, dp_split=(2, 0, 1, 2)),)))
    for bad, words in (
        (dataclasses.replace(base, era="0.6"), "V0"),
        (dataclasses.replace(base, ep_size=2), "dp \\* tp"),
        (dataclasses.replace(base, phases=(PhaseParams(concurrency=5, dp_split=(2, 3)),)), "dp_split"),
        (dataclasses.replace(base, phases=(PhaseParams(preemptions=(3.0,)),)), "preemptions"),
    ):
        with pytest.raises(ValueError, match=words):
            emulate(bad)
