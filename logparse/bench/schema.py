"""The one tidy table of client benchmark results, and what every column means.

One row per configuration x concurrency level (one benchmark run). Every reader maps its tool's
names onto these columns; `TOOL_DEFINITIONS` records what each tool's native metric actually
measures, because the same name (ITL, TPS, throughput) means different things in different tools
(peer-tools.md section 1.8).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

LATENCY_STATS: tuple[str, ...] = ("mean", "median", "p90", "p95", "p99")
TPS_STATS: tuple[str, ...] = ("mean", "median", "p10", "p90")

_IDENTITY: list[tuple[str, pl.DataType, str]] = [
    ("row", pl.Int64(), "position of the row in this table (0-based); checks refer to it"),
    ("source_file", pl.String(), "path of the file the row was read from"),
    ("source_tool", pl.String(), "reader that produced the row (a key of TOOL_DEFINITIONS)"),
    ("record", pl.Int64(), "index of the run inside its file (0-based)"),
    (
        "config",
        pl.String(),
        "configuration name: engine, mode and label (else the file stem); the workload and then the"
        " file stem are appended only where two files would otherwise share a name",
    ),
    ("engine", pl.String(), "serving engine benchmarked (vllm, sglang, ...), when known"),
    ("mode", pl.String(), "'direct' or 'spec' (speculative decoding), when known"),
    ("label", pl.String(), "free label from the tool (vLLM label, SGLang tag, Cordatus model)"),
    ("workload", pl.String(), "'<input>x<output>' tokens per request ('?' where unknown), e.g. '128x128'"),
    ("model", pl.String(), "model id, when recorded"),
    ("backend", pl.String(), "client backend / request function the tool used"),
    ("concurrency", pl.Int64(), "maximum in-flight requests the client allowed (the tested level)"),
    ("request_rate", pl.Float64(), "configured arrival rate in req/s; null when unlimited"),
    ("num_requests", pl.Int64(), "requests completed successfully"),
    ("failed", pl.Int64(), "requests that failed"),
    ("input_len", pl.Float64(), "mean prompt tokens per request"),
    ("output_len", pl.Float64(), "mean generated tokens per completed request, as the tool counted"),
    ("output_len_requested", pl.Int64(), "configured output tokens per request (max_tokens), if known"),
    ("total_output_tokens", pl.Int64(), "generated tokens summed over completed requests"),
    ("duration_s", pl.Float64(), "benchmark wall time, first send to last completion, in s"),
    (
        "ended_at",
        pl.String(),
        "when the run ended, ISO 8601 without zone: the tool's stamp (vLLM `date`, the client's local"
        " time, to the second)",
    ),
]

_FAMILIES: list[tuple[str, tuple[str, ...], str]] = [
    ("ttft_ms", LATENCY_STATS, "time to first token, ms: send -> first streamed token/delta"),
    (
        "tpot_ms",
        LATENCY_STATS,
        "per-request decode time per output token, ms: (e2e - ttft) / (output_len - 1), statistics"
        " across requests (vLLM/SGLang 'TPOT', Cordatus and AIPerf 'ITL')",
    ),
    (
        "itl_ms",
        LATENCY_STATS,
        "pooled inter-chunk gaps, ms: one sample per streamed chunk gap over all requests"
        " (vLLM/SGLang 'ITL'); see itl_definition",
    ),
    ("latency_s", LATENCY_STATS, "end-to-end request latency, s: send -> last token"),
    (
        "tps_per_user",
        TPS_STATS,
        "per-request output rate, tok/s (higher is better; p10 is the pessimistic tail);"
        " see tps_per_user_definition",
    ),
]

_TAIL: list[tuple[str, pl.DataType, str]] = [
    (
        "output_throughput_tps",
        pl.Float64(),
        "output tok/s the tool reported for the whole run (sum of output tokens / duration)",
    ),
    ("request_throughput_rps", pl.Float64(), "completed requests per wall-clock second"),
    ("mean_in_flight", pl.Float64(), "SGLang 'Concurrency': sum(e2e latency) / duration"),
    ("accept_length", pl.Float64(), "mean accepted tokens per speculative step (SGLang)"),
    (
        "reported_rps_per_request",
        pl.Float64(),
        "Cordatus 'Throughput (RPS)' = completed / sum(latency) = 1 / mean latency;"
        " a per-request rate, not system throughput (about C times too low)",
    ),
    ("itl_definition", pl.String(), "what itl_ms measures: 'chunk_gap' or 'chunk_gap_per_token'"),
    (
        "tps_per_user_definition",
        pl.String(),
        "what tps_per_user measures: 'tokens_over_e2e' (n / latency, TTFT included)"
        " or 'inverse_tpot' (1 / TPOT, decode only)",
    ),
    ("derived", pl.String(), "comma-separated columns logparse derived rather than read (see derive.py)"),
    (
        "computed",
        pl.String(),
        "comma-separated columns logparse computed from the file's per-request arrays (ttfts, itls,"
        " latencies, output_lens) because the file prints no such statistic; exact, numpy-linear percentiles",
    ),
    ("per_request", pl.String(), "which per-request arrays were read and how many requests, or why not"),
]


def _family_columns() -> list[tuple[str, pl.DataType, str]]:
    out: list[tuple[str, pl.DataType, str]] = []
    for prefix, stats, doc in _FAMILIES:
        for stat in stats:
            out.append((f"{prefix}_{stat}", pl.Float64(), f"{stat} of {doc}"))
    return out


_COLUMNS: list[tuple[str, pl.DataType, str]] = _IDENTITY + _family_columns() + _TAIL

SCHEMA: dict[str, pl.DataType] = {name: dtype for name, dtype, _ in _COLUMNS}
COLUMN_DOCS: dict[str, str] = {name: doc for name, _, doc in _COLUMNS}

TOOL_DEFINITIONS: dict[str, dict[str, str]] = {
    "vllm_bench_json": {
        "tool": "vllm bench serve --save-result (JSON, or JSONL with --append-result)",
        "ttft": "mean/median/p<P>_ttft_ms: send -> first non-empty streamed chunk",
        "tpot": "*_tpot_ms: per request (latency - ttft) / (output_len - 1)",
        "itl": "*_itl_ms: pooled per-chunk gaps (a multi-token chunk is one sample)",
        "latency": "*_e2el_ms, only when e2el is in --percentile-metrics",
        "output_throughput": "output_throughput = sum(output_len) / duration (prefill included)",
        "output_len": "usage.completion_tokens, else re-tokenized text",
    },
    "vllm_bench_summary": {
        "tool": "vllm bench serve printed 'Serving Benchmark Result' block",
        "note": "same definitions as vllm_bench_json; values rounded to 2 decimals",
    },
    "sglang_bench_jsonl": {
        "tool": "python -m sglang.bench_serving --output-file (JSONL, one line per run)",
        "ttft": "*_ttft_ms: as vLLM",
        "tpot": "*_tpot_ms: as vLLM",
        "itl": "*_itl_ms: pooled chunk gaps; with spec decoding on sglang-oai backends gap/k repeated k",
        "latency": "*_e2e_latency_ms",
        "output_throughput": "sum(output_len) / duration; output_len falls back to the REQUESTED length",
        "concurrency": "'concurrency' = sum(e2e) / duration (mean in flight), not the cap",
    },
    "sglang_bench_summary": {
        "tool": "sglang bench_serving printed 'Serving Benchmark Result' block",
        "note": "same definitions as sglang_bench_jsonl; Max ITL is printed but not kept",
    },
    "cordatus_csv": {
        "tool": "CordatusAI/llm-benchmark table CSV (native export or the Openzeka appendix layout)",
        "ttft": "TTFT: first content or reasoning delta - start, wall clock",
        "tpot": "'ITL' = per request (last - first) / (tokens - 1): vLLM's TPOT definition",
        "tps_per_user": "'TPS' = tokens / total request time (TTFT included)",
        "latency": "Latency: total request time, s",
        "percentiles": "p50 = statistics.median; p90 = nearest rank (ceil(0.9 n) - 1)",
        "output_len": "max_tokens = 128 (tool constant DEFAULT_MAX_TOKENS) unless the file name says NxM",
        "throughput": "'Throughput (RPS)' = completed / sum(latencies) = 1 / mean latency",
    },
    "aiperf_csv": {
        "tool": "AIPerf profile_export_aiperf.csv",
        "ttft": "Time to First Token: first non-empty response - request start",
        "tpot": "'Inter Token Latency' = per request (latency - ttft) / (osl - 1): vLLM's TPOT",
        "tps_per_user": "'Output Token Throughput Per User' = 1 / ITL (decode only, TTFT excluded)",
        "output_throughput": "total OSL / benchmark duration",
        "concurrency": "not in the CSV; taken from the path (conc_8, c8, concurrency8)",
    },
    "genai_perf_csv": {
        "tool": "genai-perf profile_export_genai_perf.csv",
        "ttft": "Time To First Token",
        "itl": "'Inter Token Latency' = gap between responses / tokens in the later response",
        "output_throughput": "Output Token Throughput (tokens/sec)",
        "concurrency": "not in the CSV; taken from the path (conc_8, c8, concurrency8)",
    },
}


def empty_record() -> dict[str, Any]:
    """Return a record with every schema column set to None."""
    return dict.fromkeys(SCHEMA)


def to_frame(records: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Build the tidy table from reader records, in schema column order, renumbering `row`.

    Keys outside the schema are an error (a reader typo must not silently drop a metric).
    """
    columns: dict[str, list[Any]] = {name: [] for name in SCHEMA}
    for index, record in enumerate(records):
        unknown = set(record) - set(SCHEMA)
        if unknown:
            msg = f"record has columns outside the bench schema: {sorted(unknown)}"
            raise ValueError(msg)
        for name in SCHEMA:
            columns[name].append(index if name == "row" else record.get(name))
    return pl.DataFrame(columns, schema=SCHEMA)
