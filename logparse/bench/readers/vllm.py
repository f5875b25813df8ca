"""Readers for `vllm bench serve`: the --save-result JSON (or --append-result JSONL) and the
printed 'Serving Benchmark Result' block."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import (
    Sample,
    concurrency_from_path,
    engine_name,
    marker_score,
    mode_name,
    per_request,
    server_engine,
)
from logparse.bench.readers._serving_json import ResultObject, read_result_objects, serving_json_keys
from logparse.bench.readers._summary import Block, has_result_header, read_result_blocks
from logparse.bench.schema import empty_record

JSON_EXPECTED = "a `vllm bench serve --save-result` JSON object (keys duration, completed, mean_ttft_ms, ...)"
SUMMARY_EXPECTED = "the 'Serving Benchmark Result' block printed by `vllm bench serve`"

# top-level keys only vLLM writes ('request_goodput:' is benchmark_serving.py's v0.7-v0.8 typo)
_JSON_MARKERS = (
    "mean_e2el_ms",
    "request_goodput",
    "request_goodput:",
    "endpoint_type",
    "num_prompts",
    "model_id",
    "tokenizer_id",
)
_SGLANG_JSON_MARKERS = ("mean_e2e_latency_ms", "server_info", "total_output_tokens_retokenized")
_SUMMARY_MARKERS = ("Inter-token Latency", "E2EL (ms)", "Maximum request concurrency:", "Failed requests:")
_SGLANG_SUMMARY_MARKERS = (
    "Backend:",
    "E2E Latency (ms)",
    "(retokenized)",
    "Max request concurrency:",
    "Max reqeuest concurrency:",
)
_PREAMBLE_CONCURRENCY = re.compile(r"Maximum request concurrency:\s*(\d+)")


def sniff_json(sample: Sample, path: Path) -> float:
    """Score in [0, 1] that `sample` is a vLLM bench serve result JSON/JSONL."""
    keys = serving_json_keys(sample)
    if keys is None:
        return 0.0
    return marker_score(keys, _JSON_MARKERS, rival=_SGLANG_JSON_MARKERS, unmarked=0.5)


def read_json(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every result object of a vLLM result file into schema records."""
    describe = "the result object of line {line_no}"
    return read_result_objects(path, text, expected=JSON_EXPECTED, describe=describe, to_record=_json_record)


def _json_record(index: int, run: ResultObject) -> dict[str, Any]:
    rec = empty_record()
    completed = run.count("completed")
    rec.update(
        source_file=str(run.path),
        source_tool="vllm_bench_json",
        record=index,
        # the engine only from `--metadata engine=...` or a backend only one server speaks
        engine=engine_name(run.get("engine")) or server_engine(run.get("backend"), tool="vllm"),
        mode=mode_name(run.get("mode") or run.get("speculative") or _spec_from_label(run.get("label"))),
        label=run.get("label") or None,
        model=run.get("model_id"),
        backend=run.get("backend"),
        concurrency=_concurrency(run),
        request_rate=run.number("request_rate"),
        num_requests=completed,
        failed=_failed(run, completed),
        input_len=per_request(run.number("total_input_tokens"), completed),
        output_len_requested=run.count("output_len") or run.count("random_output_len"),
        total_output_tokens=run.count("total_output_tokens"),
        duration_s=run.number("duration"),
        ended_at=_ended_at(run.get("date")),
        output_throughput_tps=run.number("output_throughput"),
        request_throughput_rps=run.number("request_throughput"),
        itl_definition="chunk_gap",
    )
    return rec


def _ended_at(value: Any) -> str | None:
    """benchmark_serving / bench serve `date` (`datetime.now().strftime("%Y%m%d-%H%M%S")` when the
    result was saved, right after the run) as ISO 8601; None when absent or not of that shape."""
    try:
        return dt.datetime.strptime(str(value), "%Y%m%d-%H%M%S").isoformat() if value else None
    except ValueError:
        return None


def _failed(run: ResultObject, completed: int | None) -> int | None:
    """Failed requests: the `failed` count (bench serve), else the prompts sent less those
    completed (benchmark_serving.py before `failed` was written)."""
    if "failed" in run.values:
        return run.count("failed")
    sent = run.count("num_prompts")
    return None if sent is None or completed is None else max(sent - completed, 0)


def _concurrency(run: ResultObject) -> int | None:
    """The run's concurrency cap; a file from before `--max-concurrency` existed (no such key)
    takes it from its path, as a sweep names its files (c16, conc_16, concurrency16)."""
    if "max_concurrency" in run.values:
        return run.count("max_concurrency")
    return concurrency_from_path(run.path)


def _spec_from_label(label: Any) -> str | None:
    return "spec" if label and "spec" in str(label).lower() else None


def sniff_summary(sample: Sample, path: Path) -> float:
    """Score in [0, 1] that `sample` is a console capture holding vLLM's printed result block."""
    if not has_result_header(sample.text):
        return 0.0
    return marker_score(sample.text, _SUMMARY_MARKERS, rival=_SGLANG_SUMMARY_MARKERS, unmarked=0.4)


def read_summary(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every printed vLLM result block of a console capture into schema records."""
    return read_result_blocks(path, text, expected=SUMMARY_EXPECTED, to_record=_summary_record)


def _summary_record(index: int, block: Block) -> dict[str, Any]:
    completed = block.count("Successful requests", required=True)
    concurrency = block.number("Maximum request concurrency")
    if concurrency is None:
        hints = [m.group(1) for line in block.preamble for m in [_PREAMBLE_CONCURRENCY.search(line)] if m]
        concurrency = float(hints[-1]) if hints else None
    rec = empty_record()
    rec.update(
        source_file=str(block.path),
        source_tool="vllm_bench_summary",
        record=index,
        concurrency=None if concurrency is None else round(concurrency),
        request_rate=block.number("Request rate configured (RPS)"),
        num_requests=completed,
        failed=block.count("Failed requests"),
        input_len=per_request(block.number("Total input tokens"), completed),
        total_output_tokens=block.count("Total generated tokens", required=True),
        duration_s=block.number("Benchmark duration (s)", required=True),
        output_throughput_tps=block.number("Output token throughput (tok/s)"),
        request_throughput_rps=block.number("Request throughput (req/s)"),
        itl_definition="chunk_gap",
    )
    return rec
