"""Degradation: how stable per-request decode throughput falls as the context grows.

Rows (phases of one log, or windows of several logs) are ordered by context length, and each
consecutive pair gives ``ratio`` = per-request throughput at the shorter context ÷ at the longer
one, mean over mean. Beside it ``ratio_peak_over_mean`` (the shorter context's best sample over
the longer one's mean: the figure hand-written reports often quote) and ``ratio_peak_over_peak``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from logparse.analysis.text import render_table, tokens_label

DEGRADATION_SCHEMA: dict[str, pl.DataType] = {
    "group": pl.String(),
    "from_label": pl.String(),
    "to_label": pl.String(),
    "from_input_tokens": pl.Int64(),
    "to_input_tokens": pl.Int64(),
    "context_ratio": pl.Float64(),
    "ratio": pl.Float64(),
    "ratio_peak_over_mean": pl.Float64(),
    "ratio_peak_over_peak": pl.Float64(),
}


def degradation(windows: pl.DataFrame, *, by: str | None = None, label: str | None = None) -> pl.DataFrame:
    """Ratios of stable per-request throughput between consecutive context lengths.

    Parameters
    ----------
    windows
        One row per stable window with ``input_tokens`` (or ``context_tokens_per_request`` as a
        stand-in where the input length is unknown), ``per_request_tps`` and
        ``per_request_tps_peak``.
    by
        Column to group by before pairing (e.g. ``engine`` when comparing logs); None: one group.
    label
        Column naming the rows (e.g. the log name), copied into ``from_label``/``to_label``.

    Returns
    -------
    pl.DataFrame
        `DEGRADATION_SCHEMA`, one row per consecutive pair in context order.

    Examples
    --------
    >>> w = pl.DataFrame({"input_tokens": [200_000, 65_536], "per_request_tps": [16.3, 50.1],
    ...                   "per_request_tps_peak": [16.7, 53.7]})
    >>> degradation(w).select("from_input_tokens", "to_input_tokens", pl.col("ratio").round(2),
    ...                       pl.col("ratio_peak_over_mean").round(2))
    shape: (1, 4)
    ┌───────────────────┬─────────────────┬───────┬──────────────────────┐
    │ from_input_tokens ┆ to_input_tokens ┆ ratio ┆ ratio_peak_over_mean │
    │ ---               ┆ ---             ┆ ---   ┆ ---                  │
    │ i64               ┆ i64             ┆ f64   ┆ f64                  │
    ╞═══════════════════╪═════════════════╪═══════╪══════════════════════╡
    │ 65536             ┆ 200000          ┆ 3.07  ┆ 3.29                 │
    └───────────────────┴─────────────────┴───────┴──────────────────────┘
    """
    if windows.is_empty():
        return pl.DataFrame(schema=DEGRADATION_SCHEMA)
    frame = windows
    if "input_tokens" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.Int64).alias("input_tokens"))
    if "context_tokens_per_request" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.Float64).alias("context_tokens_per_request"))
    frame = frame.with_columns(
        pl.coalesce(pl.col("input_tokens").cast(pl.Float64), pl.col("context_tokens_per_request")).alias(
            "_ctx"
        ),
        (pl.lit("") if by is None else pl.col(by).cast(pl.String)).alias("_group"),
        (pl.lit(None, dtype=pl.String) if label is None else pl.col(label).cast(pl.String)).alias("_label"),
    ).filter(pl.col("_ctx").is_not_null() & (pl.col("per_request_tps") > 0))
    rows = []
    for (group,), part in frame.sort("_group", "_ctx").group_by("_group", maintain_order=True):
        records = part.to_dicts()
        for lo, hi in itertools.pairwise(records):
            rows.append(
                {
                    "group": group or None,
                    "from_label": lo["_label"],
                    "to_label": hi["_label"],
                    "from_input_tokens": _int(lo["input_tokens"]),
                    "to_input_tokens": _int(hi["input_tokens"]),
                    "context_ratio": hi["_ctx"] / lo["_ctx"] if lo["_ctx"] else None,
                    "ratio": lo["per_request_tps"] / hi["per_request_tps"],
                    "ratio_peak_over_mean": _div(lo.get("per_request_tps_peak"), hi["per_request_tps"]),
                    "ratio_peak_over_peak": _div(
                        lo.get("per_request_tps_peak"), hi.get("per_request_tps_peak")
                    ),
                }
            )
    return pl.DataFrame(rows, schema=DEGRADATION_SCHEMA, orient="row")


def _int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def ratio_text(value: float | None) -> str:
    """A degradation ratio as the tables print it: `3.07x`, `-` when unknown.

    >>> [ratio_text(v) for v in (3.0693, 1.2, None)]
    ['3.07x', '1.20x', '-']
    """
    return "-" if value is None else f"{value:.2f}x"


def render_degradation(rows: Sequence[Mapping[str, Any]], *, label: str | None = None) -> str:
    """The degradation table for the terminal: from, to, mean/mean, peak/mean, every ratio as `1.23x`.

    `rows` are `degradation` rows as dicts; with `label` (e.g. ``engine``) that column comes first.
    """
    body = [
        [
            *([str(r[label] or "-")] if label else []),
            tokens_label(r["from_input_tokens"]),
            tokens_label(r["to_input_tokens"]),
            ratio_text(r["ratio"]),
            ratio_text(r["ratio_peak_over_mean"]),
        ]
        for r in rows
    ]
    headers = [*([label] if label else []), "from", "to", "mean/mean", "peak/mean"]
    return render_table(body, headers, align="l" * len(headers[:-2]) + "rr")
