"""Fill the columns a file implies but does not state, and say which ones were filled.

Every derived value is listed in the row's `derived` column, so checks never "confirm" a value
against the formula it was computed from. The derivations assume every request in a run has the
same output length n (fixed-length benchmarks such as random/128x128); under that assumption:

- latency_s_mean = ttft_ms_mean / 1000 + (n - 1) * tpot_ms_mean / 1000 (means are linear);
- tps_per_user_median = n / latency_s_median (a monotone map keeps the median);
- tps_per_user_p10 = n / latency_s_p90 (a decreasing map turns the 90th percentile of latency
  into the 10th percentile of the rate: the pessimistic tail, the right one for a >= SLO);
- tps_per_user_mean ~ n / latency_s_mean, a lower bound of the true mean of n / latency
  (Jensen's inequality), so a >= SLO judged on it errs on the safe side.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def tokens_per_request(record: dict[str, Any]) -> float | None:
    """Output tokens per request: the measured mean if known, else the requested length."""
    measured = record.get("output_len")
    if measured is not None:
        return float(measured)
    requested = record.get("output_len_requested")
    return float(requested) if requested is not None else None


def config_name(record: dict[str, Any]) -> str:
    """Name of the configuration a run belongs to: 'engine mode label', else the file stem."""
    parts = [record.get(key) for key in ("engine", "mode", "label")]
    named = " ".join(str(part) for part in parts if part)
    return named or Path(str(record.get("source_file") or "unknown")).stem


def complete_record(record: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a reader record with derivable columns filled and listed in `derived`."""
    out = dict(record)
    derived: list[str] = [d for d in (out.get("derived") or "").split(",") if d]

    def fill(column: str, value: float | None) -> None:
        if out.get(column) is None and value is not None:
            out[column] = value
            derived.append(column)

    if out.get("output_len") is None and out.get("total_output_tokens") and out.get("num_requests"):
        fill("output_len", out["total_output_tokens"] / out["num_requests"])
    n = tokens_per_request(out)
    if n is not None and n >= 1:
        if out.get("ttft_ms_mean") is not None and out.get("tpot_ms_mean") is not None:
            fill("latency_s_mean", (out["ttft_ms_mean"] + (n - 1) * out["tpot_ms_mean"]) / 1000.0)
        if out.get("tps_per_user_definition") in (None, "tokens_over_e2e"):
            before = len(derived)
            for tps_stat, latency_stat in (("mean", "mean"), ("median", "median"), ("p10", "p90")):
                latency = out.get(f"latency_s_{latency_stat}")
                if latency:
                    fill(f"tps_per_user_{tps_stat}", n / latency)
            if len(derived) > before:
                out["tps_per_user_definition"] = "tokens_over_e2e"
    if not out.get("config"):
        out["config"] = config_name(out)
    out["derived"] = ",".join(derived) or None
    return out
