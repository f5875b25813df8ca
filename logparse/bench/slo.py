"""SLO compliance per configuration x concurrency, C_max, and the interactive-law user count.

How the Openzeka report (CordatusAI llm-benchmark defaults) arrives at its capacity figures:

- SLOs: TTFT <= 1000 ms (lower is better) and per-user TPS >= 15 tok/s (higher is better).
- "P90-based": TTFT judged at its P90 and TPS at its P90. For a higher-is-better metric the P90
  is the *optimistic* tail (90% of requests were slower), so logparse judges TPS at P10 when a
  file has it (or its per-request arrays give it) and flags the judgement when only the P90
  exists. A file without a TTFT P90 is judged at a stricter percentile it prints, never at the
  mean (`basis.py` says which statistic and source each judgement used). "Mean-based": both SLOs
  judged at the mean.
- C_max: the highest *tested* concurrency that meets every SLO, even if a lower level failed
  (no interpolation), exactly as the tool does.
- Users: N = C_max x (1 + Z / L) with Z the think time (45 s) and L the *mean* latency at C_max
  for both bases (the report's section 2.8; the tool itself uses the same-percentile latency and
  truncates with int()). The report rounds N to the nearest integer: 32 x (1 + 45 / 3.65) =
  426.5 -> 427 and 2 x (1 + 45 / 1.58) = 58.96 -> 59, where int() would give 426 and 58.
  This is the interactive response-time law N = X (R + Z) with X = C / R, which the report
  calls Little's law.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from logparse.bench.basis import BASES, Basis, Pick, pick_tps, pick_ttft

__all__ = ["BASES", "Basis", "c_max", "capacity", "interactive_users", "round_half_up", "slo_matrix"]

SLO_SCHEMA: dict[str, pl.DataType] = {
    "row": pl.Int64(),
    "config": pl.String(),
    "engine": pl.String(),
    "mode": pl.String(),
    "concurrency": pl.Int64(),
    "basis": pl.String(),
    "ttft_stat": pl.String(),
    "ttft_ms": pl.Float64(),
    "ttft_ok": pl.Boolean(),
    "ttft_source": pl.String(),
    "ttft_note": pl.String(),
    "ttft_marks": pl.String(),
    "tps_stat": pl.String(),
    "tps": pl.Float64(),
    "tps_ok": pl.Boolean(),
    "tps_source": pl.String(),
    "tps_note": pl.String(),
    "tps_marks": pl.String(),
    "tps_optimistic": pl.Boolean(),
    "stricter": pl.Boolean(),
    "marks": pl.String(),
    "ok": pl.Boolean(),
}


def _judged(rec: dict[str, Any], basis: Basis, ttft_ms: float, tps: float) -> dict[str, Any]:
    ttft: Pick = pick_ttft(rec, basis)
    rate: Pick = pick_tps(rec, basis)
    ttft_ok = None if ttft.value is None else ttft.value <= ttft_ms
    tps_ok = None if rate.value is None else rate.value >= tps
    marks = "".join(dict.fromkeys(ttft.marks + rate.marks))  # each mark once, in order
    return {
        **{key: rec[key] for key in ("row", "config", "engine", "mode", "concurrency")},
        "basis": basis,
        "ttft_stat": ttft.stat,
        "ttft_ms": ttft.value,
        "ttft_ok": ttft_ok,
        "ttft_source": ttft.source,
        "ttft_note": ttft.note,
        "ttft_marks": ttft.marks,
        "tps_stat": rate.stat,
        "tps": rate.value,
        "tps_ok": tps_ok,
        "tps_source": rate.source,
        "tps_note": rate.note,
        "tps_marks": rate.marks,
        "tps_optimistic": "*" in rate.marks,
        "stricter": "^" in marks,
        "marks": marks,
        "ok": (ttft_ok is not False)
        and (tps_ok is not False)
        and (ttft_ok is not None or tps_ok is not None),
    }


def slo_matrix(
    rows: pl.DataFrame, *, ttft_ms: float = 1000.0, tps: float = 15.0, basis: Basis = "p90"
) -> pl.DataFrame:
    """Judge every run that has a concurrency level against the TTFT and per-user TPS SLOs.

    Returns one row per run with, for each SLO, the statistic used (`ttft_stat`, `tps_stat`),
    its value, pass/fail (`ttft_ok`, `tps_ok`; null when the file lacks a statistic for it), its
    source (`printed`, `per_request`, `derived`), its cell marks (`ttft_marks`, `tps_marks`) and a
    note when it is not the basis statistic;
    `tps_optimistic` (TPS judged at its upper P90), `stricter` (a statistic stricter than the
    basis was used), `marks` (the cell marks of `basis.MARK_LEGEND`) and `ok` (every SLO that
    could be judged passes, and at least one could).
    """
    judged = [
        _judged(rec, basis, ttft_ms, tps)
        for rec in rows.filter(pl.col("concurrency").is_not_null()).iter_rows(named=True)
    ]
    return pl.DataFrame(judged, schema=SLO_SCHEMA)


def c_max(matrix: pl.DataFrame) -> pl.DataFrame:
    """Per configuration: the highest tested concurrency whose run passes every SLO (null if none)."""
    return matrix.group_by("config", maintain_order=True).agg(
        pl.col("engine").first(),
        pl.col("mode").first(),
        pl.col("concurrency").filter(pl.col("ok")).max().alias("c_max"),
        pl.col("tps_optimistic").any().alias("tps_optimistic"),
        pl.col("stricter").any().alias("stricter"),
        (pl.col("ttft_ok").is_null() | pl.col("tps_ok").is_null()).any().alias("unjudged"),
    )


def interactive_users(c: float, latency_s: float, think_s: float) -> float:
    """N = C x (1 + Z / L): users a server sustaining C in flight with latency L serves at think time Z.

    Examples
    --------
    >>> round_half_up(interactive_users(32, 3.65, 45.0))  # vLLM direct, Openzeka P90 basis
    427
    """
    if latency_s <= 0 or c < 0 or think_s < 0:
        msg = f"need latency > 0, concurrency >= 0, think time >= 0 (got {latency_s}, {c}, {think_s})"
        raise ValueError(msg)
    return c * (1.0 + think_s / latency_s)


def round_half_up(value: float) -> int:
    """Round to the nearest integer, halves up (as the report rounds user counts)."""
    return math.floor(value + 0.5)


def capacity(
    rows: pl.DataFrame, *, ttft_ms: float = 1000.0, tps: float = 15.0, think_s: float = 45.0
) -> pl.DataFrame:
    """Per configuration: C_max and users N for the P90 and mean bases.

    Columns: config, engine, mode, then for each basis b in (p90, mean): `c_max_<b>`,
    `latency_s_mean_at_c_max_<b>`, `users_<b>_exact` (float) and `users_<b>` (rounded);
    plus `tps_optimistic_p90`, `stricter_p90` and `unjudged_<b>` flags.
    """
    out: pl.DataFrame | None = None
    first_run = rows.filter(pl.col("concurrency").is_not_null()).unique(
        ["config", "concurrency"], keep="first", maintain_order=True
    )
    latency = first_run.select("config", "concurrency", "latency_s_mean")
    for basis in BASES:
        per_config = c_max(slo_matrix(rows, ttft_ms=ttft_ms, tps=tps, basis=basis))
        per_config = per_config.join(
            latency,
            left_on=["config", "c_max"],
            right_on=["config", "concurrency"],
            how="left",
            maintain_order="left",
        )
        users = [
            None if c is None or lat is None or lat <= 0 else interactive_users(c, lat, think_s)
            for c, lat in zip(per_config["c_max"], per_config["latency_s_mean"], strict=True)
        ]
        per_config = per_config.with_columns(
            pl.Series(f"users_{basis}_exact", users, dtype=pl.Float64),
            pl.Series(
                f"users_{basis}", [None if u is None else round_half_up(u) for u in users], dtype=pl.Int64
            ),
        ).rename(
            {
                "c_max": f"c_max_{basis}",
                "latency_s_mean": f"latency_s_mean_at_c_max_{basis}",
                "tps_optimistic": f"tps_optimistic_{basis}",
                "stricter": f"stricter_{basis}",
                "unjudged": f"unjudged_{basis}",
            }
        )
        out = (
            per_config
            if out is None
            else out.join(per_config.drop("engine", "mode"), on="config", how="left", maintain_order="left")
        )
    assert out is not None
    return out.drop("tps_optimistic_mean", "stricter_mean")
