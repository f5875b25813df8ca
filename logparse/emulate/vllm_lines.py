"""vLLM message bodies, one function per line family, from `vllm-log-formats.md`.

Each function returns the message exactly as the logger call formats it (no prefix). The era
decides between the variants listed in the doc's tables; the section is named on each function.
"""

from __future__ import annotations

from collections.abc import Sequence

from logparse.emulate.eras import VllmEra

# file:line of each line family; line numbers drift by release and are only plausible
SITES = {
    "version": "api_server.py:1839",
    "args": "utils.py:326",
    "arch": "model.py:547",
    "maxlen": "model.py:1510",
    "chunked": "scheduler.py:205",
    "load_start": "gpu_model_runner.py:2602",
    "weights_took": "default_loader.py:267",
    "model_took": "gpu_model_runner.py:2653",
    "cache_dir": "backends.py:548",
    "dynamo": "backends.py:559",
    "compile_graph": "backends.py:218",
    "compile_total": "monitor.py:34",
    "avail_kv": "gpu_worker.py:298",
    "kv_size": "kv_cache_utils.py:1087",
    "kv_conc": "kv_cache_utils.py:1091",
    "graph_done": "gpu_model_runner.py:3480",
    "free_mem": "gpu_worker.py:440",
    "init": "core.py:210",
    "tasks": "api_server.py:1611",
    "serve": "api_server.py:1912",
    "routes": "launcher.py:34",
    "route": "launcher.py:42",
    "stats": "loggers.py:127",
    "spec": "metrics.py:96",
    "slow_tok": "tokenizer.py:281",
    "fp8": "kv_cache.py:88",
    "engines_blocks": "loggers.py:370",
}
SITES_V0 = {
    "version": "api_server.py:528",
    "load_start": "model_runner.py:1072",
    "model_took": "model_runner.py:1077",
    "profiling": "worker.py:262",
    "blocks": "distributed_gpu_executor.py:57",
    "kv_conc": "distributed_gpu_executor.py:61",
    "capture": "model_runner.py:1404",
    "graph_done": "model_runner.py:1518",
    "init": "llm_engine.py:431",
    "routes": "launcher.py:19",
    "route": "launcher.py:27",
    "stats": "metrics.py:351",
    "prefix": "metrics.py:367",
    "spec": "metrics.py:383",
    "slow_tok": "tokenizer.py:169",
    "fp8": "model_runner.py:1095",
    "preempt": "scheduler.py:1560",
}

LOGO = (
    "       █     █     █▄   ▄█",
    " ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}",
    "  █▄█▀ █     █     █     █  model   {model}",
    "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
)


def format_gib(value: float) -> str:
    """vLLM's `format_gib` (0.14+): `str(round(x, 2))`, so 61.7, 62.0, 9.35 (§4.3)."""
    return str(round(value, 2))


def stats_v0(
    prompt: float, gen: float, running: int, swapped: int, pending: int, gpu_kv: float, cpu_kv: float
) -> str:
    """§2.1 V0 stats line (0.4.3..0.10.2, trailing period)."""
    return (
        "Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
        "Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, "
        "CPU KV cache usage: %.1f%%." % (prompt, gen, running, swapped, pending, gpu_kv, cpu_kv)
    )


def prefix_cache_v0(gpu: float, cpu: float) -> str:
    """§2.2 V0 prefix-cache line (0.5.5..0.10.2)."""
    return "Prefix cache hit rate: GPU: %.2f%%, CPU: %.2f%%" % (gpu, cpu)


def stats_v1(
    era: VllmEra,
    engine: int,
    prompt: float,
    gen: float,
    running: int,
    waiting: int,
    preemptions: int,
    gpu_kv: float,
    prefix_hit: float | None,
    aggregated: int = 0,
) -> str:
    """§2.3 V1 stats line: `Engine %03d: ` (0.8.3+) and the 0.11.2+ dynamic parts; with
    `aggregated` = N engines (`--aggregate-engine-logging`, 0.11.2+) the `{N} Engines Aggregated: `
    prefix instead, the values being the engines' combined figures."""
    parts = [
        "Avg prompt throughput: %.1f tokens/s" % prompt,
        "Avg generation throughput: %.1f tokens/s" % gen,
        "Running: %d reqs" % running,
        "Waiting: %d reqs" % waiting,
    ]
    if era.stats_preemptions and preemptions > 0:
        parts.append("Preemptions: %d" % preemptions)
    parts.append("GPU KV cache usage: %.1f%%" % gpu_kv)
    if prefix_hit is not None:
        parts.append("Prefix cache hit rate: %.1f%%" % prefix_hit)
    return stats_prefix(engine, aggregated) + ", ".join(parts)


def stats_prefix(engine: int, aggregated: int = 0) -> str:
    """§2.3 part 0: `Engine {:03d}: ` or, for the aggregated logger, `{N} Engines Aggregated: `."""
    if aggregated:
        return f"{aggregated} Engines Aggregated: "
    return f"Engine {engine:03d}: "


def engines_num_gpu_blocks(engines: int, blocks: int) -> str:
    """§2.4 `%d Engines: vllm cache_config_info ...` (INFO 0.11.2+, the aggregated logger, once)."""
    return "%d Engines: vllm cache_config_info with initialization after num_gpu_blocks is: %d" % (
        engines,
        blocks,
    )


def spec_v0(rate: float, efficiency: float, k: int, accepted: int, drafted: int, emitted: int) -> str:
    """§3.1 V0 `Speculative metrics` (0.5.3..0.9.2); counts are cumulative."""
    return (
        "Speculative metrics: Draft acceptance rate: %.3f, System efficiency: %.3f, "
        "Number of speculative tokens: %d, Number of accepted tokens: %d, "
        "Number of draft tokens: %d, Number of emitted tokens: %d."
        % (rate, efficiency, k, accepted, drafted, emitted)
    )


def spec_v1(
    mean_len: float,
    accepted_tps: float,
    drafted_tps: float,
    accepted: int,
    drafted: int,
    per_position: Sequence[float],
    avg_rate_pct: float,
) -> str:
    """§3.2 V1 `SpecDecoding metrics` (0.10.2..0.33.0); counts are per interval."""
    positions = ", ".join("%.3f" % p for p in per_position)
    return (
        "SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f tokens/s, "
        "Drafted throughput: %.2f tokens/s, Accepted: %d tokens, Drafted: %d tokens, "
        "Per-position acceptance rate: %s, Avg Draft acceptance rate: %.1f%%"
        % (mean_len, accepted_tps, drafted_tps, accepted, drafted, positions, avg_rate_pct)
    )


def version_line(version: str) -> str:
    """§9.1 `vLLM API server version %s` (0.4.2..0.14.0)."""
    return "vLLM API server version %s" % version


def logo(version: str, model: str) -> str:
    """§9.1 ASCII logo (0.16+): a multi-line message whose first and last lines are empty."""
    body = "\n".join(line.format(version=version, model=model) for line in LOGO)
    return "\n" + body + "\n"


def non_default_args(args: dict[str, object]) -> str:
    """§9.2 `non-default args: %s` (0.9.0+), a dict repr."""
    return "non-default args: %s" % (args,)


def starting_to_load(model: str) -> str:
    """§5 first loading line (V0 0.5.3..0.10.2, V1 0.6.4+)."""
    return "Starting to load model %s..." % model


def loading_weights_took(seconds: float) -> str:
    """§5 `Loading weights took %.2f seconds` (0.8.0+)."""
    return "Loading weights took %.2f seconds" % seconds


def model_loading_took(era: VllmEra, gib: float, seconds: float) -> str:
    """§5 weight-memory line; its wording and number format drift by release."""
    if era.model_loading == "v0":
        return "Loading model weights took %.4f GB" % gib
    if era.model_loading == "gib_and":
        return "Model loading took %.4f GiB and %.6f seconds" % (gib, seconds)
    if era.model_loading == "gib_memory":
        return "Model loading took %.4f GiB memory and %.6f seconds" % (gib, seconds)
    return "Model loading took %s GiB memory and %.6f seconds" % (format_gib(gib), seconds)


def compile_lines(
    era: VllmEra, cache_dir: str, dynamo_s: float, graph_s: float, total_s: float, max_tokens: int
) -> list[str]:
    """§7 torch.compile lines of one worker, in print order."""
    lines = [
        "Using cache directory: %s for vLLM's torch.compile" % cache_dir,
        "Dynamo bytecode transform time: %.2f s" % dynamo_s,
    ]
    if era.compile_words == "takes_dynamic":
        lines.append("Compiling a graph for dynamic shape takes %.2f s" % graph_s)
        lines.append("torch.compile takes %.2f s in total" % total_s)
    else:
        lines.append("Compiling a graph for compile range %s takes %.2f s" % ((1, max_tokens), graph_s))
        lines.append("torch.compile took %.2f s in total" % total_s)
    return lines


def available_kv(era: VllmEra, gib: float) -> str:
    """§4.3 `Available KV cache memory` (V1 0.9.1+)."""
    if era.available_kv == "f2":
        return "Available KV cache memory: %.2f GiB" % gib
    return "Available KV cache memory: %s GiB" % format_gib(gib)


def memory_profiling_v0(
    seconds: float, total: float, util: float, weights: float, non_torch: float, activation: float, kv: float
) -> str:
    """§4.3 V0 three-line profiling summary (0.6.5..0.10.2)."""
    return (
        "Memory profiling takes %.2f seconds\n"
        "the current vLLM instance can use total_gpu_memory (%.2fGiB) x gpu_memory_utilization "
        "(%.2f) = %.2fGiB\n"
        "model weights take %.2fGiB; non_torch_memory takes %.2fGiB; PyTorch activation peak "
        "memory takes %.2fGiB; the rest of the memory reserved for KV Cache is %.2fGiB."
        % (seconds, total, util, total * util, weights, non_torch, activation, kv)
    )


def kv_capacity(
    era: VllmEra, tokens: int, max_model_len: int, concurrency: float, block_size: int
) -> list[str]:
    """§4.1/§4.2 KV pool size and maximum concurrency lines."""
    if era.kv_size == "v0":
        return [
            "# GPU blocks: %d, # CPU blocks: %d" % (tokens // block_size, 2048),
            "Maximum concurrency for %s tokens per request: %.2fx" % (max_model_len, concurrency),
        ]
    if era.kv_size == "separate":
        return [
            "GPU KV cache size: %s tokens" % f"{tokens:,}",
            "Maximum concurrency for %s tokens per request: %.2fx" % (f"{max_model_len:,}", concurrency),
        ]
    return [
        "%s KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx"
        % ("GPU", f"{tokens:,}", f"{max_model_len:,}", concurrency)
    ]


def free_memory(
    free: float,
    total: float,
    util: float,
    weights: float,
    activation: float,
    non_torch: float,
    graphs: float,
    fit_bytes: int,
    full_bytes: int,
    kv: float,
) -> str:
    """§4.3 `Free memory on device ...` advice line (INFO 0.26+), GiB via `format_gib`."""
    return (
        "Free memory on device (%s/%s GiB) on startup. Desired GPU memory utilization is (%s, %s GiB). "
        "Actual usage is %s GiB for weight, %s GiB for peak activation, %s GiB for non-torch memory, "
        "and %s GiB for CUDAGraph memory. Replace gpu_memory_utilization config with "
        "`--kv-cache-memory=%d` (%s GiB) to fit into requested memory, or `--kv-cache-memory=%d` "
        "(%s GiB) to fully utilize gpu memory. Current kv cache memory in use is %s GiB."
        % (
            format_gib(free),
            format_gib(total),
            util,
            format_gib(total * util),
            format_gib(weights),
            format_gib(activation),
            format_gib(non_torch),
            format_gib(graphs),
            fit_bytes,
            format_gib(fit_bytes / 2**30),
            full_bytes,
            format_gib(full_bytes / 2**30),
            format_gib(kv),
        )
    )


CAPTURE_V0 = (
    "Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model "
    "is not static. To run the model in eager mode, set 'enforce_eager=True' or use "
    "'--enforce-eager' in the CLI. If out-of-memory error occurs during cudagraph capture, "
    "consider decreasing `gpu_memory_utilization` or switching to eager mode. You can also "
    "reduce the `max_num_seqs` as needed to decrease memory usage."
)


def graph_finished(seconds: float, gib: float) -> str:
    """§6 `Graph capturing finished in %.0f secs, took %.2f GiB` (0.6.4+)."""
    return "Graph capturing finished in %.0f secs, took %.2f GiB" % (seconds, gib)


def init_engine(era: VllmEra, seconds: float, compile_s: float | None) -> str:
    """§8 `init engine (profile, create kv cache, warmup model) took ...`."""
    head = "init engine (profile, create kv cache, warmup model) took %.2f" % seconds
    if era.init_unit == "seconds":
        return head + " seconds"
    if compile_s is None:
        return head + " s"
    return head + " s (compilation: %.2f s)" % compile_s


def supported_tasks(era: VllmEra) -> str | None:
    """§8 `Supported_tasks: %s` (0.10.1..0.11.0) / `Supported tasks: %s` (0.11.2+)."""
    if era.supported_tasks == "none":
        return None
    word = "Supported_tasks" if era.supported_tasks == "underscore" else "Supported tasks"
    return "%s: %s" % (word, ["generate"])


def server_start(era: VllmEra, url: str) -> str | None:
    """§8 the API server's start line."""
    if era.server_start == "api_server_n":
        return "Starting vLLM API server %d on %s" % (0, url)
    if era.server_start == "server_on":
        return "Starting vLLM server on %s" % url
    return None


ROUTES = (
    ("/openapi.json", "HEAD, GET"),
    ("/docs", "HEAD, GET"),
    ("/redoc", "HEAD, GET"),
    ("/health", "GET"),
    ("/metrics", "GET"),
    ("/v1/models", "GET"),
    ("/v1/chat/completions", "POST"),
    ("/v1/completions", "POST"),
)


def routes() -> list[str]:
    """§8 `Available routes are:` and one `Route: %s, Methods: %s` per route."""
    return ["Available routes are:"] + ["Route: %s, Methods: %s" % route for route in ROUTES]


SLOW_TOKENIZER = (
    "Using a slow tokenizer. This might cause a significant slowdown. "
    "Consider using a fast tokenizer instead."
)


def fp8_warning(era: VllmEra) -> str:
    """§12 FP8 KV-cache scale warning of the era."""
    if era.fp8_warning == "v0":
        return (
            "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors "
            "of 1.0. This may lead to less accurate results!"
        )
    if era.fp8_warning == "v1_old":
        return (
            "Using KV cache scaling factor 1.0 for fp8_e4m3. This may cause accuracy issues. "
            "Please make sure k/v_scale scaling factors are available in the fp8 checkpoint."
        )
    return (
        "Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that "
        "k/v_scale scaling factors are properly set in the checkpoint."
    )


def preempted_v0(request_id: str, cumulative: int) -> str:
    """§10.1 V0 preemption warning (logged for the 1st, 51st, 101st ... preemption)."""
    return (
        "Sequence group %s is preempted by %s mode because there is not enough KV cache space. "
        "This can affect the end-to-end performance. Increase gpu_memory_utilization or "
        "tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=%d"
        % (request_id, "PreemptionMode.RECOMPUTE", cumulative)
    )


def site(era: VllmEra, key: str) -> str:
    """The `file:line` a line family is logged from in `era`."""
    if not era.v1 and key in SITES_V0:
        return SITES_V0[key]
    if key == "logo":
        return f"{era.logo_file}:287"
    if key == "args":
        return f"{era.args_file}:326"
    return SITES.get(key, "utils.py:1")
