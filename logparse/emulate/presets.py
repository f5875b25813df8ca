"""Named parameter sets: the GPUStack Kimi-K3 write-up and small per-era scenarios.

The GPUStack presets mirror `seeds/gpustack-kimi-k3-b300-vllm-vs-sglang.txt`: one decode model
per engine (steps/s falling with context) shared by the 64K and 200K runs, the startup figures
the write-up quotes, and a seed picked so that the printed stable-window statistics land on the
write-up's numbers (vLLM ≈501 / ≈163 tok/s with the 537 tok/s peak, SGLang ≈335 / ≈268).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypedDict

from logparse.emulate.params import Engine, LogStyle, PhaseParams, RunParams, StartupParams


class _Prefill(TypedDict):
    prefill_tps: float
    prefill_ctx_slowdown: float
    prefill_noise: float


class _Decode(TypedDict, total=False):
    """A GPUStack run's own `PhaseParams` fields."""

    decode_tps: float
    spec_accept_len: float
    spec_jitter: float
    noise: float
    stall_s: float
    oom_retries: int
    jit_compiles: int
    prefill_chunk_tps: tuple[float, ...]


# Shared by both engines: "Prefill performance was broadly comparable"; the 22265 -> 16408
# chunk sequence implies ~0.23 slowdown per 100K tokens of cached context.
PREFILL: _Prefill = {"prefill_tps": 23_090.0, "prefill_ctx_slowdown": 0.226, "prefill_noise": 0.02}
SGLANG_200K_CHUNKS = (22265.41, 21064.18, 19628.37, 18475.02, 17243.26, 16408.29)

# Decode steps/s fall with context: steeply on vLLM (DCP=1), barely on SGLang (DCP=8). Each run's
# decode_tps is then nudged (<2 %) so its printed stable mean lands on the write-up's figure.
VLLM_SLOWDOWN = 0.4415
SGLANG_SLOWDOWN = 0.0455

GPUSTACK_STYLE = LogStyle(metrics_poll_s=15.0, client="10.42.0.1")

VLLM_STARTUP = StartupParams(
    model="/var/lib/gpustack/cache/model_scope/moonshotai/Kimi-K3",
    model_class="KimiK3ForCausalLM",
    pre_load_s=43.0,
    weight_load_s=163.8,
    model_load_s=170.43,
    weights_gib=194.54,
    shards=12,
    compile_s=None,
    total_gpu_gib=267.69,
    gpu_memory_utilization=0.95,
    non_torch_gib=3.18,
    peak_activation_gib=12.82,
    kv_gib=43.76,
    kv_fit_bytes=41_317_885_440,
    kv_pool_tokens=2_687_776,
    max_model_len=1_000_000,
    block_size=32,
    cuda_graph_s=85.0,
    cuda_graph_sizes=51,
    cuda_graph_gib=5.13,
    init_s=409.61,
    post_init_s=6.4,
)
SGLANG_STARTUP = StartupParams(
    model="/var/lib/gpustack/cache/model_scope/moonshotai/Kimi-K3",
    model_class="KimiK3ForCausalLM",
    quant="mxfp4",
    pre_load_s=97.0,
    weight_load_s=141.0,
    weights_gib=195.86,
    shards=96,
    total_gpu_gib=267.69,
    kv_gib=11.80,
    kv_pool_tokens=916_672,
    kv_layout="mla",
    max_model_len=1_000_000,
    cuda_graph_s=330.0,
    cuda_graph_sizes=67,
    cuda_graph_gib=1.46,
    init_s=370.0,
    draft_model="/var/lib/gpustack/cache/model_scope/skyai/sglang-Kimi-K3-DSpark",
    draft_model_class="KimiK3DSparkForCausalLM",
    draft_weights_gib=3.91,
    draft_load_s=11.6,
    draft_kv_gib=8.74,
    mamba_gib=10.93,
    mamba_slots=80,
    remaining_gib=17.08,
    requested_running=48,
)


def _vllm_gpustack(input_len: int, seed: int, phase: _Decode) -> RunParams:
    return RunParams(
        engine="vllm",
        era="0.26",
        seed=seed,
        start="2026-07-28T17:06:27",
        tp=8,
        spec_tokens=7,
        spec_method="dspark",
        max_num_batched_tokens=32_768,
        max_num_seqs=32,
        enable_prefix_caching=True,
        warnings=("slow_tokenizer", "fp8_kv_scale"),
        startup=VLLM_STARTUP,
        style=GPUSTACK_STYLE,
        tail_idle_s=25.0,
        phases=(
            PhaseParams(
                concurrency=10,
                input_len=input_len,
                output_len=3000,
                gap_s=94.0,
                **PREFILL,
                decode_ctx_slowdown=VLLM_SLOWDOWN,
                **phase,
            ),
        ),
    )


def _sglang_gpustack(input_len: int, seed: int, phase: _Decode) -> RunParams:
    return RunParams(
        engine="sglang",
        era="0.5.14",
        seed=seed,
        start="2026-07-28T18:01:49",
        tp=8,
        dcp_size=8,
        spec_tokens=7,
        spec_method="DSPARK",
        hybrid_ssm=True,
        max_num_batched_tokens=32_768,
        max_num_seqs=39,
        warnings=("slow_tokenizer", "fp8_kv_scale"),
        startup=SGLANG_STARTUP,
        style=GPUSTACK_STYLE,
        tail_idle_s=25.0,
        phases=(
            PhaseParams(
                concurrency=10,
                input_len=input_len,
                output_len=3000,
                gap_s=71.0,
                **PREFILL,
                decode_ctx_slowdown=SGLANG_SLOWDOWN,
                **phase,
            ),
        ),
    )


def gpustack(engine: str, context: str) -> RunParams:
    """The GPUStack Kimi-K3 8xB300 run of `engine` at `context` (`64k` or `200k`)."""
    # Seeds and noise levels were searched so that each window's min/max sit where the write-up's
    # ranges do (e.g. the 64K vLLM peak of 537 tok/s); decode_tps then sets the mean.
    if engine == "vllm" and context == "64k":
        return _vllm_gpustack(
            64_000,
            647,
            {
                "decode_tps": 27.49,
                "spec_accept_len": 2.39,
                "spec_jitter": 0.03,
                "noise": 0.06,
                "stall_s": 7.5,
                "oom_retries": 32,
                "jit_compiles": 4,
            },
        )
    if engine == "vllm" and context == "200k":
        return _vllm_gpustack(
            200_000, 161, {"decode_tps": 27.12, "spec_accept_len": 1.14, "spec_jitter": 0.06, "noise": 0.014}
        )
    if engine == "sglang" and context == "64k":
        return _sglang_gpustack(
            64_000, 470, {"decode_tps": 26.09428, "spec_accept_len": 1.32, "spec_jitter": 0.2, "noise": 0.04}
        )
    if engine == "sglang" and context == "200k":
        return _sglang_gpustack(
            200_000,
            334,
            {
                "decode_tps": 26.35902,
                "spec_accept_len": 1.11,
                "spec_jitter": 0.3,
                "noise": 0.025,
                "prefill_chunk_tps": SGLANG_200K_CHUNKS,
            },
        )
    msg = f"no GPUStack preset for {engine} {context}"
    raise ValueError(msg)


SMALL_STARTUP = StartupParams(pre_load_s=9.0, weight_load_s=6.5, shards=4, init_s=30.0, cuda_graph_s=9.0)


def _small(engine: Engine, **kwargs: Any) -> RunParams:
    # kwargs: RunParams fields of any type; `replace` rejects an unknown name
    return replace(RunParams(engine=engine, startup=SMALL_STARTUP), **kwargs)


def scenarios() -> dict[str, RunParams]:
    """Small runs covering the other eras and capture styles (`emulated-<era>-<scenario>`)."""
    two_phases = (
        PhaseParams(concurrency=4, input_len=2048, output_len=3000, decode_tps=30.0, gap_s=12.0),
        PhaseParams(
            concurrency=8,
            input_len=8192,
            output_len=3000,
            decode_tps=30.0,
            decode_ctx_slowdown=2.0,
            gap_s=40.0,
        ),
    )
    return {
        "vllm/emulated-0.6-spec-two-phases": _small(
            "vllm",
            era="0.6.6",
            seed=1,
            tp=2,
            spec_tokens=4,
            style=LogStyle(health_poll_s=10.0),
            warnings=("fp8_kv_scale",),
            phases=tuple(
                replace(p, spec_accept_len=2.6, spec_jitter=0.05, preemptions=(15.0,) if i else ())
                for i, p in enumerate(two_phases)
            ),
        ),
        "vllm/emulated-0.10-multirank-docker": _small(
            "vllm",
            era="0.10.2",
            seed=2,
            tp=4,
            spec_tokens=3,
            style=LogStyle(wrapper="docker"),
            startup=replace(SMALL_STARTUP, compile_s=21.5, init_s=45.0),
            phases=(
                PhaseParams(
                    concurrency=6,
                    input_len=4096,
                    output_len=4000,
                    decode_tps=35.0,
                    spec_accept_len=2.1,
                    spec_jitter=0.06,
                    jit_compiles=2,
                    stall_s=2.0,
                ),
            ),
        ),
        "vllm/emulated-0.11-preemptions-compose": _small(
            "vllm",
            era="0.11.2",
            seed=3,
            tp=2,
            style=LogStyle(wrapper="compose", metrics_poll_s=15.0),
            phases=tuple(replace(p, preemptions=(30.0, 60.0)) for p in two_phases),
        ),
        "vllm/emulated-0.31-color-oom": _small(
            "vllm",
            era="0.31.0",
            seed=4,
            tp=2,
            style=LogStyle(color=True, glue_tqdm=True, health_poll_s=5.0),
            warnings=("slow_tokenizer",),
            startup=replace(SMALL_STARTUP, compile_s=12.0, oom_retries=4),
            phases=(
                PhaseParams(
                    concurrency=5,
                    input_len=16384,
                    output_len=1200,
                    decode_tps=28.0,
                    decode_ctx_slowdown=1.0,
                    oom_retries=6,
                    jit_compiles=1,
                    stall_s=3.0,
                ),
            ),
        ),
        "sglang/emulated-0.4-docker-retract": _small(
            "sglang",
            era="0.4.8",
            seed=5,
            tp=4,
            spec_tokens=3,
            style=LogStyle(wrapper="docker"),
            max_num_batched_tokens=8192,
            phases=(
                PhaseParams(
                    concurrency=8,
                    input_len=6000,
                    output_len=3000,
                    decode_tps=32.0,
                    spec_accept_len=2.8,
                    spec_jitter=0.05,
                    preemptions=(12.0,),
                ),
            ),
        ),
        "sglang/emulated-0.5.6-hybrid-spec": _small(
            "sglang",
            era="0.5.6",
            seed=6,
            tp=2,
            spec_tokens=3,
            hybrid_ssm=True,
            max_num_batched_tokens=8192,
            style=LogStyle(health_poll_s=10.0),
            warnings=("fp8_kv_scale", "slow_tokenizer"),
            startup=replace(
                SMALL_STARTUP,
                mamba_gib=3.2,
                mamba_slots=64,
                draft_model="draft",
                draft_model_class="LlamaForCausalLMEagle3",
                draft_load_s=2.0,
                draft_kv_gib=1.1,
            ),
            phases=tuple(
                replace(p, spec_accept_len=2.2, spec_jitter=0.1, oom_retries=3 if i == 0 else 0)
                for i, p in enumerate(two_phases)
            ),
        ),
        "sglang/emulated-0.5.14-tp1-color": _small(
            "sglang",
            era="0.5.14",
            seed=7,
            tp=1,
            style=LogStyle(color=True, metrics_poll_s=10.0),
            max_num_batched_tokens=16384,
            startup=replace(SMALL_STARTUP, max_model_len=65_536),
            phases=(
                PhaseParams(
                    concurrency=3,
                    input_len=40_000,
                    output_len=800,
                    decode_tps=45.0,
                    gap_s=5.0,
                    prefill_ctx_slowdown=0.3,
                ),
                PhaseParams(
                    concurrency=12,
                    input_len=3000,
                    output_len=1000,
                    decode_tps=38.0,
                    gap_s=30.0,
                    preemptions=(15.0,),
                ),
            ),
        ),
    }


PRESETS = ("gpustack-64k", "gpustack-200k")


def preset(name: str, engine: str) -> RunParams:
    """Look up a preset by name for `engine` (`gpustack-64k`, `gpustack-200k`, or a scenario)."""
    if name.startswith("gpustack-"):
        return gpustack(engine, name.removeprefix("gpustack-"))
    for key, params in scenarios().items():
        if key == f"{engine}/{name}" or key == name:
            return params
    known = ", ".join([*PRESETS, *(k.split("/", 1)[1] for k in scenarios() if k.startswith(engine))])
    msg = f"unknown preset {name!r} for {engine} (known: {known})"
    raise ValueError(msg)
