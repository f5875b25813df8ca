"""The metrics `logparse gate` judges: what each measures, its unit and which way is worse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Better = Literal["higher", "lower"]
Origin = Literal["log", "client"]


@dataclass(frozen=True, slots=True)
class Metric:
    """One gated figure: its key (for `--threshold KEY=PCT`), what it is, and which way is better."""

    key: str
    label: str
    unit: str
    better: Better
    origin: Origin
    digits: int = 1  # decimals shown
    count: bool = False  # an exact count of events (a change from 0 has no percentage)


METRICS: tuple[Metric, ...] = (
    Metric("decode_tps", "stable decode", "tok/s", "higher", "log"),
    Metric("per_request_tps", "decode per request", "tok/s", "higher", "log", digits=2),
    Metric("prefill_tps", "prefill", "tok/s", "higher", "log", digits=0),
    Metric("cold_start_s", "cold start (ready after)", "s", "lower", "log"),
    Metric("oom", "out-of-memory events", "", "lower", "log", digits=0, count=True),
    Metric("preemptions", "preemptions + retractions", "", "lower", "log", digits=0, count=True),
    Metric("kv_pool_tokens", "KV pool", "tokens", "higher", "log", digits=0),
    Metric("ttft_p50_ms", "TTFT P50", "ms", "lower", "client", digits=2),
    Metric("ttft_p90_ms", "TTFT P90", "ms", "lower", "client", digits=2),
    Metric("tpot_p50_ms", "TPOT P50", "ms", "lower", "client", digits=2),
    Metric("tpot_p90_ms", "TPOT P90", "ms", "lower", "client", digits=2),
    Metric("itl_p50_ms", "ITL P50", "ms", "lower", "client", digits=2),
    Metric("itl_p90_ms", "ITL P90", "ms", "lower", "client", digits=2),
    Metric("output_tps", "output throughput", "tok/s", "higher", "client"),
    Metric("c_max", "C_max under the SLOs", "requests", "higher", "client", digits=0),
)
BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}
DEFAULT_THRESHOLD_PCT = 5.0


def metric(key: str) -> Metric:
    """The metric named `key` (KeyError for an unknown one: the callers check names first)."""
    return BY_KEY[key]


__all__ = ["BY_KEY", "DEFAULT_THRESHOLD_PCT", "METRICS", "Better", "Metric", "Origin", "metric"]
