"""Speculative decoding per phase: acceptance length and rate, per-position rates, draft waste.

Figures are taken over the phase's stable window when it has one (the steady state the
throughput is quoted for), else over the whole phase.

* vLLM V1 prints a `SpecDecoding metrics` line after each stats line: the means of its printed
  acceptance length, acceptance rate and throughputs; per-position rates averaged position by
  position; wasted = 100 × (1 − Σ accepted ÷ Σ drafted throughput).
* vLLM V0 prints cumulative counts: the phase's last line gives the rate, and the mean
  acceptance length is 1 + rate × speculative tokens.
* SGLang prints ``accept len`` (tokens per request per verify step, bonus included) and an
  ``accept rate`` whose meaning changed in ≈0.5.11, in its Decode lines. With the number k of
  draft tokens per step (``spec_tokens``, or the server's `speculative_num_draft_tokens` − 1):
  rate = (accept len − 1) ÷ k, drafted = gen ÷ accept len × k, accepted = gen ÷ accept len ×
  (accept len − 1). Without k the printed rate is used and drafted = accepted ÷ rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import polars as pl

from logparse.analysis._frames import table

SPEC_SCHEMA: dict[str, pl.DataType] = {
    "phase": pl.Int64(),
    "source": pl.String(),
    "scope": pl.String(),
    "lines": pl.Int64(),
    "spec_tokens": pl.Int64(),
    "mean_accept_len": pl.Float64(),
    "accept_len_min": pl.Float64(),
    "accept_len_max": pl.Float64(),
    "accept_rate": pl.Float64(),
    "accept_rate_min": pl.Float64(),
    "accept_rate_max": pl.Float64(),
    "per_position": pl.List(pl.Float64()),
    "drafted_tps": pl.Float64(),
    "accepted_tps": pl.Float64(),
    "wasted_draft_pct": pl.Float64(),
}

_VLLM_SPEC = {
    "mean_accept_len": pl.Float64(),
    "accepted_tps": pl.Float64(),
    "drafted_tps": pl.Float64(),
    "accepted": pl.Int64(),
    "drafted": pl.Int64(),
    "per_position": pl.List(pl.Float64()),
    "draft_accept_pct": pl.Float64(),
    "draft_accept_rate": pl.Float64(),
    "num_spec_tokens": pl.Int64(),
    "emitted": pl.Int64(),
}
_K_PATTERNS = (
    (re.compile(r"num_speculative_tokens['\"]?\s*[:=]\s*(\d+)"), 0),
    (re.compile(r"speculative_num_draft_tokens['\"]?\s*[:=]\s*(\d+)"), -1),
    (re.compile(r"speculative[_-]dspark[_-]block[_-]size['\"]?\s*[:=]\s*(\d+)"), 0),
)


def spec_tokens_from_config(tables: Mapping[str, pl.DataFrame]) -> int | None:
    """Draft tokens per verification step, from the server arguments printed at start-up."""
    config = table(tables, "config", {"args": pl.String(), "key": pl.String(), "value": pl.String()})
    texts = [t for t in config.get_column("args").drop_nulls().to_list()]
    texts += [f"{k}={v}" for k, v in config.select("key", "value").drop_nulls().iter_rows()]
    for pattern, offset in _K_PATTERNS:
        for text in texts:
            match = pattern.search(text)
            if match and int(match.group(1)) + offset > 0:
                return int(match.group(1)) + offset
    return None


def spec_by_phase(
    tables: Mapping[str, pl.DataFrame],
    *,
    samples: pl.DataFrame,
    phases: pl.DataFrame,
    engine: str,
    spec_tokens: int | None = None,
) -> pl.DataFrame:
    """Speculative-decoding figures per phase (`SPEC_SCHEMA`); phases without drafts have no row.

    Parameters
    ----------
    tables
        The event tables (vLLM `spec_decode`, `config`).
    samples
        Decode samples with ``phase`` and ``stable`` (`windows.mark_stable`).
    phases
        `phases.find_phases` output.
    engine
        ``vllm`` or ``sglang``.
    spec_tokens
        Draft tokens per step (k); default: from the printed server arguments.
    """
    if phases.is_empty():
        return pl.DataFrame(schema=SPEC_SCHEMA)
    k = spec_tokens or spec_tokens_from_config(tables)
    if engine == "sglang":
        return _sglang(samples, k)
    spec = table(tables, "spec_decode", _VLLM_SPEC)
    if spec.is_empty() or samples.is_empty():
        return pl.DataFrame(schema=SPEC_SCHEMA)
    # Each spec line belongs to the stats line printed just before it.
    owners = samples.select("line_no", "phase", "stable").sort("line_no")
    spec = (
        spec.sort("line_no")
        .join_asof(
            owners.rename({"line_no": "_stats_line"}),
            left_on="line_no",
            right_on="_stats_line",
            strategy="backward",
        )
        .filter(pl.col("phase").is_not_null())
    )
    rows = []
    for (phase,), part in spec.group_by("phase", maintain_order=True):
        stable = part.filter(pl.col("stable"))
        scope, use = ("stable", stable) if stable.height else ("phase", part)
        v1 = use.filter(
            pl.col("mean_accept_len").is_not_null()
            | pl.col("drafted_tps").is_not_null()
            | pl.col("draft_accept_pct").is_not_null()
        )
        row = _vllm_v1(v1) if v1.height else _vllm_v0(part, k)
        rows.append({"phase": phase, "scope": scope if v1.height else "phase", "spec_tokens": k, **row})
    return pl.DataFrame(rows, schema=SPEC_SCHEMA, orient="row").sort("phase")


def _vllm_v1(part: pl.DataFrame) -> dict[str, object]:
    lens = part.get_column("mean_accept_len").drop_nulls().drop_nans()
    rates = (
        part.select(
            pl.coalesce(
                pl.col("draft_accept_pct") / 100.0,
                pl.when(pl.col("drafted") > 0).then(pl.col("accepted") / pl.col("drafted")),
            )
        )
        .to_series()
        .drop_nulls()
        .drop_nans()
    )
    drafted = part.get_column("drafted_tps").drop_nulls()
    accepted = part.get_column("accepted_tps").drop_nulls()
    positions = [p for p in part.get_column("per_position").drop_nulls().to_list() if p]
    per_position = None
    if positions:
        width = max(len(p) for p in positions)
        per_position = [
            sum(p[i] for p in positions if len(p) > i) / sum(1 for p in positions if len(p) > i)
            for i in range(width)
        ]
    total_d = float(drafted.sum()) if drafted.len() else 0.0
    return {
        "source": "vllm_spec_decode",
        "lines": part.height,
        "mean_accept_len": _mean(lens),
        "accept_len_min": _min(lens),
        "accept_len_max": _max(lens),
        "accept_rate": _mean(rates),
        "accept_rate_min": _min(rates),
        "accept_rate_max": _max(rates),
        "per_position": per_position,
        "drafted_tps": _mean(drafted),
        "accepted_tps": _mean(accepted),
        "wasted_draft_pct": 100.0 * (1.0 - float(accepted.sum()) / total_d) if total_d else None,
    }


def _vllm_v0(part: pl.DataFrame, k: int | None) -> dict[str, object]:
    last = part.sort("line_no").row(-1, named=True)
    rate = last.get("draft_accept_rate")
    k = last.get("num_spec_tokens") or k
    return {
        "source": "vllm_v0_speculative_metrics",
        "lines": part.height,
        "mean_accept_len": 1.0 + rate * k if rate is not None and k else None,
        "accept_len_min": None,
        "accept_len_max": None,
        "accept_rate": rate,
        "accept_rate_min": None,
        "accept_rate_max": None,
        "per_position": None,
        "drafted_tps": None,
        "accepted_tps": None,
        "wasted_draft_pct": 100.0 * (1.0 - rate) if rate is not None else None,
    }


def _sglang(samples: pl.DataFrame, k: int | None) -> pl.DataFrame:
    part = samples.filter(pl.col("phase").is_not_null() & pl.col("accept_len").is_not_null())
    if part.is_empty():
        return pl.DataFrame(schema=SPEC_SCHEMA)
    rows = []
    for (phase,), rows_all in part.sort("line_no").group_by("phase", maintain_order=True):
        stable = rows_all.filter(pl.col("stable"))
        scope, use = ("stable", stable) if stable.height else ("phase", rows_all)
        a = use.get_column("accept_len")
        gen = use.get_column("gen_tps")
        steps = gen / a
        accepted = steps * (a - 1.0)
        if k:
            rate_rows = (a - 1.0) / k
            drafted = steps * k
        else:
            rate_rows = use.get_column("accept_rate")
            rate = _mean(rate_rows.drop_nulls())
            drafted = accepted / rate if rate else pl.Series([None] * use.height, dtype=pl.Float64)
        total_d = float(drafted.drop_nulls().sum()) if drafted.drop_nulls().len() else 0.0
        rate_mean = _mean(rate_rows.drop_nulls())
        wasted = (
            100.0 * (1.0 - float(accepted.sum()) / total_d)
            if k and total_d
            else (100.0 * (1.0 - rate_mean) if rate_mean is not None else None)
        )
        rows.append(
            {
                "phase": phase,
                "source": "sglang_decode_batch",
                "scope": scope,
                "lines": use.height,
                "spec_tokens": k,
                "mean_accept_len": _mean(a),
                "accept_len_min": _min(a),
                "accept_len_max": _max(a),
                "accept_rate": rate_mean,
                "accept_rate_min": _min(rate_rows.drop_nulls()),
                "accept_rate_max": _max(rate_rows.drop_nulls()),
                "per_position": None,
                "drafted_tps": _mean(drafted.drop_nulls()),
                "accepted_tps": _mean(accepted),
                "wasted_draft_pct": wasted,
            }
        )
    return pl.DataFrame(rows, schema=SPEC_SCHEMA, orient="row").sort("phase")


def _mean(s: pl.Series) -> float | None:
    return float(s.mean()) if s.len() else None  # type: ignore[arg-type]


def _min(s: pl.Series) -> float | None:
    return float(s.min()) if s.len() else None  # type: ignore[arg-type]


def _max(s: pl.Series) -> float | None:
    return float(s.max()) if s.len() else None  # type: ignore[arg-type]
