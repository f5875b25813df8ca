"""The parameter model of an emulated run: frozen dataclasses, JSON-friendly, validated once."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from logparse.emulate.eras import Era, SglangEra, VllmEra, resolve_era

Engine = Literal["vllm", "sglang"]
WARNING_KINDS = ("slow_tokenizer", "fp8_kv_scale")


@dataclass(frozen=True, slots=True)
class PhaseParams:
    """One burst of load: `concurrency` requests arrive together after `gap_s` of idle time.

    Rates are per request. Prefill runs at `prefill_tps / (1 + prefill_ctx_slowdown * ctx / 1e5)`
    where ctx is the request's context already in cache; `prefill_chunk_tps` pins the rates of the
    phase's first request chunk by chunk. Decode does `decode_tps / (1 + decode_ctx_slowdown *
    ctx / 1e5)` forward steps per second, each emitting the step's mean acceptance length
    (1 without speculation). `noise` and `spec_jitter` are log-normal sigmas drawn once per
    sampling block (a vLLM stats interval, an SGLang decode-log interval).

    `dp_split` (`RunParams.dp > 1`): requests per DP group / vLLM engine, summing to
    `concurrency`; empty means round-robin (request i goes to group i mod dp).
    """

    concurrency: int = 8
    input_len: int = 4096
    output_len: int = 512
    gap_s: float = 20.0
    prefill_tps: float = 20_000.0
    prefill_ctx_slowdown: float = 0.0
    prefill_chunk_tps: tuple[float, ...] = ()
    prefill_noise: float = 0.01
    decode_tps: float = 40.0
    decode_ctx_slowdown: float = 0.0
    noise: float = 0.02
    spec_accept_len: float | None = None
    spec_jitter: float = 0.0
    stall_s: float = 0.0
    oom_retries: int = 0
    jit_compiles: int = 0
    preemptions: tuple[float, ...] = ()
    dp_split: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StartupParams:
    """Cold-start figures, as the engine prints them (GiB for vLLM, `GB` for SGLang)."""

    model: str = "meta-llama/Llama-3.1-8B-Instruct"
    model_class: str = "LlamaForCausalLM"
    quant: str | None = None
    pre_load_s: float = 15.0
    weight_load_s: float = 8.0
    model_load_s: float | None = None
    weights_gib: float = 14.99
    shards: int = 4
    compile_s: float | None = None
    total_gpu_gib: float = 79.19
    gpu_memory_utilization: float = 0.9
    non_torch_gib: float = 0.35
    peak_activation_gib: float = 4.35
    kv_gib: float = 50.5
    kv_fit_bytes: int | None = None
    kv_pool_tokens: int = 413_696
    kv_layout: Literal["mha", "mla"] = "mha"
    max_model_len: int = 32_768
    block_size: int = 16
    cuda_graph_s: float = 12.0
    cuda_graph_sizes: int = 67
    cuda_graph_gib: float = 0.52
    init_s: float = 40.0
    post_init_s: float = 2.0
    oom_retries: int = 0
    draft_model: str | None = None
    draft_model_class: str | None = None
    draft_weights_gib: float = 0.0
    draft_load_s: float = 0.0
    draft_kv_gib: float = 0.0
    mamba_gib: float = 0.0
    mamba_slots: int = 0
    remaining_gib: float | None = None
    requested_running: int | None = None


@dataclass(frozen=True, slots=True)
class LogStyle:
    """How the log was captured: wrappers, colour (a TTY), access-log noise."""

    wrapper: Literal["none", "docker", "compose"] = "none"
    color: bool = False
    access_log: bool = True
    health_poll_s: float | None = None
    metrics_poll_s: float | None = None
    client: str = "127.0.0.1"
    glue_tqdm: bool = False


@dataclass(frozen=True, slots=True)
class RunParams:
    """Everything `emulate()` needs. `era` is an era name or release (see `eras.py`).

    `dp` > 1 with SGLang is `--dp-size dp --enable-dp-attention`: `tp // dp` GPUs per attention
    DP group, each group's scheduler prints its own Prefill/Decode lines tagged ` DP{g} TP{r}`
    (plus ` EP{r}` when `ep_size` = tp). `dp_interleave` salts the order in which the groups'
    lines of one instant land in the log (0 = group order).

    `dp` > 1 with vLLM V1 is `--data-parallel-size dp`: dp engine cores of `tp` GPUs each
    (`EngineCore_DP{d}`, workers `Worker_DP{d}_TP{r}`, plus `_EP{n}` when `ep_size` = dp * tp,
    i.e. `--enable-expert-parallel`); the API server prints one `Engine {d:03d}:` stats line per
    engine per interval, in engine order (`dp_interleave` does not apply).

    `aggregate_engine_logging` (vLLM 0.11.2+, dp > 1) is `--aggregate-engine-logging`: the API
    server prints one `{dp} Engines Aggregated:` stats line per interval instead of the per-engine
    lines (throughputs, Running and Waiting summed over the engines, KV cache usage their mean),
    one SpecDecoding line for all engines, and `{dp} Engines: vllm cache_config_info ...` once
    at start-up.

    `cached_counts_chunks` (SGLang) renders a fork or era whose Prefill line's `#cached-token`
    counts the request's earlier chunks (the context already in KV) instead of prefix-cache
    hits only (today's SGLang prints 0 on a continuing chunk): the same run, counted otherwise.

    `dcp_size` > 1 (SGLang `--dcp-size`) shards every request's KV over that many ranks: the
    pool holds `dcp_size` times `startup.kv_pool_tokens` tokens of context, and each rank's
    Decode line counts (and rates the usage of) its own share, the pool it printed.
    """

    engine: Engine = "vllm"
    era: str | None = None
    seed: int = 0
    start: str = "2026-07-28T17:06:30"
    tp: int = 1
    spec_tokens: int = 0
    spec_method: str = "eagle3"
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 256
    enable_prefix_caching: bool = True
    decode_log_interval: int = 40
    stats_interval_s: float | None = None
    hybrid_ssm: bool = False
    dcp_size: int = 1
    dp: int = 1
    ep_size: int = 1
    dp_interleave: int = 1
    aggregate_engine_logging: bool = False
    cached_counts_chunks: bool = False
    tail_idle_s: float = 15.0
    warnings: tuple[str, ...] = ()
    startup: StartupParams = field(default_factory=StartupParams)
    phases: tuple[PhaseParams, ...] = (PhaseParams(),)
    style: LogStyle = field(default_factory=LogStyle)

    def to_dict(self) -> dict[str, Any]:
        """The parameters as plain JSON types (tuples become lists).

        The data-parallel fields (and `cached_counts_chunks`) are left out while at their
        defaults, so runs that do not use them serialise exactly as they did before those
        fields existed.
        """
        data = dataclasses.asdict(self)
        for key in _OPTIONAL_DEFAULTS:
            if data[key] == _OPTIONAL_DEFAULTS[key]:
                del data[key]
        for phase in data["phases"]:
            if not phase["dp_split"]:
                del phase["dp_split"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunParams:
        """Rebuild parameters from `to_dict()` output."""
        data = dict(data)
        data["startup"] = StartupParams(**data.get("startup", {}))
        data["style"] = LogStyle(**data.get("style", {}))
        data["phases"] = tuple(_phase_from_dict(p) for p in data.get("phases", []))
        data["warnings"] = tuple(data.get("warnings", ()))
        return cls(**data)


def _phase_from_dict(data: Mapping[str, Any]) -> PhaseParams:
    # JSON gives lists where the dataclass holds tuples; the values are as untyped as the JSON.
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return PhaseParams(**fields)


_OPTIONAL_DEFAULTS = {
    "dp": 1,
    "ep_size": 1,
    "dp_interleave": 1,
    "aggregate_engine_logging": False,
    "cached_counts_chunks": False,
}


def validate(params: RunParams) -> Era:
    """Check `params` for contradictions and return the resolved era (raises `ValueError`)."""
    era = resolve_era(params.engine, params.era)
    problems: list[str] = []
    try:
        datetime.fromisoformat(params.start)
    except ValueError:
        problems.append(f"start {params.start!r} is not an ISO date-time")
    if params.tp < 1 or params.dcp_size < 1:
        problems.append("tp and dcp_size must be >= 1")
    if not params.phases:
        problems.append("at least one phase is needed")
    if params.spec_tokens < 0 or params.spec_tokens > 16:
        problems.append("spec_tokens must be in 0..16")
    problems += [
        f"unknown warning {w!r} (known: {', '.join(WARNING_KINDS)})"
        for w in params.warnings
        if w not in WARNING_KINDS
    ]
    for i, phase in enumerate(params.phases):
        problems += [f"phase {i}: {p}" for p in _phase_problems(phase, params)]
        if i and phase.gap_s <= 0:
            problems.append(f"phase {i}: gap_s must be > 0 (phases are separated by idle time)")
    if isinstance(era, SglangEra):
        if params.hybrid_ssm and not era.hybrid_ssm:
            problems.append(f"SGLang {era.name} prints no hybrid (Mamba) pool lines")
        if not era.flashinfer_logs and (
            params.startup.oom_retries or any(p.oom_retries for p in params.phases)
        ):
            problems.append(f"SGLang {era.name} silences the FlashInfer logger: no autotuner OOM lines")
    problems += _dp_problems(params, era)
    problems += _aggregate_problems(params, era)
    problems += physical_problems(params)
    if params.cached_counts_chunks and params.engine != "sglang":
        problems.append(
            "cached_counts_chunks is a form of SGLang's Prefill line: vLLM prints no #cached-token"
        )
    if isinstance(era, VllmEra) and not era.v1 and params.startup.compile_s is not None:
        problems.append("V0 (0.6) prints no torch.compile lines; set compile_s=None")
    if problems:
        raise ValueError("; ".join(problems))
    return era


def _dp_problems(params: RunParams, era: Era) -> list[str]:
    """DP attention as SGLang's server args allow it (`tp_size % dp_size == 0`, §1.1 prefixes);
    vLLM V1 data-parallel engines (`--data-parallel-size`, `Engine %03d:` stats from 0.8.3)."""
    problems = []
    if params.dp < 1 or params.ep_size < 1:
        problems.append("dp and ep_size must be >= 1")
        return problems
    if isinstance(era, VllmEra):
        if not era.v1 and (params.dp != 1 or params.ep_size != 1 or any(p.dp_split for p in params.phases)):
            problems.append(
                f"vLLM {era.name} (V0) has no data-parallel engines: dp, ep_size and dp_split "
                "are emulated for SGLang only and vLLM V1"
            )
            return problems
        if params.ep_size not in (1, params.dp * params.tp):
            problems.append("vLLM ep_size must be 1 or dp * tp (--enable-expert-parallel)")
    elif params.tp % params.dp:
        problems.append(f"tp={params.tp} must be a multiple of dp={params.dp} (DP attention)")
    if isinstance(era, SglangEra) and params.ep_size not in (1, params.tp):
        problems.append("ep_size must be 1 or tp")
    if isinstance(era, SglangEra) and params.ep_size > 1 and era.name == "0.4":
        problems.append(f"SGLang {era.name} prints no EP rank token (added in 0.4.10)")
    if params.dp > 1 and any(p.preemptions for p in params.phases):
        problems.append("preemptions are not emulated with dp > 1")
    if params.dp > 1 and params.dcp_size > 1:
        problems.append("dcp_size is not emulated with dp > 1")
    for i, phase in enumerate(params.phases):
        if not phase.dp_split:
            continue
        if (
            len(phase.dp_split) != params.dp
            or sum(phase.dp_split) != phase.concurrency
            or min(phase.dp_split) < 0
        ):
            problems.append(f"phase {i}: dp_split needs dp={params.dp} counts >= 0 summing to concurrency")
    return problems


def _aggregate_problems(params: RunParams, era: Era) -> list[str]:
    """`--aggregate-engine-logging`: a vLLM front-end flag whose `{N} Engines Aggregated:` prefix
    exists from 0.11.2 (§2.3 part 0) and only with data-parallel engines."""
    if not params.aggregate_engine_logging:
        return []
    if not isinstance(era, VllmEra):
        return [
            "aggregate_engine_logging is vLLM's --aggregate-engine-logging: SGLang prints no "
            "aggregated stats line"
        ]
    if not era.aggregate_logging:
        return [
            f"vLLM {era.name} prints no `N Engines Aggregated:` stats line "
            "(--aggregate-engine-logging is 0.11.2+)"
        ]
    if params.dp < 2:
        return ["aggregate_engine_logging needs dp > 1: vLLM aggregates the stats of data-parallel engines"]
    return []


def physical_problems(params: RunParams) -> list[str]:
    """What no engine could have printed: a request longer than the model's maximum length, or
    more KV tokens in use than the pool holds (a KV usage above 100 %)."""
    s = params.startup
    problems = []
    for i, phase in enumerate(params.phases):
        length = phase.input_len + phase.output_len
        if length > s.max_model_len:
            problems.append(
                f"phase {i}: input_len + output_len = {length:,} exceeds max_model_len "
                f"{s.max_model_len:,} (the engine would reject the requests)"
            )
        peak = peak_kv_tokens(phase, params)
        if peak > kv_capacity(params):
            problems.append(
                f"phase {i}: {peak:,} KV tokens in use exceed the pool of "
                f"{kv_capacity(params):,} (usage above 100 %)"
            )
    return problems


def kv_capacity(params: RunParams) -> int:
    """Tokens of context one KV pool (one vLLM engine, one SGLang DP group) holds: the printed
    pool, times the decode-context-parallel ranks that share each request's KV."""
    return params.startup.kv_pool_tokens * params.dcp_size


def peak_kv_tokens(phase: PhaseParams, params: RunParams) -> int:
    """KV tokens in use when every request of the busiest pool holds its whole prompt and output
    (vLLM allocates whole blocks of `block_size` tokens)."""
    per_group = list(phase.dp_split) or [
        len(range(g, phase.concurrency, params.dp)) for g in range(params.dp)
    ]
    length = phase.input_len + phase.output_len
    if params.engine == "vllm":
        block = params.startup.block_size
        length = -(-length // block) * block
    return max(per_group, default=0) * length


def _phase_problems(phase: PhaseParams, params: RunParams) -> list[str]:
    problems = []
    if phase.concurrency < 1 or phase.input_len < 1 or phase.output_len < 2:
        problems.append("concurrency, input_len >= 1 and output_len >= 2 are required")
    if phase.concurrency > params.max_num_seqs:
        problems.append("concurrency exceeds max_num_seqs / max_running_requests")
    if phase.prefill_tps <= 0 or phase.decode_tps <= 0:
        problems.append("prefill_tps and decode_tps must be > 0")
    if phase.gap_s < 0 or phase.stall_s < 0 or min(phase.preemptions, default=0) < 0:
        problems.append("gap_s, stall_s and preemption times must be >= 0")
    if phase.concurrency * (1 + params.spec_tokens) >= params.max_num_batched_tokens:
        problems.append("decode batch would fill the whole token budget (max_num_batched_tokens)")
    if (phase.spec_accept_len is None) != (params.spec_tokens == 0):
        problems.append("spec_accept_len must be set exactly when spec_tokens > 0")
    elif phase.spec_accept_len is not None and not 1.0 <= phase.spec_accept_len <= params.spec_tokens + 1:
        problems.append("spec_accept_len must be within 1..spec_tokens+1")
    if any(r <= 0 for r in phase.prefill_chunk_tps):
        problems.append("prefill_chunk_tps must be > 0")
    return problems
