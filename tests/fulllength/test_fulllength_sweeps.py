"""Real full-length sweep logs are cut into one phase per client level (issue 25).

Every expected value below was read off the raw file by hand (the awk/grep lines are in
fixtures/fulllength/SOURCES.md), never from logparse's own output:

* dgx-vllm.log, vLLM 0.25.1 V1: `awk '/Engine 000: Avg/'` lists 65 stats lines; the client
  (bench.py, 4 scenarios x c = 1, 2, 4) ran levels whose running counts hold from lines 274
  (1), 286 (2), 306 (4), 328 (1), 345 (2), 363 (4), 385 (1), 398 (2), 412 (4), 429 (1), 439 (2),
  453 (4), after a one-request warm-up at line 267 (idle line 270, `Running: 0 reqs`) and before
  prefill.py's long prompts from line 477 (idle lines 469, 473).
* dgx-sglang-int4.log, SGLang (hybrid SWA): the same twelve levels; the Decode and Prefill
  lines' `#running-req` (+ `#new-seq`) change at lines 200, 217, 240, 252, 268, 290, 302, 315,
  332, 340, 353, 367; the client's own result file (ergebnisse_int4.json) ran 3, 6, 12 requests
  of 73 then 67 input tokens at c = 1, 2, 4.
* k8s-lws-run-{1,2}.log.gz, vLLM 0.8.3 V0 on Ray (TP4 x PP2, two nodes): a warm-up request, then
  benchmark_serving.py at qps 1, 4, 16, inf, 200 prompts each after one test prompt; `Running: 0
  reqs` lines and the 10 s with no request in flight between qps 4 and 16 (`Finished request` at
  16:21:34, `Received request` at 16:21:44) separate them; `Added request` lines count 1, 201,
  201, 201, 201.
"""
from __future__ import annotations

import polars as pl
import pytest

from logparse.analysis.analyze import Analysis, analyze_log
from tests.fulllength.corpus import server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dgx_vllm() -> Analysis:
    return analyze_log(server("dgx-vllm.log"), year=2026)


@pytest.fixture(scope="module")
def dgx_sglang() -> Analysis:
    return analyze_log(server("dgx-sglang-int4.log"))


@pytest.fixture(scope="module", params=["k8s-lws-run-1.log.gz", "k8s-lws-run-2.log.gz"])
def lws(request: pytest.FixtureRequest) -> tuple[str, Analysis]:
    return request.param, analyze_log(server(request.param))


def test_vllm_sweep_is_one_phase_per_level(dgx_vllm: Analysis) -> None:
    phases = dgx_vllm.phases
    assert phases.get_column("first_line").to_list() == [
        267, 274, 286, 306, 328, 345, 363, 385, 398, 412, 429, 439, 453, 477,
    ]
    assert phases.get_column("concurrency").to_list() == [1, 1, 2, 4, 1, 2, 4, 1, 2, 4, 1, 2, 4, 1]
    first = phases.row(1, named=True)
    assert "line 270" in first["start_boundary"] and "nothing running" in first["start_boundary"]
    assert "from 1 to 2 (line 286)" in first["end_boundary"]


def test_vllm_sweep_windows_are_unbroken_and_not_trusted(dgx_vllm: Analysis) -> None:
    # prose c=4 (lines 306-326): prompt throughput 0 at lines 308, 310, 318, 326; the unbroken
    # runs are 308-310 (47.2, 43.2 tok/s), 318, 326: the window is 308-310, 2 samples
    w = dgx_vllm.windows.filter(pl.col("phase") == 4).row(0, named=True)
    assert (w["first_line"], w["last_line"], w["samples"]) == (308, 310, 2)
    assert w["gen_tps_mean"] == pytest.approx((47.2 + 43.2) / 2)
    assert w["trusted"] is False and "2 sample(s), need 5" in w["note"] and "3 unbroken runs" in w["note"]
    # no level of this sweep holds 5 undisturbed samples in a row: nothing is trusted
    assert not dgx_vllm.windows.get_column("trusted").any()


def test_sglang_sweep_is_one_phase_per_level(dgx_sglang: Analysis) -> None:
    phases = dgx_sglang.phases
    assert phases.get_column("first_line").to_list() == [
        184, 200, 217, 240, 252, 268, 290, 302, 315, 332, 340, 353, 367, 374,
    ]
    assert phases.get_column("concurrency").to_list()[:12] == [1, 2, 4] * 4
    # the client's own counts and input lengths (ergebnisse_int4.json: ok 3/6/12, in_tokens 73,
    # 67, 16,913, 16,909); phase 1 also holds the client's 48-token first request (line 184:
    # 47 new + 1 cached), so 4 requests of (48 + 3 x 73) / 4 tokens
    assert phases.get_column("n_requests").to_list()[:6] == [4, 6, 12, 3, 6, 12]
    assert phases.get_column("input_tokens").to_list()[:12] == [
        round((48 + 3 * 73) / 4), 73, 73, 67, 67, 67, 16_913, 16_913, 16_913, 16_909, 16_909, 16_909,
    ]
    assert phases.get_column("input_confidence").to_list()[:12] == ["exact"] * 12
    assert "input length changed from 67 to 16,913" in phases.row(6, named=True)["start_boundary"]


def test_sglang_prefill_only_requests_are_told_apart(dgx_sglang: Analysis) -> None:
    # prefill.py's prompts, one by one with no Decode line between them: 4,652+37, 4,612+46,
    # 4,674+46 tokens (lines 367-372), then 8,192+8,192+2,269+46, ...+2,389+47, ...+2,028+45
    # (lines 374-384): each line below the 8,192-token chunk budget ends its request
    last, before = dgx_sglang.phases.row(-1, named=True), dgx_sglang.phases.row(-2, named=True)
    assert (before["first_line"], before["n_requests"], before["input_tokens"]) == (367, 3, round(14_067 / 3))
    assert (last["first_line"], last["n_requests"]) == (374, 3)
    assert last["input_tokens"] == round((3 * 16_384 + 2_269 + 2_389 + 2_028 + 46 + 47 + 45) / 3)


def test_sglang_weight_load_and_pools_are_the_engines_own(dgx_sglang: Analysis) -> None:
    s = dgx_sglang.startup
    # "Load weight end. elapsed=109.33 s" (line 138), not the shard bar's 01:41
    assert s["weight_load_s"] == pytest.approx(109.33) and s["weight_load_from_bar"] is False
    assert s["evidence"]["weight_load_s"]["confidence"] == "exact"
    # lines 152-154: swa 148,717 tokens K+V 10.21+10.21 GB; full 185,897 tokens 4.25+4.25 GB
    pools = {p["pool"]: p for p in s["kv_pools"]}
    assert (pools["full"]["tokens"], pools["full"]["gib"]) == (185_897, 8.5)
    assert (pools["swa"]["tokens"], pools["swa"]["gib"]) == (148_717, 20.42)
    # `full token usage` peaks at 0.09, `swa token usage` at 0.01 (awk over the Decode lines)
    assert (pools["full"]["peak_usage"], pools["swa"]["peak_usage"]) == (0.09, 0.01)
    assert s["kv_binding_pool"] == "full"
    assert s["kv_pool_tokens"] == 185_897 and s["kv_gib"] == 8.5


EXPECTED_LWS = {
    "k8s-lws-run-1.log.gz": [844, 864, 1774, 2618, 3452],
    "k8s-lws-run-2.log.gz": [663, 686, 1596, 2440, 3274],
}


def test_ray_qps_sweep_is_warm_up_and_four_runs(lws: tuple[str, Analysis]) -> None:
    name, a = lws
    assert a.phases.get_column("first_line").to_list() == EXPECTED_LWS[name]
    assert a.phases.get_column("n_requests").to_list() == [1, 201, 201, 201, 201]
    # the client files say 42,659 input tokens over 200 prompts: 213.3 per prompt
    for tokens in a.phases.get_column("input_tokens").to_list()[1:]:
        assert tokens == pytest.approx(42_659 / 200, rel=0.05)
    quiet = a.phases.row(3, named=True)["start_boundary"]
    assert "the last request in flight finished and none came for" in quiet


def test_ray_log_is_dated_by_its_own_dates(lws: tuple[str, Analysis]) -> None:
    _, a = lws
    # Ray's `2025-04-14 16:07:42,252\tINFO ...` lines date the year-less vLLM stamps
    assert a.phases.get_column("start").dt.year().to_list() == [2025] * 5


def test_ray_weight_load_is_the_loading_line_not_the_download(lws: tuple[str, Analysis]) -> None:
    name, a = lws
    s = a.startup
    # the driver's (rank 0, no process prefix) `Loading weights took` (run 1 line 339: 5.60 s; run
    # 2 line 324: 7.09 s, after a worker's 7.13 s at line 321); the download apart (run 1 line 264,
    # the driver's; run 2 prints only the workers', the first at line 270)
    expected = {"k8s-lws-run-1.log.gz": (5.6, 160.58528), "k8s-lws-run-2.log.gz": (7.09, 165.601506)}
    assert (s["weight_load_s"], s["weight_download_s"]) == pytest.approx(expected[name])
    assert s["evidence"]["weight_load_s"]["confidence"] == "exact"
