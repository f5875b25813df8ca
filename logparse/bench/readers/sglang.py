"""Readers for SGLang `bench_serving`: the appended JSONL (one line per run) and the printed
'Serving Benchmark Result' block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logparse.bench.readers._common import Sample, marker_score, per_request, server_engine
from logparse.bench.readers._serving_json import ResultObject, read_result_objects, serving_json_keys
from logparse.bench.readers._summary import Block, has_result_header, read_result_blocks
from logparse.bench.schema import empty_record

JSONL_EXPECTED = (
    "SGLang bench_serving JSONL (one object per run with duration, completed, and mean_ttft_ms or,"
    " before 2024-09, median_ttft_ms, ...)"
)
SUMMARY_EXPECTED = "the 'Serving Benchmark Result' block printed by SGLang bench_serving"

_JSON_MARKERS = (
    "mean_e2e_latency_ms",
    "total_output_tokens_retokenized",
    "server_info",
    "random_input_len",
    "dataset_name",
)
_SUMMARY_MARKERS = (
    "Backend:",
    "E2E Latency (ms)",
    "Inter-Token Latency",
    "(retokenized)",
    "Max request concurrency:",
    "Max reqeuest concurrency:",
    "Accept length:",
)


def sniff_jsonl(sample: Sample, path: Path) -> float:
    """Score in [0, 1] that `sample` is SGLang bench_serving JSONL."""
    keys = serving_json_keys(sample)
    return 0.0 if keys is None else marker_score(keys, _JSON_MARKERS, unmarked=0.3)


def read_jsonl(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every run of an SGLang bench_serving JSONL file into schema records."""
    describe = "the run on line {line_no}"
    return read_result_objects(path, text, expected=JSONL_EXPECTED, describe=describe, to_record=_json_record)


def _json_record(index: int, run: ResultObject) -> dict[str, Any]:
    server_info = run.get("server_info") if isinstance(run.get("server_info"), dict) else None
    accept_length = run.number("accept_length")
    dataset = str(run.get("dataset_name") or "")
    requested = run.count("random_output_len" if dataset.startswith("random") else "sharegpt_output_len")
    completed = run.count("completed")
    total_input = run.number("total_input_tokens")
    rec = empty_record()
    rec.update(
        source_file=str(run.path),
        source_tool="sglang_bench_jsonl",
        record=index,
        engine=_engine(run.get("backend"), server_info),
        mode=_mode(server_info, accept_length),
        label=run.get("tag") or None,
        model=(server_info or {}).get("model_path"),
        backend=run.get("backend"),
        concurrency=run.count("max_concurrency"),
        request_rate=run.number("request_rate"),
        num_requests=completed,
        input_len=per_request(total_input, completed),
        output_len_requested=requested,
        total_output_tokens=run.count("total_output_tokens"),
        duration_s=run.number("duration"),
        output_throughput_tps=run.number("output_throughput"),
        request_throughput_rps=run.number("request_throughput"),
        mean_in_flight=run.number("concurrency"),
        accept_length=accept_length,
        itl_definition="chunk_gap",
    )
    return rec


def _engine(backend: Any, server_info: dict[str, Any] | None) -> str | None:
    # /server_info is an SGLang endpoint: its presence says which server answered; else only a
    # backend whose protocol one server alone speaks (SGLang's native /generate) names it.
    if server_info:
        return "sglang"
    return server_engine(backend, tool="sglang")


def _mode(server_info: dict[str, Any] | None, accept_length: float | None) -> str | None:
    if server_info and server_info.get("speculative_algorithm"):
        return "spec"
    if accept_length is not None:
        return "spec"
    if server_info is not None and "speculative_algorithm" in server_info:
        return "direct"
    return None


def sniff_summary(sample: Sample, path: Path) -> float:
    """Score in [0, 1] that `sample` is a console capture holding SGLang's printed result block."""
    if not has_result_header(sample.text):
        return 0.0
    return marker_score(sample.text, _SUMMARY_MARKERS, unmarked=0.3)


def read_summary(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every printed SGLang result block of a console capture into schema records."""
    return read_result_blocks(path, text, expected=SUMMARY_EXPECTED, to_record=_summary_record)


def _summary_record(index: int, block: Block) -> dict[str, Any]:
    completed = block.count("Successful requests", required=True)
    total_input = block.number("Total input tokens")
    backend = block.value("Backend")
    accept_length = block.number("Accept length")
    rec = empty_record()
    rec.update(
        source_file=str(block.path),
        source_tool="sglang_bench_summary",
        record=index,
        engine=server_engine(backend, tool="sglang"),
        mode="spec" if accept_length is not None else None,
        backend=backend,
        concurrency=block.count("Max request concurrency", "Max reqeuest concurrency"),
        request_rate=block.number("Traffic request rate"),
        num_requests=completed,
        input_len=per_request(total_input, completed),
        total_output_tokens=block.count("Total generated tokens", required=True),
        duration_s=block.number("Benchmark duration (s)", required=True),
        output_throughput_tps=block.number("Output token throughput (tok/s)"),
        request_throughput_rps=block.number("Request throughput (req/s)"),
        mean_in_flight=block.number("Concurrency"),
        accept_length=accept_length,
        itl_definition="chunk_gap",
    )
    return rec
