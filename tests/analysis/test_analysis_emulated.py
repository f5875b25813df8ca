"""Property tests over emulated runs: the analysis recovers the emulator's ground truth.

Hypothesis picks run parameters through the emulator's API (`logparse.emulate`); each run is
rendered to a log, parsed and analysed like a real one, and compared with its truth.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

emulate_mod = pytest.importorskip("logparse.emulate")
from logparse.emulate import LogStyle, PhaseParams, RunParams  # noqa: E402

from emulated_runs import FAST, STARTUP, analyse  # noqa: E402

from logparse.analysis import Analysis  # noqa: E402

ERAS = {"vllm": [e.name for e in emulate_mod.VLLM_ERAS], "sglang": [e.name for e in emulate_mod.SGLANG_ERAS]}


@st.composite
def run_params(draw: st.DrawFn) -> RunParams:
    """A small run: 1-3 phases separated by clear idle time, optional speculative decoding."""
    engine = draw(st.sampled_from(["vllm", "sglang"]))
    era = draw(st.sampled_from(ERAS[engine]))
    k = draw(st.sampled_from([0, 0, 3]))
    phases = []
    for _ in range(draw(st.integers(1, 3))):
        phases.append(PhaseParams(
            concurrency=draw(st.integers(1, 12)),
            input_len=draw(st.integers(300, 30_000)),
            output_len=draw(st.integers(400, 1500)),
            gap_s=float(draw(st.integers(60, 240))),
            decode_tps=float(draw(st.integers(15, 60))),
            decode_ctx_slowdown=draw(st.sampled_from([0.0, 0.5, 2.0])),
            noise=draw(st.sampled_from([0.0, 0.02, 0.06])),
            spec_accept_len=draw(st.sampled_from([1.05, 1.8, 2.9])) if k else None,
            spec_jitter=0.05 if k else 0.0,
            stall_s=draw(st.sampled_from([0.0, 0.0, 3.0])),
            preemptions=draw(st.sampled_from([(), (), (12.0,)])),
            oom_retries=draw(st.sampled_from([0, 0, 5])) if era != "0.5.14" else 0,
            jit_compiles=draw(st.sampled_from([0, 2])),
        ))
    return RunParams(engine=engine, era=era, seed=draw(st.integers(0, 10_000)), tp=draw(st.sampled_from([1, 2])),
                     spec_tokens=k, startup=STARTUP, phases=tuple(phases), style=LogStyle(access_log=False))


def stable_lines(a: Analysis, phase: int) -> list[int]:
    return a.samples.filter(pl.col("stable") & (pl.col("phase") == phase)).sort("line_no").get_column("line_no").to_list()


def window(a: Analysis, phase: int) -> dict[str, Any] | None:
    rows = a.windows.filter(pl.col("phase") == phase)
    return rows.row(0, named=True) if rows.height else None


@FAST
@given(run_params())
def test_stable_window_and_phases_match_the_truth(params: RunParams) -> None:
    truth, a = analyse(params)
    assert a.phases.height == len(truth["phases"])
    starts, ends = a.phases.get_column("first_line").to_list(), a.phases.get_column("last_line").to_list()
    assert all(e < s for e, s in zip(ends, starts[1:]))                      # disjoint, in order
    assert a.phases.get_column("start").is_sorted()
    for i, tp in enumerate(truth["phases"], start=1):
        lo, hi = tp["line_range"]
        assert lo <= starts[i - 1] <= ends[i - 1] <= hi                      # inside the truth's phase
        assert a.phases.row(i - 1, named=True)["concurrency"] == tp["concurrency"] or tp["stable"] is None
        expected = tp["stable"]
        got = window(a, i)
        if expected is None:
            assert got is None
            continue
        assert got is not None
        assert stable_lines(a, i) == expected["lines"]
        run = expected["run"]  # the window: the longest unbroken run of the stable samples
        assert (got["samples"], got["first_line"], got["last_line"]) == (
            run["samples"], run["lines"][0], run["lines"][-1])
        for key in ("gen_tps_mean", "gen_tps_median", "gen_tps_min", "gen_tps_max", "per_request_tps",
                    "ms_per_token"):
            assert got[key] == pytest.approx(run[key], rel=1e-9), key
        assert got["cv"] == pytest.approx(run["gen_tps_cv"], rel=1e-6, abs=1e-12)
        assert got["context_tokens_per_request"] == pytest.approx(
            run["context_tokens_per_request_printed"], rel=1e-9)


@FAST
@given(run_params())
def test_inputs_prefill_and_spec_match_the_truth(params: RunParams) -> None:
    truth, a = analyse(params)
    for i, tp in enumerate(truth["phases"], start=1):
        ph = a.phases.row(i - 1, named=True)
        if params.engine == "sglang":
            if ph["input_tokens_estimated"]:   # a retraction mid-prefill, in an era that prints no
                assert tp["counts"]["retractions"] > 0          # `#new_tokens_gained`: KV-based guess
                assert emulate_mod.resolve_era("sglang", params.era).retract == "ratio"
            else:
                assert ph["input_tokens"] == tp["input_tokens"]
        pf = a.prefill.filter(pl.col("phase") == i).row(0, named=True)
        if tp["prefill"]["input_tps_mean"] is None:
            assert pf["input_tps_mean"] is None
        else:
            assert pf["input_tps_mean"] == pytest.approx(tp["prefill"]["input_tps_mean"], rel=1e-9)
        if params.engine == "sglang" and emulate_mod.resolve_era("sglang", params.era).prefill == "P14":
            from logparse.analysis.prefill import first_request_chunks

            chunks = first_request_chunks(a.chunks.filter(pl.col("phase") == i))
            got = [{"cached_tokens": r["cached_tokens"], "input_tps": r["input_tps"]}
                   for r in chunks.iter_rows(named=True)]
            assert got == tp["prefill"]["first_request_chunks"]
        spec = a.spec.filter(pl.col("phase") == i)
        if tp["spec"] is None or (params.engine == "sglang" and tp["stable"] is None):
            continue
        row = spec.row(0, named=True)
        assert row["mean_accept_len"] == pytest.approx(tp["spec"]["mean_accept_len"], rel=1e-9)
        if tp["spec"].get("drafted_tps") is not None and params.engine == "vllm":
            assert row["drafted_tps"] == pytest.approx(tp["spec"]["drafted_tps"], rel=1e-9)
            assert row["wasted_draft_pct"] == pytest.approx(tp["spec"]["wasted_draft_pct"], rel=1e-9)


@FAST
@given(run_params(), st.integers(0, 20), st.integers(0, 86_399))
def test_shifting_timestamps_shifts_every_window(params: RunParams, days: int, seconds: int) -> None:
    _, base = analyse(params)
    start = dt.datetime.fromisoformat(params.start)
    # keep within the year: vLLM timestamps print none
    shift = dt.timedelta(days=days, seconds=seconds)
    _, moved = analyse(dataclasses.replace(params, start=(start + shift).isoformat()))
    assert moved.phases.height == base.phases.height
    assert moved.windows.height == base.windows.height
    for a, b in zip(base.windows.iter_rows(named=True), moved.windows.iter_rows(named=True)):
        assert b["start"] - a["start"] == shift and b["end"] - a["end"] == shift
        assert (b["samples"], b["first_line"], b["last_line"]) == (a["samples"], a["first_line"], a["last_line"])
        assert b["gen_tps_mean"] == a["gen_tps_mean"]
    for a, b in zip(base.phases.iter_rows(named=True), moved.phases.iter_rows(named=True)):
        assert b["start"] - a["start"] == shift


@FAST
@given(run_params(), st.sampled_from([4, 8]), st.sampled_from(["none", "docker", "compose"]))
def test_ranks_and_access_log_noise_change_nothing(params: RunParams, tp: int, wrapper: str) -> None:
    _, quiet = analyse(params)
    noisy_style = LogStyle(access_log=True, health_poll_s=5.0, metrics_poll_s=7.0, wrapper=wrapper)  # type: ignore[arg-type]
    _, noisy = analyse(dataclasses.replace(params, tp=tp, style=noisy_style))
    keep = ["phase", "concurrency", "n_samples", "input_tokens_estimated"]
    assert noisy.phases.select(keep).equals(quiet.phases.select(keep))
    for q, n in zip(quiet.phases.iter_rows(named=True), noisy.phases.iter_rows(named=True)):
        if q["input_tokens_estimated"]:   # vLLM: prompt throughput × second-resolution intervals
            assert n["input_tokens"] == pytest.approx(q["input_tokens"], rel=0.3)
        else:
            assert n["input_tokens"] == q["input_tokens"]
    stats = ["phase", "samples", "gen_tps_mean", "gen_tps_min", "gen_tps_max", "per_request_tps", "cv",
             "context_tokens_per_request"]
    assert noisy.windows.select(stats).equals(quiet.windows.select(stats))
    for phase in quiet.phases.get_column("phase").to_list():
        q = quiet.samples.filter(pl.col("stable") & (pl.col("phase") == phase)).get_column("gen_tps")
        n = noisy.samples.filter(pl.col("stable") & (pl.col("phase") == phase)).get_column("gen_tps")
        assert q.to_list() == n.to_list()
