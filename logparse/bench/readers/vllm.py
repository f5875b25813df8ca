"""Readers for `vllm bench serve`: the --save-result JSON (or --append-result JSONL) and the
printed 'Serving Benchmark Result' block."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import (
    engine_name,
    json_stat_column,
    load_json_records,
    mode_name,
    require,
    to_int,
    to_number,
)
from logparse.bench.readers._summary import HEADER, block_stats, block_value, split_blocks
from logparse.bench.schema import empty_record

JSON_EXPECTED = "a `vllm bench serve --save-result` JSON object (keys duration, completed, mean_ttft_ms, ...)"
SUMMARY_EXPECTED = "the 'Serving Benchmark Result' block printed by `vllm bench serve`"

_JSON_MARKERS = ('"mean_e2el_ms"', '"request_goodput"', '"endpoint_type"', '"num_prompts"', '"model_id"')
_SGLANG_JSON_MARKERS = ('"mean_e2e_latency_ms"', '"server_info"', '"total_output_tokens_retokenized"')
_SUMMARY_MARKERS = ("Inter-token Latency", "E2EL (ms)", "Maximum request concurrency:", "Failed requests:")
_SGLANG_SUMMARY_MARKERS = (
    "Backend:",
    "E2E Latency (ms)",
    "(retokenized)",
    "Max request concurrency:",
    "Max reqeuest concurrency:",
)
_PREAMBLE_CONCURRENCY = re.compile(r"Maximum request concurrency:\s*(\d+)")


def sniff_json(head: str, path: Path) -> float:
    """Score in [0, 1] that `head` is a vLLM bench serve result JSON/JSONL."""
    if not head.lstrip().startswith(("{", "[")) or '"mean_ttft_ms"' not in head:
        return 0.0
    if any(marker in head for marker in _SGLANG_JSON_MARKERS):
        return 0.2
    return 1.0 if any(marker in head for marker in _JSON_MARKERS) else 0.5


def read_json(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every result object of a vLLM result file into schema records."""
    records = []
    for index, (line_no, obj) in enumerate(load_json_records(path, text, expected=JSON_EXPECTED)):
        what = f"the result object of line {line_no}"
        require(obj, ("duration", "completed", "mean_ttft_ms"), path=path, what=what)
        records.append(_json_record(path, index, line_no, obj))
    return records


def _json_record(path: Path, index: int, line_no: int, obj: dict[str, Any]) -> dict[str, Any]:
    def num(key: str) -> float | None:
        return to_number(obj.get(key), path=path, where=f"line {line_no} key {key!r}")

    def count(key: str) -> int | None:
        return to_int(obj.get(key), path=path, where=f"line {line_no} key {key!r}")

    rec = empty_record()
    completed = count("completed")
    rec.update(
        source_file=str(path),
        source_tool="vllm_bench_json",
        record=index,
        engine=engine_name(obj.get("engine")) or engine_name(obj.get("backend")),
        mode=mode_name(obj.get("mode") or obj.get("speculative") or _spec_from_label(obj.get("label"))),
        label=obj.get("label") or None,
        model=obj.get("model_id"),
        backend=obj.get("backend"),
        concurrency=count("max_concurrency"),
        request_rate=num("request_rate"),
        num_requests=completed,
        failed=count("failed"),
        input_len=_per_request(num("total_input_tokens"), completed),
        output_len_requested=count("output_len") or count("random_output_len"),
        total_output_tokens=count("total_output_tokens"),
        duration_s=num("duration"),
        output_throughput_tps=num("output_throughput"),
        request_throughput_rps=num("request_throughput"),
        itl_definition="chunk_gap",
    )
    for key, value in obj.items():
        target = json_stat_column(key)
        if target is not None:
            column, factor = target
            number = to_number(value, path=path, where=f"line {line_no} key {key!r}")
            rec[column] = None if number is None else number * factor
    return rec


def _spec_from_label(label: Any) -> str | None:
    return "spec" if label and "spec" in str(label).lower() else None


def _per_request(total: float | None, count: int | None) -> float | None:
    return total / count if total is not None and count else None


def sniff_summary(head: str, path: Path) -> float:
    """Score in [0, 1] that `head` is a console capture holding vLLM's printed result block."""
    if not any(HEADER.match(line.strip()) for line in head.splitlines()):
        return 0.0
    if any(marker in head for marker in _SGLANG_SUMMARY_MARKERS):
        return 0.2
    return 1.0 if any(marker in head for marker in _SUMMARY_MARKERS) else 0.4


def read_summary(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every printed vLLM result block of a console capture into schema records."""
    records = []
    for index, block in enumerate(split_blocks(path, text, expected=SUMMARY_EXPECTED)):
        where = f"block of line {block.line_no}"

        def num(*labels: str, required: bool = False, where: str = where, block: Any = block) -> float | None:
            raw = block_value(path, block, *labels, required=required)
            return to_number(raw, path=path, where=f"'{labels[0]}' ({where})")

        completed = num("Successful requests", required=True)
        concurrency = num("Maximum request concurrency")
        if concurrency is None:
            hints = [m.group(1) for line in block.preamble for m in [_PREAMBLE_CONCURRENCY.search(line)] if m]
            concurrency = float(hints[-1]) if hints else None
        rec = empty_record()
        rec.update(
            source_file=str(path),
            source_tool="vllm_bench_summary",
            record=index,
            concurrency=None if concurrency is None else round(concurrency),
            request_rate=num("Request rate configured (RPS)"),
            num_requests=None if completed is None else round(completed),
            failed=_round(num("Failed requests")),
            input_len=_per_request(num("Total input tokens"), _round(completed)),
            total_output_tokens=_round(num("Total generated tokens", required=True)),
            duration_s=num("Benchmark duration (s)", required=True),
            output_throughput_tps=num("Output token throughput (tok/s)"),
            request_throughput_rps=num("Request throughput (req/s)"),
            itl_definition="chunk_gap",
        )
        rec.update(block_stats(path, block))
        records.append(rec)
    return records


def _round(value: float | None) -> int | None:
    return None if value is None else round(value)
