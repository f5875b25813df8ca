"""Client files as real tools write them (issue 25): failed runs, genai-perf's early header,
gzip, the engine a backend does or does not name. The files here are constructed from the
writers' documented shapes (named in each test), not copies of real runs; the real files are in
tests/fulllength."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.bench.analyze import analyze_bench
from logparse.bench.readers import load_bench
from logparse.bench.readers._common import server_engine
from logparse.bench.render import render_text
from logparse.cli import cli
from logparse.errors import InputError


def _vllm_result(tmp_path: Path, *, completed: int, failed: int, name: str = "r.json") -> Path:
    """A `vllm bench serve --save-result` object (vllm/benchmarks/serve.py, 0.10+ keys); with no
    request completed the writer puts 0.0 in every statistic (np.mean of `or 0`)."""
    ok = completed > 0
    obj = {
        "date": "20260101-120000", "backend": "vllm", "model_id": "m", "num_prompts": completed + failed,
        "request_rate": "inf", "max_concurrency": 8, "duration": 12.5, "completed": completed, "failed": failed,
        "total_input_tokens": 1024 * completed, "total_output_tokens": 128 * completed,
        "request_throughput": completed / 12.5, "output_throughput": 128 * completed / 12.5,
        "mean_ttft_ms": 250.0 if ok else 0.0, "median_ttft_ms": 240.0 if ok else 0.0,
        "p99_ttft_ms": 400.0 if ok else 0.0, "mean_tpot_ms": 20.0 if ok else 0.0,
        "median_tpot_ms": 20.0 if ok else 0.0, "p99_tpot_ms": 25.0 if ok else 0.0,
        "mean_itl_ms": 20.0 if ok else 0.0, "median_itl_ms": 20.0 if ok else 0.0, "p99_itl_ms": 25.0 if ok else 0.0,
    }
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_a_run_whose_requests_all_failed_is_an_error_row_not_zeros(tmp_path: Path) -> None:
    rows = load_bench([_vllm_result(tmp_path, completed=0, failed=8)])
    row = rows.row(0, named=True)
    assert row["failed"] == 8 and row["num_requests"] == 0
    assert row["ttft_ms_mean"] is None and row["output_throughput_tps"] is None  # not 0.0 ms, 0.0 tok/s
    analysis = analyze_bench(rows)
    errors = analysis.checks.filter(pl.col("severity") == "error")
    assert errors.get_column("code").to_list() == ["failed_requests"]
    assert "all 8 requests failed" in errors.get_column("message")[0]
    text = render_text(analysis)
    assert "(all consistent)" not in text and "0.0 ms" not in text


def test_a_run_with_some_failures_says_how_many(tmp_path: Path) -> None:
    checks = analyze_bench(load_bench([_vllm_result(tmp_path, completed=6, failed=2)])).checks
    (row,) = checks.filter(pl.col("code") == "failed_requests").iter_rows(named=True)
    assert row["severity"] == "warning" and row["message"].startswith("2 of 8 requests failed")


# genai-perf's CSV exporter before 0.0.12 (genai_perf/export_data/csv_exporter.py): percentiles
# from p99 down to p25, `Time To First Token`, `(per sec)` system rows; AIPerf's: p1 up to p99.
GENAI_PERF_EARLY = """Metric,avg,min,max,p99,p95,p90,p75,p50,p25
Time To First Token (ms),23.94,22.92,30.75,30.10,27.51,24.26,23.38,23.20,23.02
Inter Token Latency (ms),11.54,11.45,11.70,11.69,11.64,11.58,11.55,11.53,11.52
Request Latency (ms),"5,919.16","5,912.73","5,934.45","5,933.31","5,928.74","5,923.03","5,920.17","5,918.56","5,915.29"
Output Sequence Length,512.00,512.00,512.00,512.00,512.00,512.00,512.00,512.00,512.00
Input Sequence Length,128.00,128.00,128.00,128.00,128.00,128.00,128.00,128.00,128.00

Metric,Value
Output Token Throughput (per sec),86.49
Request Throughput (per sec),0.17
"""


def test_an_early_genai_perf_csv_is_not_read_as_aiperf(tmp_path: Path) -> None:
    path = tmp_path / "concurrency1" / "profile_export_genai_perf.csv"
    path.parent.mkdir()
    path.write_text(GENAI_PERF_EARLY, encoding="utf-8")
    row = load_bench([path]).row(0, named=True)
    assert row["source_tool"] == "genai_perf_csv"
    # genai-perf's ITL is the chunk gap per token: it is ITL, not AIPerf's per-request TPOT
    assert row["itl_ms_mean"] == 11.54 and row["tpot_ms_mean"] is None
    assert row["latency_s_mean"] == pytest.approx(5.91916)


def test_a_gzipped_result_reads_as_the_plain_one_and_a_damaged_one_is_refused(tmp_path: Path) -> None:
    plain = _vllm_result(tmp_path, completed=8, failed=0)
    packed = tmp_path / "r.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert load_bench([packed]).drop("source_file", "config").equals(load_bench([plain]).drop("source_file", "config"))
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(packed.read_bytes()[:40])
    with pytest.raises(InputError, match="damaged gzip"):
        load_bench([broken])
    result = CliRunner().invoke(cli, ["bench", str(broken)])
    assert result.exit_code != 0 and "damaged gzip" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("tool", "backend", "engine"),
    [
        ("vllm", "vllm", None), ("vllm", "openai-chat", None), ("vllm", "sglang", None),
        ("vllm", "lmdeploy", None), ("vllm", "tgi", "tgi"), ("vllm", "tensorrt-llm", "trt-llm"),
        ("sglang", "sglang", "sglang"), ("sglang", "sglang-oai", None), ("sglang", "vllm", None),
        ("sglang", "trt", "trt-llm"), ("sglang", None, None),
    ],
)
def test_a_backend_names_the_server_only_through_a_protocol_only_it_speaks(
    tool: str, backend: str | None, engine: str | None
) -> None:
    assert server_engine(backend, tool=tool) == engine


def test_a_jsonl_line_without_any_ttft_statistic_says_which_keys_it_needs(tmp_path: Path) -> None:
    # SGLang bench_serving's key set (mean_e2e_latency_ms marks the tool), TTFT statistics removed
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"backend": "sglang", "duration": 10.0, "completed": 4, "mean_e2e_latency_ms": 5.0,
                                "output_throughput": 1.0, "median_itl_ms": 2.0}) + "\n", encoding="utf-8")
    with pytest.raises(InputError):
        load_bench([path])
