"""Result files with per-request arrays: every vLLM writer era and SGLang `--output-details`.

Expectations are computed here from the files' own arrays with the standard library
(`statistics.quantiles(..., method="inclusive")` is numpy's linear percentile), independently
of logparse.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from logparse.bench.readers import detect_format, load_bench

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
HEAD_CHARS = 65536  # what the reader once sniffed of a file: 64 KiB

ERAS = [
    "vllm_era1_benchmark_serving_c10.json",
    "vllm_era2_benchmark_serving.json",
    "vllm_era3_bench_serve_first.json",
    "vllm_era4_bench_serve_save_detailed.json",
]
DETAILED = [  # every fixture with per-request arrays
    *ERAS, "vllm_era4_bench_serve_append_detailed.jsonl", "sglang_bench_serving_output_details.jsonl"]


def _objects(name: str) -> list[dict[str, Any]]:
    text = (FIXTURES / name).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _successful(obj: dict[str, Any], key: str) -> list[float]:
    return [value for value, error in zip(obj[key], obj["errors"], strict=True) if not error]


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


@pytest.mark.parametrize("name", DETAILED)
def test_bench_per_request_ttft_p90_is_computed_from_ttfts(name: str) -> None:
    rows = load_bench([FIXTURES / name])
    for obj, rec in zip(_objects(name), rows.iter_rows(named=True), strict=True):
        ttfts = _successful(obj, "ttfts")
        assert len(ttfts) == obj["completed"]
        assert rec["ttft_ms_p90"] == pytest.approx(_p(ttfts, 90) * 1000, rel=1e-12)
        assert "ttft_ms_p90" in rec["computed"].split(",")
        assert rec["ttft_ms_mean"] == obj["mean_ttft_ms"]  # the printed figure is kept
        assert rec["ttft_ms_p99"] == obj["p99_ttft_ms"]


def test_bench_per_request_skips_the_failed_request() -> None:
    (obj,) = _objects("vllm_era4_bench_serve_save_detailed.json")
    assert (obj["completed"], obj["failed"], len(obj["ttfts"])) == (10, 1, 11)
    rec = load_bench([FIXTURES / "vllm_era4_bench_serve_save_detailed.json"]).row(0, named=True)
    with_failed = [t * 1000 for t in obj["ttfts"]]
    assert rec["ttft_ms_p90"] == pytest.approx(_p(_successful(obj, "ttfts"), 90) * 1000)
    assert rec["ttft_ms_p90"] != pytest.approx(_p(with_failed, 90))
    assert rec["per_request"].startswith("per-request arrays ttfts, itls, output_lens, errors, latencies")
    assert "10 successful of 11 sent" in rec["per_request"]


def test_bench_per_request_latency_is_exact_only_with_a_latency_array() -> None:
    latest = load_bench([FIXTURES / "vllm_era4_bench_serve_save_detailed.json"]).row(0, named=True)
    (obj,) = _objects("vllm_era4_bench_serve_save_detailed.json")
    latencies = _successful(obj, "latencies")
    assert latest["latency_s_p90"] == pytest.approx(_p(latencies, 90))
    rates = [n / lat for n, lat in zip(_successful(obj, "output_lens"), latencies, strict=True)]
    assert latest["tps_per_user_p10"] == pytest.approx(_p(rates, 10))
    assert {"latency_s_p90", "tps_per_user_p10"} <= set(latest["computed"].split(","))
    older = load_bench([FIXTURES / "vllm_era2_benchmark_serving.json"]).row(0, named=True)
    # no latencies array: latency = ttft + sum(itls), marked derived and said so
    assert {"latency_s_p90", "tps_per_user_p10"} <= set(older["derived"].split(","))
    assert "latency = ttft + sum(itls)" in older["per_request"]


def test_bench_save_result_without_details_still_reads_its_latencies() -> None:
    rec = load_bench([FIXTURES / "vllm_era4_bench_serve_save_result.json"]).row(0, named=True)
    (obj,) = _objects("vllm_era4_bench_serve_save_result.json")
    assert "ttfts" not in obj and len(obj["latencies"]) == 11
    measured = [lat for lat in obj["latencies"] if lat > 0]
    assert rec["latency_s_p90"] == pytest.approx(_p(measured, 90))
    assert rec["ttft_ms_p90"] is None  # no ttfts: the P90 of TTFT is not invented


def test_bench_era1_takes_its_level_from_the_file_name() -> None:
    (obj,) = _objects("vllm_era1_benchmark_serving_c10.json")
    assert "max_concurrency" not in obj
    assert load_bench([FIXTURES / "vllm_era1_benchmark_serving_c10.json"])["concurrency"].to_list() == [10]


def _grown(tmp_path: Path, name: str) -> Path:
    """The fixture as a run of hundreds of requests writes it: megabytes of per-request text."""
    objects = _objects(name)
    for obj in objects:
        obj["generated_texts"] = [text * 400 for text in obj["generated_texts"]]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(obj) for obj in objects))
    return path


@pytest.mark.parametrize("name", ERAS)
def test_bench_detailed_file_past_64_kib_is_recognised(tmp_path: Path, name: str) -> None:
    path = _grown(tmp_path, name)
    text = path.read_text()
    assert '"mean_ttft_ms"' not in text[:HEAD_CHARS]  # the summary keys come after the arrays
    assert detect_format(path, text).name == "vllm_bench_json"
    grown = load_bench([path]).row(0, named=True)
    small = load_bench([FIXTURES / name]).row(0, named=True)
    assert grown["ttft_ms_p90"] == small["ttft_ms_p90"]


def test_bench_arrays_that_contradict_the_summary_are_not_used(tmp_path: Path) -> None:
    (obj,) = _objects("vllm_era4_bench_serve_save_detailed.json")
    obj["mean_ttft_ms"] = 250.0
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(obj))
    rec = load_bench([path]).row(0, named=True)
    assert rec["ttft_ms_p90"] is None and rec["computed"] is None
    assert rec["per_request"] == (
        "per-request arrays not used: their mean TTFT 602.00 ms is not the file's 250.00 ms"
    )


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"ttfts": [0.1, 0.2]}, "the arrays differ in length"),
        ({"completed": 3}, "no reading of their 11 entries counts the file's 3 completed requests"),
        ({"itls": [1.0] * 11}, "'itls' holds an entry that is not a list of numbers"),
    ],
)
def test_bench_unusable_arrays_are_named_not_fatal(
    tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    (obj,) = _objects("vllm_era4_bench_serve_save_detailed.json")
    obj.update(change)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(obj))
    rec = load_bench([path]).row(0, named=True)
    assert rec["per_request"].startswith(f"per-request arrays not used: {reason}")
    assert rec["ttft_ms_p90"] is None
