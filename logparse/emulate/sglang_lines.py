"""SGLang message bodies, one function per line family, from `sglang-log-formats.md`."""

from __future__ import annotations

from collections.abc import Sequence

from logparse.emulate.eras import SglangEra


def _usage_prefill(hybrid: bool, usage: float, mamba_usage: float) -> str:
    if hybrid:
        return "full token usage: %.2f, mamba usage: %.2f" % (usage, mamba_usage)
    return "token usage: %.2f" % usage


def _usage_decode(hybrid: bool, tokens: int, usage: float, mamba_num: int, mamba_usage: float) -> str:
    if hybrid:
        return "#full token: %d, full token usage: %.2f, mamba num: %d, mamba usage: %.2f" % (
            tokens,
            usage,
            mamba_num,
            mamba_usage,
        )
    return "#token: %d, token usage: %.2f" % (tokens, usage)


def prefill_batch(
    era: SglangEra,
    *,
    new_seq: int,
    new_token: int,
    cached: int,
    usage: float,
    running: int,
    queue: int,
    pending: int,
    input_tps: float,
    hybrid: bool,
    mamba_usage: float,
) -> str:
    """§2.1 Prefill line: P5 (`. `, no trailing comma), P11 (`, `, trailing `, `), P14."""
    head = "#new-seq: %d, #new-token: %d, #cached-token: %d, " % (new_seq, new_token, cached)
    usage_text = _usage_prefill(hybrid, usage, mamba_usage)
    tail = "%s, #running-req: %d, #queue-req: %d" % (usage_text, running, queue)
    if era.prefill == "P5":
        return "Prefill batch. " + head + tail
    if era.prefill == "P11":
        return "Prefill batch, " + head + tail + ", "
    return (
        "Prefill batch, " + head + "%s, #running-req: %d, #queue-req: %d, #pending-token: %d, "
        "cuda graph: %s, input throughput (token/s): %.2f"
        % (usage_text, running, queue, pending, False, input_tps)
    )


def decode_batch(
    era: SglangEra,
    *,
    running: int,
    tokens: int,
    usage: float,
    accept_len: float | None,
    accept_rate: float | None,
    gen_tps: float,
    queue: int,
    hybrid: bool,
    mamba_num: int,
    mamba_usage: float,
) -> str:
    """§3.1 Decode line: D7 (`. `), D13 (`, `, trailing `, `), D14 (no trailing comma)."""
    usage_text = _usage_decode(hybrid and era.decode != "D7", tokens, usage, mamba_num, mamba_usage)
    spec = ""
    if accept_len is not None:
        spec = "accept len: %.2f, " % accept_len
        if accept_rate is not None:
            spec += "accept rate: %.2f, " % accept_rate
    tail = "cuda graph: %s, gen throughput (token/s): %.2f, #queue-req: %d" % (True, gen_tps, queue)
    if era.decode == "D7":
        return "Decode batch. #running-req: %d, %s, %s%s" % (running, usage_text, spec, tail)
    if era.decode == "D13":
        return "Decode batch, #running-req: %d, %s, %s%s, " % (running, usage_text, spec, tail)
    return "Decode batch, #running-req: %d, %s, %s%s" % (running, usage_text, spec, tail)


def accept_rate(era: SglangEra, accept_len: float, k: int) -> float | None:
    """§4 `accept rate`: with the bonus token before 2026-04-28, drafts only after."""
    if era.accept_rate == "none":
        return None
    if era.accept_rate == "with_bonus":
        return accept_len / (k + 1)
    return (accept_len - 1) / k


def retract(era: SglangEra, count: int, gained: int, hybrid: bool, before: float, after: float) -> str:
    """§10.1 retraction line (`KV cache pool is full. Retract requests.`)."""
    if era.retract == "ratio":
        return (
            "KV cache pool is full. Retract requests. #retracted_reqs: %d, #new_token_ratio: %.4f -> %.4f"
            % (count, before, after)
        )
    mamba = ", #mamba_num_gained: %d" % count if hybrid else ""
    return (
        "KV cache pool is full. Retract requests. #retracted_reqs: %d, #new_tokens_gained: %d%s, "
        "#new_token_ratio: %.4f -> %.4f" % (count, gained, mamba, before, after)
    )


def dist_begin() -> str:
    """§5.6 `Init torch distributed begin.`."""
    return "Init torch distributed begin."


def dist_end(era: SglangEra, elapsed: float, mem_gb: float) -> str:
    """§5.6 `Init torch distributed ends. ...`."""
    if era.dist_end == "mem":
        return "Init torch distributed ends. mem usage=%.2f GB" % mem_gb
    return "Init torch distributed ends. elapsed=%.2f s, mem usage=%.2f GB" % (elapsed, mem_gb)


def load_begin(avail: float) -> str:
    """§6 `Load weight begin. avail mem={f2} GB`."""
    return "Load weight begin. avail mem=%.2f GB" % avail


def load_end(
    era: SglangEra, elapsed: float, model_class: str, quant: str | None, avail: float, usage: float
) -> str:
    """§6 `Load weight end. ...` (with dtype until 2026-03-04, then elapsed and quant)."""
    if era.load_end == "dtype":
        return "Load weight end. type=%s, dtype=%s, avail mem=%.2f GB, mem usage=%.2f GB." % (
            model_class,
            "torch.bfloat16",
            avail,
            usage,
        )
    quant_text = "quant=%s, " % quant if quant else ""
    return "Load weight end. elapsed=%.2f s, type=%s, %savail mem=%.2f GB, mem usage=%.2f GB." % (
        elapsed,
        model_class,
        quant_text,
        avail,
        usage,
    )


def kv_allocated(era: SglangEra, tokens: int, kv_gb: float, dtype: str, mla: bool) -> list[str]:
    """§5.1 `KV Cache is allocated`: `KV size` for MLA pools, `K size`/`V size` for MHA."""
    sizes = "KV size: %.2f GB" % kv_gb if mla else "K size: %.2f GB, V size: %.2f GB" % (kv_gb / 2, kv_gb / 2)
    if era.kv_line == "plain":
        return ["KV Cache is allocated. #tokens: %d, %s" % (tokens, sizes)]
    if era.kv_line == "dtype_line":
        return [
            "Using KV cache dtype: %s" % dtype,
            "KV Cache is allocated. #tokens: %d, %s" % (tokens, sizes),
        ]
    return ["KV Cache is allocated. dtype: %s, #tokens: %d, %s" % (dtype, tokens, sizes)]


def mamba_allocated(
    slots: int, conv: float, ssm: float, inter_ssm: float | None, inter_conv: float | None
) -> str:
    """§5.2 Mamba pool line (0.5.3.post2+), `GB` glued to the number, trailing space."""
    text = (
        "Mamba Cache is allocated. max_mamba_cache_size: %d, conv_state size: %.2fGB, "
        "ssm_state size: %.2fGB " % (slots, conv, ssm)
    )
    if inter_ssm is not None and inter_conv is not None:
        text += "intermediate_ssm_state_cache size: %.2fGB intermediate_conv_window_cache size: %.2fGB " % (
            inter_ssm,
            inter_conv,
        )
    return text


def pool_end(avail: float) -> str:
    """§5.4 `Memory pool end. avail mem={f2} GB`."""
    return "Memory pool end. avail mem=%.2f GB" % avail


def capacity(tokens: int, chunk: int, running: int, context: int, avail: float) -> str:
    """§5.5 capacity summary (0.4.7+ with `available_gpu_mem`)."""
    return (
        "max_total_num_tokens=%d, chunked_prefill_size=%d, max_prefill_tokens=%d, "
        "max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB"
        % (tokens, chunk, chunk, running, context, avail)
    )


def reduced_running(requested: int, actual: int) -> str:
    """§5.5 `max_running_requests was reduced ...` (2026+)."""
    return (
        "max_running_requests was reduced from the requested %d to %d (per dp worker) due to the "
        "available KV cache capacity." % (requested, actual)
    )


def capture_begin(era: SglangEra, role: str, avail: float, bs: Sequence[int], per_bs: int) -> str:
    """§7 capture begin line: legacy `Capture cuda graph begin.` or the 2026-06-22 role/phase form."""
    if era.capture == "legacy":
        what = "cuda graph" if role == "target" else "draft cuda graph"
        return "Capture %s begin. This can take up to several minutes. avail mem=%.2f GB" % (what, avail)
    phase = "verify" if role == "target" and per_bs > 1 else "decode"
    return "Capture %s %s CUDA graph begin. backend=full, num_tokens_per_bs=%d, bs=%s, avail mem=%.2f GB" % (
        role,
        phase,
        per_bs,
        list(bs),
        avail,
    )


def capture_end(era: SglangEra, role: str, elapsed: float, usage: float, avail: float, per_bs: int) -> str:
    """§7 capture end line (mem usage before avail mem since 0.4.6.post1 / 0.4.7.post1 for drafts)."""
    if era.capture == "legacy":
        what = "cuda graph" if role == "target" else "draft cuda graph"
        return "Capture %s end. Time elapsed: %.2f s. mem usage=%.2f GB. avail mem=%.2f GB." % (
            what,
            elapsed,
            usage,
            avail,
        )
    phase = "verify" if role == "target" and per_bs > 1 else "decode"
    return "Capture %s %s CUDA graph end. elapsed=%.2f s, mem usage=%.2f GB, avail mem=%.2f GB." % (
        role,
        phase,
        elapsed,
        usage,
        avail,
    )


def capture_bs(bs: Sequence[int]) -> str:
    """§7 `Capture cuda graph bs [...]` (rank 0, legacy capture only)."""
    return "Capture cuda graph bs %s" % (list(bs),)


FP8_KV = (
    "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. "
    "This may lead to less accurate results!"
)
READY = "The server is fired up and ready to roll!"
SLOW_TOKENIZER = (
    "Using a slow tokenizer. This might cause a significant slowdown. "
    "Consider using a fast tokenizer instead."
)


def deepgemm_jit(n: int, k: int) -> str:
    """§8 DeepGEMM JIT compile line (0.4.5.post3+), one per new shape."""
    return "Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=%d, K=%d, num_groups=1 with all Ms." % (n, k)
