"""Which engine metric each log field becomes: names, types and HELP read from the engines' sources.

Every row names the file (and the releases, read from the published wheels) where the metric is
declared; the HELP text is the engine's own `documentation=` string, to which `openmetrics` adds
how logparse got the value. Metrics an engine exports that no log line supports are listed in
`LEFT_OUT` with the reason, so `export` never invents them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MetricType = Literal["gauge", "counter"]
# How a log field becomes the metric's value:
#   as_printed    the value as the line printed it
#   percent       a printed percentage divided by 100 (the engine's gauge is a fraction)
#   rate_integral a counter rebuilt by integrating a printed tokens/s rate over the stats interval
#   interval_sum  a counter: the running sum of per-interval counts the line printed
#   cumulative    a counter: the running total the line printed itself
#   hit_ratio     SGLang's own cached/(new + cached) of a Prefill batch line
#   carried       a start-up value (the KV pool size) repeated at each decode line, as the engine does
How = Literal["as_printed", "percent", "rate_integral", "interval_sum", "cumulative", "hit_ratio", "carried"]
# Log eras, told apart by the line's own shape (see `series.era_rows`):
#   vllm-v0  V0 stats line (`Swapped: … Pending: …`), V0 `Speculative metrics`, V0 prefix-cache line
#   vllm-v1  V1 stats line (`Running … Waiting …`, `Engine NNN:`), V1 `SpecDecoding metrics`
#   sglang   `Decode batch` / `Prefill batch` lines and the KV pool allocation line
Era = Literal["vllm-v0", "vllm-v1", "sglang"]

VLLM_V0 = "vllm/engine/metrics.py @ vllm 0.6.6 (also read at 0.10.2, where the V0 engine dropped some)"
VLLM_V1 = "vllm/v1/metrics/loggers.py @ vllm 0.10.2, 0.11.2, 0.26.0, 0.31.0"
VLLM_V1_SPEC = "vllm/v1/spec_decode/metrics.py @ vllm 0.10.2, 0.11.2, 0.26.0, 0.31.0"
SGLANG = (
    "python/sglang/srt/metrics/collector.py @ sglang 0.4.8, 0.5.6; "
    "python/sglang/srt/observability/metrics_collector.py @ sglang 0.5.14"
)
SGLANG_056 = (
    "python/sglang/srt/metrics/collector.py @ sglang 0.5.6 (not in 0.4.8); 0.5.14 metrics_collector.py"
)


@dataclass(frozen=True, slots=True)
class Metric:
    """One engine metric and the log field it is rebuilt from."""

    name: str  # family name as the engine declares it (a counter without `_total`)
    type: MetricType
    help: str  # the engine's documentation string, verbatim
    era: Era
    table: str  # logparse event kind
    column: str  # field of that kind (see ../shared/docs/event-kinds.md)
    how: How
    source: str  # file @ releases where name, type and HELP were read
    first: str | None = None  # first release that has it, when the log's version says otherwise
    before: str | None = None  # first release that no longer exports it by default
    # The line prints the field only when it is non-zero: a line without it counts 0, once the
    # log shows it is of an era that prints it (one line has it, or its version is >= `first`).
    absent_is_zero: bool = False


CATALOG: tuple[Metric, ...] = (
    # vLLM V0 engine: `Avg prompt throughput … Running … Swapped … Pending … GPU/CPU KV cache usage`.
    Metric(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests currently running on GPU.",
        "vllm-v0",
        "engine_stats",
        "running",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        "vllm-v0",
        "engine_stats",
        "waiting",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:num_requests_swapped",
        "gauge",
        "Number of requests swapped to CPU.",
        "vllm-v0",
        "engine_stats",
        "swapped",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:gpu_cache_usage_perc",
        "gauge",
        "GPU KV-cache usage. 1 means 100 percent usage.",
        "vllm-v0",
        "engine_stats",
        "gpu_kv_pct",
        "percent",
        VLLM_V0,
    ),
    Metric(
        "vllm:cpu_cache_usage_perc",
        "gauge",
        "CPU KV-cache usage. 1 means 100 percent usage.",
        "vllm-v0",
        "engine_stats",
        "cpu_kv_pct",
        "percent",
        VLLM_V0,
    ),
    Metric(
        "vllm:avg_prompt_throughput_toks_per_s",
        "gauge",
        "Average prefill throughput in tokens/s.",
        "vllm-v0",
        "engine_stats",
        "prompt_tps",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:avg_generation_throughput_toks_per_s",
        "gauge",
        "Average generation throughput in tokens/s.",
        "vllm-v0",
        "engine_stats",
        "gen_tps",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:prompt_tokens",
        "counter",
        "Number of prefill tokens processed.",
        "vllm-v0",
        "engine_stats",
        "prompt_tps",
        "rate_integral",
        VLLM_V0,
    ),
    Metric(
        "vllm:generation_tokens",
        "counter",
        "Number of generation tokens processed.",
        "vllm-v0",
        "engine_stats",
        "gen_tps",
        "rate_integral",
        VLLM_V0,
    ),
    Metric(
        "vllm:gpu_prefix_cache_hit_rate",
        "gauge",
        "GPU prefix cache block hit rate.",
        "vllm-v0",
        "prefix_cache",
        "gpu_hit_pct",
        "percent",
        VLLM_V0,
    ),
    Metric(
        "vllm:cpu_prefix_cache_hit_rate",
        "gauge",
        "CPU prefix cache block hit rate.",
        "vllm-v0",
        "prefix_cache",
        "cpu_hit_pct",
        "percent",
        VLLM_V0,
    ),
    Metric(
        "vllm:spec_decode_draft_acceptance_rate",
        "gauge",
        "Speulative token acceptance rate.",
        "vllm-v0",
        "spec_decode",
        "draft_accept_rate",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:spec_decode_efficiency",
        "gauge",
        "Speculative decoding system efficiency.",
        "vllm-v0",
        "spec_decode",
        "system_efficiency",
        "as_printed",
        VLLM_V0,
    ),
    Metric(
        "vllm:spec_decode_num_accepted_tokens",
        "counter",
        "Number of accepted tokens.",
        "vllm-v0",
        "spec_decode",
        "accepted",
        "cumulative",
        VLLM_V0,
    ),
    Metric(
        "vllm:spec_decode_num_draft_tokens",
        "counter",
        "Number of draft tokens.",
        "vllm-v0",
        "spec_decode",
        "drafted",
        "cumulative",
        VLLM_V0,
    ),
    Metric(
        "vllm:spec_decode_num_emitted_tokens",
        "counter",
        "Number of emitted tokens.",
        "vllm-v0",
        "spec_decode",
        "emitted",
        "cumulative",
        VLLM_V0,
    ),
    # vLLM V1 engine: `[Engine NNN: ]Avg prompt throughput … Running … Waiting … GPU KV cache usage …`.
    Metric(
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        "vllm-v1",
        "engine_stats",
        "running",
        "as_printed",
        VLLM_V1,
    ),
    Metric(
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        "vllm-v1",
        "engine_stats",
        "waiting",
        "as_printed",
        VLLM_V1,
    ),
    # Renamed in 0.9.2 (comment in loggers.py @ 0.11.2); the old name hidden in 0.11.x, gone by 0.26.
    Metric(
        "vllm:kv_cache_usage_perc",
        "gauge",
        "KV-cache usage. 1 means 100 percent usage.",
        "vllm-v1",
        "engine_stats",
        "gpu_kv_pct",
        "percent",
        VLLM_V1,
        first="0.9.2",
    ),
    Metric(
        "vllm:gpu_cache_usage_perc",
        "gauge",
        "GPU KV-cache usage. 1 means 100 percent usage.",
        "vllm-v1",
        "engine_stats",
        "gpu_kv_pct",
        "percent",
        VLLM_V1,
        before="0.11.0",
    ),
    Metric(
        "vllm:prompt_tokens",
        "counter",
        "Number of prefill tokens processed.",
        "vllm-v1",
        "engine_stats",
        "prompt_tps",
        "rate_integral",
        VLLM_V1,
    ),
    Metric(
        "vllm:generation_tokens",
        "counter",
        "Number of generation tokens processed.",
        "vllm-v1",
        "engine_stats",
        "gen_tps",
        "rate_integral",
        VLLM_V1,
    ),
    # `Preemptions: N` is this interval's count, printed from 0.11.2 only when N > 0.
    Metric(
        "vllm:num_preemptions",
        "counter",
        "Cumulative number of preemption from the engine.",
        "vllm-v1",
        "engine_stats",
        "preemptions",
        "interval_sum",
        VLLM_V1,
        first="0.11.2",
        absent_is_zero=True,
    ),
    Metric(
        "vllm:spec_decode_num_accepted_tokens",
        "counter",
        "Number of accepted tokens.",
        "vllm-v1",
        "spec_decode",
        "accepted",
        "interval_sum",
        VLLM_V1_SPEC,
    ),
    Metric(
        "vllm:spec_decode_num_draft_tokens",
        "counter",
        "Number of draft tokens.",
        "vllm-v1",
        "spec_decode",
        "drafted",
        "interval_sum",
        VLLM_V1_SPEC,
    ),
    # SGLang scheduler: `Decode batch, #running-req … #token … token usage … gen throughput … #queue-req`.
    Metric(
        "sglang:num_running_reqs",
        "gauge",
        "The number of running requests.",
        "sglang",
        "decode_batch",
        "running_req",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:num_used_tokens",
        "gauge",
        "The number of used tokens.",
        "sglang",
        "decode_batch",
        "num_token",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:token_usage",
        "gauge",
        "The token usage.",
        "sglang",
        "decode_batch",
        "token_usage",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:gen_throughput",
        "gauge",
        "The generation throughput (token/s).",
        "sglang",
        "decode_batch",
        "gen_tps",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:num_queue_reqs",
        "gauge",
        "The number of requests in the waiting queue.",
        "sglang",
        "decode_batch",
        "queue_req",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:spec_accept_length",
        "gauge",
        "The average acceptance length of speculative decoding.",
        "sglang",
        "decode_batch",
        "accept_len",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:spec_accept_rate",
        "gauge",
        "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).",
        "sglang",
        "decode_batch",
        "accept_rate",
        "as_printed",
        SGLANG_056,
    ),
    Metric(
        "sglang:swa_token_usage",
        "gauge",
        "The token usage for SWA layers.",
        "sglang",
        "decode_batch",
        "swa_token_usage",
        "as_printed",
        SGLANG_056,
    ),
    Metric(
        "sglang:mamba_usage",
        "gauge",
        "The token usage for Mamba layers.",
        "sglang",
        "decode_batch",
        "mamba_usage",
        "as_printed",
        SGLANG_056,
    ),
    Metric(
        "sglang:max_total_num_tokens",
        "gauge",
        "Maximum total number of tokens in the KV cache pool.",
        "sglang",
        "kv_pool",
        "tokens",
        "carried",
        SGLANG_056,
    ),
    Metric(
        "sglang:generation_tokens",
        "counter",
        "Number of generation tokens processed.",
        "sglang",
        "decode_batch",
        "gen_tps",
        "rate_integral",
        SGLANG,
    ),
    # `Prefill batch` lines set the same scheduler gauges (log_prefill_stats @ 0.4.8, 0.5.6).
    Metric(
        "sglang:num_running_reqs",
        "gauge",
        "The number of running requests.",
        "sglang",
        "prefill_batch",
        "running_req",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:num_queue_reqs",
        "gauge",
        "The number of requests in the waiting queue.",
        "sglang",
        "prefill_batch",
        "queue_req",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:token_usage",
        "gauge",
        "The token usage.",
        "sglang",
        "prefill_batch",
        "token_usage",
        "as_printed",
        SGLANG,
    ),
    Metric(
        "sglang:cache_hit_rate",
        "gauge",
        "The prefix cache hit rate.",
        "sglang",
        "prefill_batch",
        "cached_token",
        "hit_ratio",
        SGLANG,
    ),
)

# Engine metrics a log cannot support, and why (README "Export to Prometheus" repeats this).
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        (
            "vllm:time_to_first_token_seconds, vllm:e2e_request_latency_seconds, vllm:inter_token_latency_seconds, "
            "vllm:request_* histograms; sglang:time_to_first_token_seconds, sglang:e2e_request_latency_seconds, "
            "sglang:inter_token_latency_seconds"
        ),
        "per-request latencies and lengths: no stats line prints them",
    ),
    (
        "vllm:prefix_cache_queries, vllm:prefix_cache_hits (V1), vllm:mm_cache_*, vllm:external_prefix_cache_*",
        "V1 prints a hit rate over the last requests, not the token counts these counters hold",
    ),
    (
        "vllm:spec_decode_num_drafts, vllm:spec_decode_num_accepted_tokens_per_pos",
        "the line prints only the mean acceptance length (2 decimals) and per-position rates, not the drafts",
    ),
    (
        "vllm:request_success, sglang:num_requests_total, sglang:prompt_tokens_total, sglang:cached_tokens_total",
        "counted per finished request by the API server / tokenizer manager, which logs no totals",
    ),
    ("vllm:num_preemptions (V0)", "the V0 stats line prints no preemption count"),
    (
        "vllm:cache_config_info",
        "an info metric whose labels are the whole cache config, which the log does not print",
    ),
    (
        "N Engines Aggregated stats lines (vLLM --aggregate-engine-logging)",
        "one line sums all engines; vLLM's own metrics are per engine",
    ),
)

_LINES = {
    "engine_stats": "stats line",
    "prefix_cache": "prefix-cache line",
    "spec_decode": "spec-decode line",
    "decode_batch": "Decode batch line",
    "prefill_batch": "Prefill batch line",
    "kv_pool": "KV pool line",
}


def help_text(metrics: list[Metric]) -> str:
    """The engine's HELP, then how logparse got the values from the log (one clause per source)."""
    notes = list(dict.fromkeys(_note(m) for m in metrics))
    return f"{metrics[0].help} [logparse: {'; '.join(notes)}]"


def _note(metric: Metric) -> str:
    line = _LINES.get(metric.table, metric.table)
    field = f"{metric.table}.{metric.column}"
    if metric.how == "rate_integral":
        held = "" if metric.era == "sglang" else ", held flat over a silence longer than 1.5 usual intervals"
        return (
            f"estimated: rebuilt by integrating the {line}'s printed rate ({field}, per second) over the "
            f"seconds since the previous line, from 0 at the first line{held}"
        )
    return {
        "as_printed": f"{field} as each {line} printed it",
        "percent": f"{field}, the percentage each {line} printed, divided by 100",
        "interval_sum": f"running sum of the per-interval counts ({field}) the {line}s printed, from the first",
        "cumulative": f"the running total ({field}) each {line} printed",
        "hit_ratio": "cached / (new + cached) tokens of each Prefill batch line, as SGLang computes it",
        "carried": f"the pool size ({field}) the KV cache allocation line printed, at each Decode batch line",
    }[metric.how]
