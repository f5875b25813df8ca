"""vLLM `--aggregate-engine-logging` (0.11.2+) with data parallelism: the API server prints one
`{N} Engines Aggregated:` stats line per interval instead of one `Engine 00k:` line per engine,
and the analysis must read it to the figures the truth states.

Hypothesis picks DP runs as `test_emulate_vllm_dp.py` does (dp 2/4, tp 1/2, optional expert
parallelism, uneven splits with idle engines), in the eras that have the flag; each is rendered,
parsed and analysed like a real log, and compared with the same seed logged per engine.
"""
from __future__ import annotations

import dataclasses
import re
import sys
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
pytest.register_assert_rewrite("dp_helpers")  # its asserts then report values, as a test's do
import emulate_grammar as G  # noqa: E402
from dp_helpers import FAST, STARTUP, analyse, assert_windows_match_the_truth, window  # noqa: E402

from logparse.emulate import VLLM_ERAS, EmulatedRun, LogStyle, PhaseParams, RunParams, emulate  # noqa: E402
from logparse.ingest import ingest  # noqa: E402

AGGREGATING_ERAS = [e.name for e in VLLM_ERAS if e.aggregate_logging]
STATS_MSG = re.compile(r"\[loggers\.py:\d+\] (?P<msg>(?:\d+ Engines Aggregated|Engine \d{3}): Avg prompt.*)$")
SPEC_MSG = re.compile(r"\] (?P<msg>SpecDecoding metrics: .*)$")


@st.composite
def dp_phase(draw: st.DrawFn, dp: int) -> PhaseParams:
    """One load phase: round-robin N (N < dp leaves engines idle) or an uneven split with idle
    engines, decoding >= 40 s so several 10 s intervals see all N requests decoding."""
    if draw(st.booleans()):
        n, split = draw(st.integers(1, 3 * dp)), ()
    else:
        idle = draw(st.sets(st.integers(0, dp - 1), max_size=dp - 1))
        split = tuple(0 if d in idle else draw(st.integers(1, 4)) for d in range(dp))
        n = sum(split)
    return PhaseParams(
        concurrency=n, dp_split=split, input_len=draw(st.integers(300, 6000)),
        output_len=draw(st.integers(1200, 2000)), gap_s=float(draw(st.integers(60, 120))),
        decode_tps=float(draw(st.integers(15, 30))), decode_ctx_slowdown=draw(st.sampled_from([0.0, 0.5])),
        noise=draw(st.sampled_from([0.0, 0.02, 0.06])),
    )


@st.composite
def aggregated_runs(draw: st.DrawFn) -> RunParams:
    """A vLLM DP run logged with --aggregate-engine-logging."""
    dp = draw(st.sampled_from([2, 4]))
    tp = draw(st.sampled_from([1, 2]))
    phases = tuple(draw(dp_phase(dp)) for _ in range(draw(st.integers(1, 2))))
    return RunParams(engine="vllm", era=draw(st.sampled_from(AGGREGATING_ERAS)),
                     seed=draw(st.integers(0, 10_000)), tp=tp, dp=dp,
                     ep_size=draw(st.sampled_from([1, dp * tp])), aggregate_engine_logging=True, startup=STARTUP, phases=phases,
                     style=LogStyle(access_log=False))


def per_engine(params: RunParams) -> RunParams:
    """The same run logged one line per engine (the default)."""
    return dataclasses.replace(params, aggregate_engine_logging=False)


def stamp(bare: str) -> str:
    """The HH:MM:SS of a vLLM line (ANSI stripped)."""
    m = re.search(r" \d\d-\d\d (\d\d:\d\d:\d\d) ", bare)
    assert m is not None, bare
    return m.group(1)


def stats_by_time(run: EmulatedRun) -> dict[str, list[dict[str, float]]]:
    """The `key: number` fields of every stats line, grouped by printed timestamp."""
    out: dict[str, list[dict[str, float]]] = {}
    for line in run.lines:
        bare = G.strip(line)[0]
        m = STATS_MSG.search(bare)
        if m:
            out.setdefault(stamp(bare), []).append(G.fields(m.group("msg").split(": ", 1)[1]))
    return out


# -- (a) the analysis of an aggregated log matches the truth -----------------------------------


@FAST
@given(aggregated_runs())
def test_aggregated_stable_window_matches_the_truth(params: RunParams) -> None:
    for tp in assert_windows_match_the_truth(params):
        assert "engine_lines" not in tp["stable"]        # one line per tick, nothing to combine


def test_aggregated_kv_context_per_request() -> None:
    # An aggregated line's KV usage is the mean over its engines: its tokens span every engine's pool.
    phase = PhaseParams(concurrency=5, dp_split=(3, 2), input_len=2000, output_len=1500, decode_tps=20.0,
                        noise=0.02)
    params = RunParams(engine="vllm", era="0.11", dp=2, tp=2, aggregate_engine_logging=True, startup=STARTUP,
                       phases=(phase,), style=LogStyle(access_log=False))
    truth, _lines, a = analyse(params)
    got = window(a, 1)
    assert got is not None
    assert got["context_tokens_per_request"] == pytest.approx(
        truth["phases"][0]["stable"]["context_tokens_per_request_printed"], rel=1e-9)


# -- (b) aggregation changes no phase and, within rounding, no stable throughput ---------------


@FAST
@given(aggregated_runs())
def test_aggregation_changes_no_phase_and_no_stable_throughput(params: RunParams) -> None:
    _t, _l, agg = analyse(params)
    _t, _l, each = analyse(per_engine(params))
    cols = ["phase", "start", "end", "concurrency"]
    assert agg.phases.select(cols).to_dicts() == each.phases.select(cols).to_dicts()
    for phase in range(1, agg.phases.height + 1):
        a, b = window(agg, phase), window(each, phase)
        assert a is not None and b is not None
        assert (a["samples"], a["start"], a["end"]) == (b["samples"], b["start"], b["end"])
        # one rounding of the summed rate against one rounding (0.05) per engine line
        assert a["gen_tps_mean"] == pytest.approx(b["gen_tps_mean"], abs=0.05 * (params.dp + 1))


@FAST
@given(aggregated_runs())
def test_aggregated_line_combines_the_engine_lines(params: RunParams) -> None:
    """Tick by tick, the aggregated line holds the engines' lines of the same seed combined:
    Running and Waiting summed, throughputs summed (within rounding), KV cache usage their mean
    over all dp engines (a silent engine is idle: 0 %)."""
    agg = stats_by_time(emulate(params))
    each = stats_by_time(emulate(per_engine(params)))
    assert agg and agg.keys() == each.keys()
    tol = 0.05 * (params.dp + 1)
    for ts, (line,) in agg.items():
        engines = each[ts]
        assert line["Running"] == sum(e["Running"] for e in engines)
        assert line["Waiting"] == sum(e["Waiting"] for e in engines)
        for rate in ("Avg generation throughput", "Avg prompt throughput"):
            assert line[rate] == pytest.approx(sum(e[rate] for e in engines), abs=tol)
        assert line["GPU KV cache usage"] == pytest.approx(
            sum(e["GPU KV cache usage"] for e in engines) / params.dp, abs=0.1)


def test_one_spec_decoding_line_for_all_engines() -> None:
    """The aggregated logger also observes every engine's drafts: one SpecDecoding line per
    tick, after the aggregated stats line, counting the engines' drafts together."""
    phase = PhaseParams(concurrency=6, dp_split=(4, 2), input_len=1000, output_len=1500, decode_tps=20.0,
                        spec_accept_len=2.5)
    params = RunParams(engine="vllm", era="0.26", dp=2, spec_tokens=3, aggregate_engine_logging=True,
                       startup=STARTUP, phases=(phase,), style=LogStyle(access_log=False))

    def drafted(run: EmulatedRun) -> list[tuple[str, int]]:
        msgs = [G.strip(line)[0] for line in run.lines]
        kinds = ["stats" if STATS_MSG.search(m) else "spec" if SPEC_MSG.search(m) else None for m in msgs]
        out = []
        for i, (msg, kind) in enumerate(zip(msgs, kinds, strict=True)):
            if kind == "spec":
                assert kinds[i - 1] == "stats"           # right after a stats line
                m = SPEC_MSG.search(msg)
                assert m is not None and G.vllm_spec_regex("0.26").fullmatch(m.group("msg"))
                out.append((stamp(msgs[i - 1]), int(G.fields(m.group("msg"))["Drafted"])))
        return out

    agg, each = drafted(emulate(params)), drafted(emulate(per_engine(params)))
    assert agg and len(agg) < len(each)
    totals: dict[str, int] = {}
    for ts, n in each:
        totals[ts] = totals.get(ts, 0) + n
    assert agg == list(totals.items())


# -- (c) every aggregated line parses as engine_stats of the N engines --------------------------


@FAST
@given(aggregated_runs())
def test_every_aggregated_line_parses_as_engine_stats(params: RunParams) -> None:
    run = emulate(params)
    era = run.truth["era"]
    rendered = {i for i, line in enumerate(run.lines, start=1) if "Engines Aggregated: " in line}
    assert rendered
    blocks_line = re.compile(r"\(APIServer pid=\d+\) INFO .*\] " + G.rx(G.VLLM_ENGINES_BLOCKS) + "$")
    assert sum(1 for line in run.lines if blocks_line.match(G.strip(line)[0])) == 1
    assert not any(re.search(r"Engine \d{3}: ", line) for line in run.lines)
    for i in rendered:
        m = STATS_MSG.search(G.strip(run.lines[i - 1])[0])
        assert m is not None and G.vllm_stats_regex(era, aggregated=True).fullmatch(m.group("msg"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        run.write(path)
        tables = ingest(path, engine="vllm", year=int(params.start[:4])).tables
    stats = tables["engine_stats"]
    assert set(stats.get_column("line_no").to_list()) == rendered
    assert stats.get_column("engines_aggregated").to_list() == [params.dp] * len(rendered)
    assert stats.get_column("engine_idx").null_count() == stats.height
    blocks = tables["kv_pool"].filter(pl.col("engines_aggregated").is_not_null())
    assert blocks.select("engines_aggregated", "gpu_blocks").rows() == [
        (params.dp, params.dp * STARTUP.kv_pool_tokens // STARTUP.block_size)]


# -- (d) refused where the real engine has no such line ----------------------------------------


def test_aggregate_engine_logging_is_validated() -> None:
    base = RunParams(engine="vllm", era="0.11", dp=2, aggregate_engine_logging=True)
    for era in ("0.11.2", "0.26", "0.31"):
        emulate(dataclasses.replace(base, era=era))
    for bad, words in (
        (dataclasses.replace(base, engine="sglang", era=None, tp=2), "SGLang prints no aggregated"),
        (dataclasses.replace(base, era="0.10"), "0.11.2"),
        (dataclasses.replace(base, era="0.11.0"), "0.11.2"),
        (dataclasses.replace(base, era="0.6", dp=1), "0.11.2"),
        (dataclasses.replace(base, dp=1), "needs dp > 1"),
    ):
        with pytest.raises(ValueError, match=words):
            emulate(bad)


def test_the_setting_round_trips_and_stays_out_of_default_params() -> None:
    params = RunParams(engine="vllm", era="0.11", dp=2, aggregate_engine_logging=True)
    assert params.to_dict()["aggregate_engine_logging"] is True
    assert RunParams.from_dict(params.to_dict()) == params
    assert "aggregate_engine_logging" not in RunParams(engine="vllm", dp=2).to_dict()
