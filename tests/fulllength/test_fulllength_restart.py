"""A real log of two engine starts in one file: a start that failed and its relaunch (issue 25).

imageworks-nohup.out (vLLM 0.10.2 V1, one GPU, LLaVA 1.5 7B AWQ) is the `nohup.out` a launcher
script appended to: its first start dies before loading any weight (`EngineCore failed to
start.`, free memory below `gpu_memory_utilization`), the script prints `vLLM server exited with
status 1`, and eight minutes later launches the server again, which serves three runs of image
captions. Every expected value below was read off the raw file (the commands are in
fixtures/fulllength/SOURCES.md):

* `grep -n 'vLLM API server version\\|non-default args'`: lines 6, 7 (18:28:54) and 159, 160
  (18:36:42), the two process starts; `grep -n 'EngineCore failed to start'`: line 25; the
  first start's last stage line is its engine config (line 23, `Initializing a V1 LLM engine`);
  `awk 'NR <= 158 && / ERROR /'` counts 26 ERROR lines.
* the second start: `Loading weights took 0.74 seconds` (line 197), `GPU KV cache size: 18,400
  tokens` (205), `Graph capturing finished in 4 secs` (208), `init engine ... took 11.23 seconds`
  (210), `Starting vLLM API server 0` at 18:37:06 (217): ready 24 s after its version line
  (18:36:42); the whole file's first line is 18:28:54, 492 s before.
* `awk '/Engine 000: Avg/'`: stats lines with `Running: 1` at 257, 266-337 (16 lines) and 346-402
  (13 lines), the idle lines (`Running: 0 reqs, Waiting: 0 reqs`) 262, 340-345 and 407-412
  between them; every one of them prints a prompt throughput above 0.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from logparse.analysis.analyze import Analysis, analyze_log
from logparse.analysis.segments import find_segments
from logparse.ingest import ingest
from tests.fulllength.corpus import server

LOG = server("imageworks-nohup.out")
YEAR = 2025  # the repository's commit of the file: 2025-10-01; the log prints no year
FIRST_OF_SECOND = 159  # its version line; the launcher's lines and the import warnings before it stay behind


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return analyze_log(LOG, year=YEAR)


def test_the_failed_start_and_its_relaunch_are_two_segments() -> None:
    segments = find_segments(ingest(LOG, year=YEAR).tables)
    assert segments.rows() == [(1, 1, FIRST_OF_SECOND - 1), (2, FIRST_OF_SECOND, 419)]


def test_each_start_has_its_own_figures(analysis: Analysis) -> None:
    rows = analysis.segments.select("segment", "ready", "phases", "ready_s").rows()
    # not one start "ready after 492 s" (18:28:54 .. 18:37:06) counting the failed start and the wait
    assert rows == [(1, False, 0, None), (2, True, 3, 24.0)]
    failed, served = analysis.startups
    assert (failed["weight_load_s"], failed["kv_pool_tokens"]) == (None, None)
    assert (served["weight_load_s"], served["kv_pool_tokens"], served["cuda_graph_s"], served["init_s"]) == (
        0.74, 18_400, 4.0, 11.23,
    )
    why = analysis.diagnostics.filter(analysis.diagnostics["code"] == "start_not_ready").row(0, named=True)
    assert why["message"].startswith("start 1: the engine never said it was ready")
    assert "configuration (line 23" in why["message"] and "26 ERROR line(s) from line 25" in why["message"]


def test_the_relaunch_serves_three_runs(analysis: Analysis) -> None:
    phases = analysis.phases
    assert phases.get_column("segment").to_list() == [2, 2, 2]
    assert phases.select("first_line", "last_line", "n_samples", "concurrency").rows() == [
        (257, 257, 1, 1), (266, 337, 16, 1), (346, 402, 13, 1),
    ]
    # a prompt in every stats interval: no undisturbed decode sample, so no window, and it says why
    assert analysis.windows.is_empty()
    assert analysis.no_window.rows() == [(k, "every sample with N=1 running overlapped a prefill") for k in (1, 2, 3)]


def test_each_start_cut_out_alone_gives_the_same(analysis: Analysis, tmp_path: Path) -> None:
    lines = LOG.read_bytes().split(b"\n")
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    first.write_bytes(b"\n".join(lines[: FIRST_OF_SECOND - 1]) + b"\n")
    second.write_bytes(b"\n".join(lines[FIRST_OF_SECOND - 1 :]))
    alone = analyze_log(second, year=YEAR)
    shift = FIRST_OF_SECOND - 1
    assert alone.segments.height == 1
    assert [(a + shift, b + shift) for a, b in alone.phases.select("first_line", "last_line").rows()] == (
        analysis.phases.select("first_line", "last_line").rows()
    )
    assert {k: alone.startup[k] for k in ("ready_s", "weight_load_s", "kv_pool_tokens")} == {
        k: analysis.startups[1][k] for k in ("ready_s", "weight_load_s", "kv_pool_tokens")
    }
    failed = analyze_log(first, year=YEAR)
    assert failed.segments.height == 1 and failed.phases.is_empty()
    assert failed.segments.row(0, named=True)["ready"] is False
