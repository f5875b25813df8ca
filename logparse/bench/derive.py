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

Per-user TPS is derived only for files that report no per-user rate at all (vLLM, SGLang): a
tool's own TPS columns are never mixed with derived ones, so a file that reports only the
optimistic P90 of TPS (Cordatus) is judged, and flagged, on exactly that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl


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


def workload_name(record: dict[str, Any]) -> str:
    """'<input>x<output>' tokens per request, rounded, with '?' for an unknown side."""
    input_len = record.get("input_len")
    output_len = record.get("output_len_requested") or record.get("output_len")
    left = "?" if input_len is None else f"{round(input_len)}"
    right = "?" if output_len is None else f"{round(output_len)}"
    return f"{left}x{right}"


def disambiguate_configs(rows: pl.DataFrame) -> pl.DataFrame:
    """Rename configurations that several files share but that are not the same configuration.

    One name is kept across files (a sweep saved as one file per concurrency level) unless the
    files disagree on the workload, in which case the workload is appended; if two files still
    hold the same configuration at the same concurrency, the file stem is appended as well.
    """
    shared = rows.group_by("config").agg(pl.col("source_file").n_unique().alias("files"))
    multi = set(shared.filter(pl.col("files") > 1)["config"].to_list())
    if not multi:
        return rows
    workloads = (
        rows.filter(pl.col("config").is_in(multi)).group_by("config").agg(pl.col("workload").n_unique())
    )
    split = set(workloads.filter(pl.col("workload") > 1)["config"].to_list())
    renamed = rows.with_columns(
        config=pl.when(pl.col("config").is_in(split))
        .then(pl.concat_str(["config", "workload"], separator=" "))
        .otherwise(pl.col("config"))
    )
    clashes = (
        renamed.filter(pl.col("concurrency").is_not_null())
        .group_by("config", "concurrency")
        .agg(pl.col("source_file").n_unique().alias("files"))
        .filter(pl.col("files") > 1)["config"]
        .unique()
        .to_list()
    )
    stem = pl.col("source_file").str.extract(r"([^/\\]+?)(?:\.[^./\\]*)?$")
    return renamed.with_columns(
        config=pl.when(pl.col("config").is_in(clashes))
        .then(pl.concat_str([pl.col("config"), pl.lit(" ["), stem, pl.lit("]")]))
        .otherwise(pl.col("config"))
    )


def _measured_columns() -> tuple[str, ...]:
    from logparse.bench.schema import LATENCY_STATS, TPS_STATS

    latency = [f"{m}_{s}" for m in ("ttft_ms", "tpot_ms", "itl_ms", "latency_s") for s in LATENCY_STATS]
    tps = [f"tps_per_user_{s}" for s in TPS_STATS]
    return (*latency, *tps, "output_throughput_tps", "request_throughput_rps", "output_len")


MEASURED_COLUMNS = _measured_columns()


def complete_record(record: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a reader record with derivable columns filled and listed in `derived`."""
    out = dict(record)
    derived: list[str] = [d for d in (out.get("derived") or "").split(",") if d]

    def fill(column: str, value: float | None) -> None:
        if out.get(column) is None and value is not None:
            out[column] = value
            derived.append(column)

    if out.get("num_requests") == 0:
        # No request completed: the tool's 0.0 ms / 0.0 tok/s are not measurements of anything.
        for column in MEASURED_COLUMNS:
            out[column] = None
    if out.get("output_len") is None and out.get("total_output_tokens") and out.get("num_requests"):
        fill("output_len", out["total_output_tokens"] / out["num_requests"])
    n = tokens_per_request(out)
    if n is not None and n >= 1:
        if out.get("ttft_ms_mean") is not None and out.get("tpot_ms_mean") is not None:
            fill("latency_s_mean", (out["ttft_ms_mean"] + (n - 1) * out["tpot_ms_mean"]) / 1000.0)
        tps_columns = [f"tps_per_user_{stat}" for stat in ("mean", "median", "p10", "p90")]
        if all(out.get(column) is None for column in tps_columns):
            before = len(derived)
            for tps_stat, latency_stat in (("mean", "mean"), ("median", "median"), ("p10", "p90")):
                latency = out.get(f"latency_s_{latency_stat}")
                if latency:
                    fill(f"tps_per_user_{tps_stat}", n / latency)
            if len(derived) > before:
                out["tps_per_user_definition"] = "tokens_over_e2e"
    if not out.get("config"):
        out["config"] = config_name(out)
    out["workload"] = workload_name(out)
    out["derived"] = ",".join(derived) or None
    return out
