"""Records both engines share: access-log noise, FlashInfer autotuner OOM retries, JIT lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from logparse.emulate.noise import Noise
from logparse.emulate.params import RunParams
from logparse.emulate.render import Record, tqdm_segment
from logparse.emulate.simulate import Trace

JIT_OPS = (
    "fused_moe_latent_tail_sm100",
    "cutedsl_kda_decode_bf16",
    "kda_chunk_fwd_triton",
    "trtllm_ragged_mla_prefill_fp8",
    "batch_decode_mla_fp8_e4m3",
    "rmsnorm_fp4_quant_sm100",
)
AUTOTUNE_OPS = (
    "flashinfer::trtllm_fp4_block_scale_moe",
    "flashinfer::trtllm_fp8_block_scale_moe",
    "fp4_gemm",
    "fp8_gemm",
)


@dataclass
class Sink:
    """Collects records in creation order (the tie-break for records printed at the same time)."""

    records: list[Record] = field(default_factory=list)

    def add(self, t: float, body: str, **kwargs: Any) -> Record:
        """Append a record at time `t` and return it."""
        record = Record(t=t, body=body, seq=len(self.records), **kwargs)
        self.records.append(record)
        return record


def access_lines(
    sink: Sink, params: RunParams, trace: Trace, source: str, noise: Noise, ready: float
) -> None:
    """uvicorn access lines: one per completion request at its arrival, plus health/metrics polls."""
    style = params.style
    if style.access_log:
        for req in trace.requests:
            port = noise.integer(f"port|{req.index}", 32768, 60999)
            sink.add(
                req.arrival + 0.004 + 0.0005 * req.order,
                f"{style.client}:{port}|POST|/v1/chat/completions|200 OK",
                source=source,
                style="uvicorn_access",
                tag="access",
                meta={"phase": req.phase},
            )
    end = trace.end + params.tail_idle_s
    for path, period in (("/health", style.health_poll_s), ("/metrics", style.metrics_poll_s)):
        if not period:
            continue
        t = ready + period
        while t < end:
            port = noise.integer(f"poll|{path}|{t:.3f}", 32768, 60999)
            sink.add(
                t,
                f"{style.client}:{port}|GET|{path}|200 OK",
                source=source,
                style="uvicorn_access",
                tag="access_poll",
            )
            t += period


def autotuner_oom(
    sink: Sink, t0: float, t1: float, count: int, sources: Sequence[str], glue: bool, phase: int | None
) -> None:
    """FlashInfer autotuner soft OOMs, spread over ranks, each rank bracketed by starts/ends lines."""
    if count <= 0:
        return
    per_rank = [count // len(sources) + (1 if i < count % len(sources) else 0) for i in range(len(sources))]
    span = max(t1 - t0, 0.05 * len(sources))
    for rank, (source, n) in enumerate(zip(sources, per_rank, strict=True)):
        if not n:
            continue
        begin = t0 + span * rank / len(sources)
        slot = span / len(sources) / (n + 2)
        sink.add(
            begin,
            "[Autotuner]: Autotuning process starts ...",
            source=source,
            style="flashinfer",
            site="autotuner.py:1148",
            tag="autotune",
        )
        for i in range(n):
            glued = ""
            if glue and i == 0:
                op = AUTOTUNE_OPS[rank % len(AUTOTUNE_OPS)]
                glued = tqdm_segment(f"[AutoTuner]: Tuning {op}", 18, 21, 0.79, True, unit="profile")
            sink.add(
                begin + slot * (i + 1),
                "[Autotuner]: OOM detected, falling back to default tactic",
                source=source,
                style="flashinfer",
                level="WARNING",
                site="autotuner.py:1315",
                tag="oom",
                meta={"phase": phase, "glued": glued},
            )
        sink.add(
            begin + slot * (n + 1),
            "[Autotuner]: Autotuning process ends",
            source=source,
            style="flashinfer",
            site="autotuner.py:1180",
            tag="autotune",
        )


def spread(t0: float, t1: float, count: int) -> list[float]:
    """`count` times evenly inside (t0, t1)."""
    span = max(t1 - t0, 0.01 * count)
    return [t0 + span * (i + 1) / (count + 1) for i in range(count)]
