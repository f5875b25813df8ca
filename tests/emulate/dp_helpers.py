"""What the data-parallel emulation tests of both engines share: the hypothesis settings, the
start-up, rendering a run and analysing it as a user would (from the written log), and checking
the analysis against the run's truth."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, settings

from logparse.analysis import Analysis, analyze_log
from logparse.emulate import PhaseParams, RunParams, StartupParams, emulate

FAST = settings(max_examples=int(os.environ.get("LOGPARSE_DP_EXAMPLES", "10")), deadline=None,
                derandomize=not os.environ.get("LOGPARSE_ANALYSIS_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
STARTUP = StartupParams(pre_load_s=9.0, weight_load_s=6.5, shards=4, init_s=30.0, cuda_graph_s=9.0)


def analyse(params: RunParams) -> tuple[dict[str, Any], list[str], Analysis]:
    """The run's truth, its lines, and the analysis of the log file it renders."""
    run = emulate(params)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        run.write(path)
        return run.truth, run.lines, analyze_log(path, engine=params.engine, year=int(params.start[:4]))


def stable_lines(a: Analysis, phase: int) -> list[int]:
    """The line numbers of the stable samples of `phase`."""
    rows = a.samples.filter(pl.col("stable") & (pl.col("phase") == phase)).sort("line_no")
    return rows.get_column("line_no").to_list()


def window(a: Analysis, phase: int) -> dict[str, Any] | None:
    """The stable window of `phase`, or None."""
    rows = a.windows.filter(pl.col("phase") == phase)
    return rows.row(0, named=True) if rows.height else None


def assert_windows_match_the_truth(params: RunParams) -> list[dict[str, Any]]:
    """Analyse the run of `params` and check every phase against the truth: the request split
    asked for, N, and the stable window (its samples, figures and KV context per request).
    Returns the truth's phases, for the checks of one engine's own logging."""
    truth, _lines, a = analyse(params)
    assert a.phases.height == len(truth["phases"])
    for i, truth_phase in enumerate(truth["phases"], start=1):
        _assert_split_as_asked(truth_phase, params.phases[i - 1])
        assert_window_as_stated(a, i, truth_phase)
    return truth["phases"]


def _assert_split_as_asked(truth_phase: dict[str, Any], asked: PhaseParams) -> None:
    """The truth's per-rank request counts add up to N and are the split asked for, if any."""
    assert sum(truth_phase["dp_split"]) == truth_phase["concurrency"]
    if asked.dp_split:
        assert tuple(truth_phase["dp_split"]) == asked.dp_split


def assert_window_as_stated(a: Analysis, phase: int, truth_phase: dict[str, Any]) -> None:
    """The analysis finds the phase's N and the stable window the truth states, to the sample."""
    n = truth_phase["concurrency"]
    expected = truth_phase["stable"]
    assert expected is not None                       # the strategies decode long enough at N
    assert a.phases.row(phase - 1, named=True)["concurrency"] == n  # N = the running requests of all ranks
    got = window(a, phase)
    assert got is not None
    assert stable_lines(a, phase) == expected["lines"]  # the same samples, no more, no fewer
    assert got["samples"] == expected["samples"]
    # Sums of printed values (2 decimals in SGLang, 1 in vLLM): equal up to float addition order.
    assert got["gen_tps_mean"] == pytest.approx(expected["gen_tps_mean"], rel=1e-9, abs=1e-9)
    assert got["per_request_tps"] == pytest.approx(expected["per_request_tps"], rel=1e-9)
    assert got["per_request_tps"] == pytest.approx(got["gen_tps_mean"] / n, rel=1e-12)
    assert got["context_tokens_per_request"] == pytest.approx(
        expected["context_tokens_per_request_printed"], rel=1e-9)
