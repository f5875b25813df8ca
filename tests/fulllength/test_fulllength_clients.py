"""Real client result files are read right (issue 25).

Expected values are the files' own keys, read with `zcat FILE | python -m json.tool` (vLLM
benchmark_serving.py 0.8 JSON, surajssd/llm-k8s) and `cat FILE` (SGLang bench_serving JSONL of
2024-12, datacrunch-research/h200-benchmarks); see fixtures/fulllength/SOURCES.md.
"""
from __future__ import annotations

import json
import math

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.analysis.analyze import analyze_log
from logparse.bench.analyze import analyze_bench
from logparse.bench.readers import load_bench
from logparse.bench.render import render_text
from logparse.bench.serverlog import reconcile_with_log
from logparse.cli import cli
from logparse.errors import InputError
from tests.fulllength.corpus import CLIENT, client, server

pytestmark = pytest.mark.slow

# file: completed, num_prompts, request_rate, total_input_tokens, total_output_tokens, duration,
# output_throughput, mean / median / p99 TTFT ms, mean TPOT ms, date
VLLM = {
    "k8s-01_tp8_pp1-qps_01.json.gz": (200, 200, 1.0, 42659, 42722, 205.2194, 208.1772, 65.2578, 56.3722, 143.8007, 24.5644, "20250414-141505"),
    "k8s-01_tp8_pp1-qps_04.json.gz": (200, 200, 4.0, 42659, 42449, 62.9883, 673.9185, 50.3255, 49.5001, 67.5639, 27.0833, "20250414-141621"),
    "k8s-01_tp8_pp1-qps_16.json.gz": (200, 200, 16.0, 42659, 42770, 31.5794, 1354.3655, 59.5779, 58.1000, 120.3358, 31.5751, "20250414-141706"),
    "k8s-01_tp8_pp1-qps_inf.json.gz": (200, 200, "inf", 42659, 42398, 23.8143, 1780.3566, 360.3606, 349.8464, 450.3786, 39.0627, "20250414-141743"),
    "k8s-02_tp4_pp2_no_IB-qps_01.json.gz": (200, 200, 1.0, 42659, 42706, 215.7305, 197.9600, 112.5463, 97.2940, 224.1102, 44.1484, "20250414-151938"),
    "k8s-02_tp4_pp2_no_IB-qps_04.json.gz": (200, 200, 4.0, 42659, 42604, 78.8784, 540.1222, 114.2646, 103.2323, 244.9609, 58.1053, "20250414-152112"),
    "k8s-02_tp4_pp2_no_IB-qps_16.json.gz": (200, 200, 16.0, 42659, 42855, 53.5413, 800.4103, 139.7277, 122.4042, 395.3406, 70.6950, "20250414-152220"),
    "k8s-02_tp4_pp2_no_IB-qps_inf.json.gz": (200, 200, "inf", 42659, 42749, 46.9695, 910.1437, 1016.5553, 1026.9114, 1387.4477, 84.9447, "20250414-152322"),
    "k8s-03_tp4_pp2_IB-qps_01.json.gz": (200, 200, 1.0, 42659, 42776, 216.1475, 197.9019, 109.8744, 97.4938, 220.9332, 43.8879, "20250414-162000"),
    "k8s-03_tp4_pp2_IB-qps_04.json.gz": (200, 200, 4.0, 42659, 42481, 78.9719, 537.9258, 115.7299, 104.9307, 248.5438, 57.6677, "20250414-162134"),
    "k8s-03_tp4_pp2_IB-qps_16.json.gz": (200, 200, 16.0, 42659, 42773, 52.7189, 811.3414, 124.2493, 111.7867, 259.5929, 68.3793, "20250414-162242"),
    "k8s-03_tp4_pp2_IB-qps_inf.json.gz": (200, 200, "inf", 42659, 42444, 45.6185, 930.4127, 870.4109, 893.1407, 1213.8436, 79.5803, "20250414-162342"),
    "k8s-04_tp4_pp2_IB-qps_01.json.gz": (200, 200, 1.0, 42659, 42727, 216.2843, 197.5501, 110.0890, 97.1478, 229.3521, 44.0363, "20250414-171118"),
    "k8s-04_tp4_pp2_IB-qps_04.json.gz": (200, 200, 4.0, 42659, 42736, 78.6873, 543.1115, 114.8796, 103.0901, 243.3495, 57.8201, "20250414-171252"),
    "k8s-04_tp4_pp2_IB-qps_16.json.gz": (200, 200, 16.0, 42659, 42764, 52.7104, 811.3003, 127.4771, 115.7694, 241.9261, 67.7359, "20250414-171400"),
    "k8s-04_tp4_pp2_IB-qps_inf.json.gz": (200, 200, "inf", 42659, 42734, 45.7574, 933.9248, 970.5507, 1002.3081, 1232.2654, 78.2115, "20250414-171501"),
}
# file: runs, (request_rate, completed, median TTFT ms, output_throughput) of its first run
SGLANG = {
    "h200-deepseek_dp_mla_output.jsonl": (1, (math.inf, 10000, 10014.1045, 12412.3947)),
    "h200-llama_3_3_70b_offline_output.jsonl": (7, (math.inf, 3000, 91282.2098, 4520.6987)),
    "h200-llama_3_3_70b_online_output.jsonl": (7, (1.0, 300, 85.7451, 537.4143)),
    "h200-llama_405b_online_output.jsonl": (6, (1.0, 300, 218.8084, 504.9555)),
}


@pytest.mark.parametrize("name", sorted(VLLM))
def test_vllm_benchmark_serving_files_are_read_as_written(name: str) -> None:
    done, sent, rate, tin, tout, secs, out_tps, ttft, ttft50, ttft99, tpot, date = VLLM[name]
    (row,) = load_bench([client(name)]).iter_rows(named=True)
    assert (row["num_requests"], row["failed"], row["total_output_tokens"]) == (done, sent - done, tout)
    assert row["input_len"] == pytest.approx(tin / done)
    assert row["request_rate"] == (None if rate == "inf" else rate) and row["concurrency"] is None
    assert row["duration_s"] == pytest.approx(secs, abs=1e-4)
    assert row["output_throughput_tps"] == pytest.approx(out_tps, abs=1e-4)
    assert (row["ttft_ms_mean"], row["ttft_ms_median"], row["ttft_ms_p99"]) == pytest.approx((ttft, ttft50, ttft99), abs=1e-4)
    assert row["tpot_ms_mean"] == pytest.approx(tpot, abs=1e-4)
    assert row["ended_at"] == f"{date[:4]}-{date[4:6]}-{date[6:8]}T{date[9:11]}:{date[11:13]}:{date[13:]}"
    # `backend: vllm` is the client's OpenAI completions protocol: it does not name the server
    assert row["engine"] is None


def test_unknown_engines_are_never_merged_and_the_user_can_name_it() -> None:
    rows = load_bench([client(n) for n in sorted(VLLM)])
    assert rows.get_column("config").n_unique() == len(VLLM)
    named = load_bench([client(n) for n in sorted(VLLM)], engine="vllm")
    assert set(named.get_column("engine")) == {"vllm"}


def test_request_rate_runs_show_the_numbers_read() -> None:
    files = [client(n) for n in sorted(VLLM) if n.startswith("k8s-03")]
    text = render_text(analyze_bench(load_bench(files)))
    for rate, out_tps in (("1 req/s", "197.9"), ("4 req/s", "537.9"), ("16 req/s", "811.3")):
        line = next(line for line in text.splitlines() if f" {rate} " in line)
        assert out_tps in line and " 200 " in line


@pytest.mark.parametrize("name", sorted(SGLANG))
def test_old_sglang_jsonl_with_median_keys_is_read(name: str) -> None:
    runs, (rate, done, ttft50, out_tps) = SGLANG[name]
    rows = load_bench([client(name)])
    assert rows.height == runs
    first = rows.row(0, named=True)
    assert first["num_requests"] == done and first["ttft_ms_mean"] is None
    assert first["ttft_ms_median"] == pytest.approx(ttft50, abs=1e-4)
    assert first["output_throughput_tps"] == pytest.approx(out_tps, abs=1e-4)
    assert first["request_rate"] is None if math.isinf(rate) else first["request_rate"] == rate
    # `backend: sglang` is SGLang's native /generate protocol: only an SGLang server answers it
    assert set(rows.get_column("engine")) == {"sglang"}


@pytest.mark.parametrize("name", ["dgx-ergebnisse_vllm.json", "dgx-ergebnisse_sglang.json"])
def test_a_custom_tools_results_are_refused_with_one_clear_message(name: str) -> None:
    with pytest.raises(InputError, match="not a recognised benchmark result; expected one of"):
        load_bench([client(name)])
    result = CliRunner().invoke(cli, ["bench", str(client(name))])
    assert result.exit_code != 0 and "Traceback" not in result.output and "Error:" in result.output


@pytest.mark.parametrize(("log", "prefix"), [("k8s-lws-run-1.log.gz", "k8s-03_tp4_pp2_IB"), ("k8s-lws-run-2.log.gz", "k8s-04_tp4_pp2_IB")])
def test_each_qps_file_is_reconciled_with_its_own_phase(log: str, prefix: str) -> None:
    """lws-run-1 is the server of 03_tp4_pp2_IB (its qps 1 file is dated 16:20:00 after 216 s: the
    log's phase of 16:16:21-16:19:56), lws-run-2 of 04_tp4_pp2_IB."""
    analysis = analyze_log(server(log))
    for expected_phase, qps in zip((2, 3, 4, 5), ("01", "04", "16", "inf"), strict=True):
        rows = load_bench([client(f"{prefix}-qps_{qps}.json.gz")])
        verdict = reconcile_with_log(rows, analysis)
        phase = verdict["server_phase"]
        assert phase["phase"] == expected_phase and "time" in phase["matched_by"], (qps, phase)
        assert not [p for p in verdict["runs"][0]["problems"] if p.startswith("not the same run")]
        # the log's output per request (its generation ÷ the requests it served, not ÷ N: a
        # request-rate run holds far fewer at once) is the client's total_output_tokens ÷ completed
        (row,) = rows.iter_rows(named=True)
        assert phase["output_tokens"] == pytest.approx(row["total_output_tokens"] / row["num_requests"], rel=0.05)


def test_a_run_of_another_time_is_not_the_logs_run() -> None:
    """01_tp8_pp1 ran at 14:14-14:17 on a single node: no phase of lws-run-1 (16:15-16:23) is it."""
    verdict = reconcile_with_log(load_bench([client("k8s-01_tp8_pp1-qps_04.json.gz")]), analyze_log(server("k8s-lws-run-1.log.gz")))
    (problem,) = verdict["runs"][0]["problems"]
    assert problem.startswith("not the same run: time: the client ran 2025-04-14 14:15:18-14:16:21")
    assert verdict["trust"] == "undetermined"


def test_the_corpus_holds_twenty_readable_client_files() -> None:
    readable = sorted(p.name for p in CLIENT.iterdir() if not p.name.startswith("dgx-ergebnisse"))
    assert len(readable) >= 20 and set(readable) == set(VLLM) | set(SGLANG)
    rows = load_bench([CLIENT / n for n in readable])
    assert rows.height == len(VLLM) + sum(n for n, _ in SGLANG.values())
    checks = analyze_bench(rows).checks
    assert checks.filter(pl.col("severity") == "error").is_empty()
    failed = checks.filter(pl.col("code") == "failed_requests")
    assert failed.height == len(VLLM) and set(failed.get_column("severity")) == {"ok"}
    assert json.dumps(analyze_bench(rows).to_dict(), default=str)


def test_a_sweep_file_of_several_runs_is_reconciled_run_by_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The four real qps files of 03_tp4_pp2_IB joined one object per line, as `--append-result`
    writes a sweep (a file constructed from real results): each run meets its own phase."""
    import gzip

    joined = tmp_path / "sweep.jsonl"
    joined.write_text(
        "".join(
            json.dumps(json.loads(gzip.decompress(client(f"k8s-03_tp4_pp2_IB-qps_{q}.json.gz").read_bytes()))) + "\n"
            for q in ("01", "04", "16", "inf")
        ),
        encoding="utf-8",
    )
    verdict = reconcile_with_log(load_bench([joined]), analyze_log(server("k8s-lws-run-1.log.gz")))
    assert [run["server_phase"]["phase"] for run in verdict["runs"]] == [2, 3, 4, 5]
    assert verdict["trust"] == "client" and not any(run["problems"] for run in verdict["runs"])
