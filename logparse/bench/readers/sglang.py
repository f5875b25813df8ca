"""Readers for SGLang `bench_serving`: the appended JSONL (one line per run) and the printed
'Serving Benchmark Result' block."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from logparse.bench.readers._common import (
    engine_name,
    json_stat_column,
    load_json_records,
    require,
    to_int,
    to_number,
)
from logparse.bench.readers._summary import HEADER, block_stats, block_value, split_blocks
from logparse.bench.schema import empty_record

JSONL_EXPECTED = "SGLang bench_serving JSONL (one object per run with duration, completed, mean_ttft_ms, ...)"
SUMMARY_EXPECTED = "the 'Serving Benchmark Result' block printed by SGLang bench_serving"

_JSON_MARKERS = (
    '"mean_e2e_latency_ms"',
    '"total_output_tokens_retokenized"',
    '"server_info"',
    '"random_input_len"',
    '"dataset_name"',
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


def sniff_jsonl(head: str, path: Path) -> float:
    """Score in [0, 1] that `head` is SGLang bench_serving JSONL."""
    if not head.lstrip().startswith(("{", "[")) or '"mean_ttft_ms"' not in head:
        return 0.0
    return 1.0 if any(marker in head for marker in _JSON_MARKERS) else 0.3


def read_jsonl(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every run of an SGLang bench_serving JSONL file into schema records."""
    records = []
    for index, (line_no, obj) in enumerate(load_json_records(path, text, expected=JSONL_EXPECTED)):
        what = f"the run on line {line_no}"
        require(obj, ("duration", "completed", "mean_ttft_ms"), path=path, what=what)
        records.append(_json_record(path, index, line_no, obj))
    return records


def _json_record(path: Path, index: int, line_no: int, obj: dict[str, Any]) -> dict[str, Any]:
    def num(key: str) -> float | None:
        return to_number(obj.get(key), path=path, where=f"line {line_no} key {key!r}")

    def count(key: str) -> int | None:
        return to_int(obj.get(key), path=path, where=f"line {line_no} key {key!r}")

    server_info = obj.get("server_info") if isinstance(obj.get("server_info"), dict) else None
    accept_length = num("accept_length")
    dataset = str(obj.get("dataset_name") or "")
    requested = count("random_output_len") if dataset.startswith("random") else count("sharegpt_output_len")
    completed = count("completed")
    total_input = num("total_input_tokens")
    rec = empty_record()
    rec.update(
        source_file=str(path),
        source_tool="sglang_bench_jsonl",
        record=index,
        engine=_engine(obj.get("backend"), server_info),
        mode=_mode(server_info, accept_length),
        label=obj.get("tag") or None,
        model=(server_info or {}).get("model_path"),
        backend=obj.get("backend"),
        concurrency=count("max_concurrency"),
        request_rate=num("request_rate"),
        num_requests=completed,
        input_len=total_input / completed if total_input is not None and completed else None,
        output_len_requested=requested,
        total_output_tokens=count("total_output_tokens"),
        duration_s=num("duration"),
        output_throughput_tps=num("output_throughput"),
        request_throughput_rps=num("request_throughput"),
        mean_in_flight=num("concurrency"),
        accept_length=accept_length,
        itl_definition="chunk_gap",
    )
    for key, value in obj.items():
        target = json_stat_column(key)
        if target is not None:
            column, factor = target
            number = to_number(value, path=path, where=f"line {line_no} key {key!r}")
            rec[column] = None if number is None else number * factor
    return rec


def _engine(backend: Any, server_info: dict[str, Any] | None) -> str | None:
    # /server_info is an SGLang endpoint: its presence says which server answered.
    if server_info:
        return "sglang"
    return engine_name(backend)


def _mode(server_info: dict[str, Any] | None, accept_length: float | None) -> str | None:
    if server_info and server_info.get("speculative_algorithm"):
        return "spec"
    if accept_length is not None:
        return "spec"
    if server_info is not None and "speculative_algorithm" in server_info:
        return "direct"
    return None


def sniff_summary(head: str, path: Path) -> float:
    """Score in [0, 1] that `head` is a console capture holding SGLang's printed result block."""
    if not any(HEADER.match(line.strip()) for line in head.splitlines()):
        return 0.0
    return 1.0 if any(marker in head for marker in _SUMMARY_MARKERS) else 0.3


def read_summary(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every printed SGLang result block of a console capture into schema records."""
    records = []
    for index, block in enumerate(split_blocks(path, text, expected=SUMMARY_EXPECTED)):
        where = f"block of line {block.line_no}"

        def num(*labels: str, required: bool = False, where: str = where, block: Any = block) -> float | None:
            raw = block_value(path, block, *labels, required=required)
            return to_number(raw, path=path, where=f"'{labels[0]}' ({where})")

        completed = _round(num("Successful requests", required=True))
        total_input = num("Total input tokens")
        backend = block_value(path, block, "Backend")
        accept_length = num("Accept length")
        rec = empty_record()
        rec.update(
            source_file=str(path),
            source_tool="sglang_bench_summary",
            record=index,
            engine=engine_name(backend),
            mode="spec" if accept_length is not None else None,
            backend=backend,
            concurrency=_round(num("Max request concurrency", "Max reqeuest concurrency")),
            request_rate=num("Traffic request rate"),
            num_requests=completed,
            input_len=total_input / completed if total_input is not None and completed else None,
            total_output_tokens=_round(num("Total generated tokens", required=True)),
            duration_s=num("Benchmark duration (s)", required=True),
            output_throughput_tps=num("Output token throughput (tok/s)"),
            request_throughput_rps=num("Request throughput (req/s)"),
            mean_in_flight=num("Concurrency"),
            accept_length=accept_length,
            itl_definition="chunk_gap",
        )
        rec.update(block_stats(path, block))
        records.append(rec)
    return records


def _round(value: float | None) -> int | None:
    return None if value is None else round(value)
