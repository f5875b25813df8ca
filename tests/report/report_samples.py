"""Small tidy frames shaped like the report's adapters make them, and one chart of each family."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

import polars as pl

from logparse import charts as C

T0 = dt.datetime(2026, 7, 28, 17, 16, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def degradation_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "series": ["sglang", "sglang", "vllm", "vllm"],
            "source": ["s64", "s200", "v64", "v200"],
            "input_tokens": [64_000, 200_000, 64_000, 200_000],
            "context_label": ["64K", "200K", "64K", "200K"],
            "context_tick": [64_000, 200_000, 64_000, 200_000],
            "per_request_tps": [33.5, 26.8, 50.1, 16.3],
            "ms_per_token": [29.9, 37.3, 20.0, 61.3],
            "concurrency": [10] * 4,
            "n_label": ["N=10"] * 4,
        }
    )


def timeline_frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    samples = pl.DataFrame(
        {
            "time": [at(10 * i) for i in range(8)],
            "gen_tps": [0.0, 5.0, 480.0, 500.0, 510.0, 495.0, 200.0, 0.0],
            "running": [3, 9, 10, 10, 10, 10, 4, 0],
            "waiting": [7, 1, 0, 0, 0, 0, 0, 0],
        }
    )
    windows = pl.DataFrame({"start": [at(20)], "end": [at(50)], "label": ["stable N=10"]})
    events = pl.DataFrame(
        {
            "time": [at(5), at(5), at(12)],
            "event": ["OOM (recovered)", "JIT compile", "preemption"],
            "detail": ["autotuner", "fused_moe", "1 request(s)"],
        }
    )
    return samples, windows, events


def decode_overlay_frame() -> pl.DataFrame:
    """Two runs' samples from their phase's start; the second has a silence (segment 1)."""
    return pl.DataFrame(
        {
            "run": ["vllm 64k"] * 4 + ["sglang 64k"] * 4,
            "since_start_s": [0.0, 10.0, 20.0, 30.0, 0.0, 2.0, 60.0, 62.0],
            "gen_tps": [0.0, 480.0, 500.0, 490.0, 0.0, 330.0, 335.0, 340.0],
            "segment": [0, 0, 0, 0, 0, 0, 1, 1],
            "stable": [False, True, True, True, False, False, True, True],
        }
    )


def prefill_overlay_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run": ["sglang 64k"] * 2 + ["sglang 200k"] * 3,
            "request": [0, 0, 0, 0, 0],
            "chunk": [0, 1, 0, 1, 2],
            "cached_tokens": [0, 32768, 0, 32768, 65536],
            "input_tps": [22000.0, 21000.0, 22265.0, 21064.0, 19628.0],
        }
    )


def bench_metric_frame() -> pl.DataFrame:
    rows = []
    for config, base in (("vllm direct", 66.0), ("vllm spec", 71.0)):
        for c in (1, 2, 4, 8):
            rows += [
                {
                    "config": config,
                    "concurrency": c,
                    "metric": "TTFT (ms)",
                    "stat": "mean",
                    "value": base * c,
                },
                {
                    "config": config,
                    "concurrency": c,
                    "metric": "TTFT (ms)",
                    "stat": "P90",
                    "value": base * c * 1.2,
                },
                {
                    "config": config,
                    "concurrency": c,
                    "metric": "TPS per user (tok/s)",
                    "stat": "mean",
                    "value": 100.0 / c,
                },
            ]
    return pl.DataFrame(rows)


SLO = pl.DataFrame(
    {
        "metric": ["TTFT (ms)", "TPS per user (tok/s)"],
        "threshold": [1000.0, 15.0],
        "label": ["SLO ≤ 1000 ms", "SLO ≥ 15 tok/s"],
    }
)


@functools.cache
def all_charts() -> dict[str, Any]:
    """One chart of every family, built from small frames (also used by the PNG test)."""
    samples, windows, events = timeline_frames()
    return {
        "degradation": C.degradation_chart(degradation_frame()),
        "decode_overlay": C.decode_overlay_chart(decode_overlay_frame()),
        "prefill_overlay": C.prefill_overlay_chart(prefill_overlay_frame()),
        "timeline": C.decode_timeline_chart(samples, windows=windows, events=events),
        "prefill": C.prefill_chunk_chart(
            pl.DataFrame(
                {
                    "request": [0] * 6 + [1] * 6,
                    "chunk": list(range(6)) * 2,
                    "cached_tokens": [i * 32768 for i in range(6)] * 2,
                    "input_tps": [
                        22265.0,
                        21064.0,
                        19628.0,
                        18475.0,
                        17243.0,
                        16408.0,
                        22000.0,
                        20900.0,
                        19700.0,
                        18300.0,
                        17300.0,
                        16500.0,
                    ],
                    "phase_label": ["phase 1 (N=10, 200K)"] * 12,
                    "chunk_kind": (["this request only"] * 5 + ["shared with the next request"]) * 2,
                }
            )
        ),
        "spec_acceptance": C.spec_acceptance_chart(
            pl.DataFrame(
                {
                    "time": [at(10 * i) for i in range(6)],
                    "accept_len": [1.05, 1.1, 1.17, 1.12, 1.08, 1.1],
                    "phase_label": ["phase 1"] * 6,
                }
            )
        ),
        "spec_position": C.spec_position_chart(
            pl.DataFrame(
                {
                    "position": list(range(1, 8)),
                    "rate": [0.59, 0.35, 0.21, 0.12, 0.07, 0.04, 0.025],
                    "phase_label": ["phase 1"] * 7,
                }
            )
        ),
        "spec_draft": C.spec_draft_chart(
            pl.DataFrame(
                {
                    "phase_label": ["phase 1", "phase 1"],
                    "measure": ["drafted", "accepted"],
                    "tps": [990.0, 21.0],
                    "label": ["990 drafted", "21 accepted (98% of drafts rejected)"],
                }
            )
        ),
        "kv": C.kv_usage_chart(
            pl.DataFrame({"time": [at(10 * i) for i in range(5)], "used": [0.1, 0.4, 0.62, 0.63, 0.0]}),
            pl.DataFrame({"pool": [1.0], "label": ["KV pool: 2,687,776 tokens"]}),
            unit="fraction",
        ),
        "coldstart": C.coldstart_chart(
            pl.DataFrame(
                {
                    "rank": ["TP0", "TP0", "TP1", "TP1"],
                    "stage": ["weight loading", "CUDA graph capture", "weight loading", "CUDA graph capture"],
                    "start_s": [15.0, 300.0, 15.0, 301.0],
                    "end_s": [179.0, 386.0, 180.0, 386.0],
                }
            ),
            pl.DataFrame({"rank": ["server"], "stage": ["ready"], "at_s": [620.0]}),
        ),
        "memory": C.memory_split_chart(
            pl.DataFrame(
                {
                    "rank": ["TP0"] * 3 + ["TP1"] * 3,
                    "component": ["weights", "KV cache", "free"] * 2,
                    "gib": [194.5, 43.8, 8.3] * 2,
                    "order": [0, 2, 8] * 2,
                }
            )
        ),
        "bench_metrics": C.bench_metrics_chart(bench_metric_frame(), slo=SLO),
        "aggregate": C.aggregate_output_chart(
            pl.DataFrame(
                {
                    "config": ["a"] * 3 + ["b"] * 3,
                    "concurrency": [1, 2, 4] * 2,
                    "aggregate_tps": [100.0, 180.0, 300.0, 190.0, 260.0, 250.0],
                }
            ),
            peaks=pl.DataFrame(
                {
                    "config": ["a", "b"],
                    "concurrency": [4, 2],
                    "aggregate_tps": [300.0, 260.0],
                    "label": ["peak 300 tok/s", "peak 260 tok/s"],
                }
            ),
        ),
        "capacity": C.capacity_chart(
            pl.DataFrame(
                {
                    "config": ["a", "a", "a", "a"],
                    "basis": ["P90", "P90", "mean", "mean"],
                    "measure": ["C_max", "users N", "C_max", "users N"],
                    "value": [32.0, 427.0, 64.0, 682.0],
                }
            )
        ),
        "speedup": C.spec_speedup_chart(
            pl.DataFrame(
                {"series": ["vllm"] * 4, "concurrency": [1, 4, 8, 16], "ratio": [1.86, 1.36, 1.13, 0.99]}
            ),
            break_even=pl.DataFrame(
                {"series": ["vllm"], "concurrency": [15.4], "label": ["break-even c≈15.4"]}
            ),
        ),
        "slo": C.slo_heatmap_chart(
            pl.DataFrame(
                {
                    "basis": ["P90"] * 2 + ["mean"] * 2,
                    "config": ["a", "a"] * 2,
                    "concurrency": [32, 64] * 2,
                    "status": ["meets both SLOs", "TTFT fails", "meets both SLOs", "meets both SLOs"],
                    "marks": ["✓✓", "✗✓", "✓✓", "✓✓"],
                }
            )
        ),
    }
