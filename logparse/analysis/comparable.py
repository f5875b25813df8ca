"""Which compared rows may enter one degradation ratio, and why the others may not.

A ratio of per-request decode throughput between two context lengths says how a setup degrades
only when everything else is equal: the engine, the model, the tensor / data parallel sizes,
speculative decoding on or off, the quantisation (when printed) and the concurrency N. Rows
that differ in any of these (as far as each log states them) are never paired; a window that
is not trusted (too few samples, too short) never enters a ratio. Both are said, as warnings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from logparse.analysis.identity import IDENTITY_KEYS, differences

KEY_COLUMNS = ("engine", *IDENTITY_KEYS, "concurrency")
WARNING_SCHEMA: dict[str, pl.DataType] = {"source": pl.String(), "code": pl.String(), "message": pl.String()}


def _key(row: Mapping[str, Any]) -> str:
    """The facts two rows must share to be paired, as one text (unknown facts as `?`)."""
    return "|".join(
        "?" if row.get(c) is None else str(row.get(c)).rstrip("/").rsplit("/", 1)[-1].lower()
        for c in KEY_COLUMNS
    )


def with_comparability(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with ``comparable`` (the key of `KEY_COLUMNS`; rows sharing it may be paired)."""
    keys = [_key(r) for r in rows.iter_rows(named=True)]
    return rows.with_columns(pl.Series("comparable", keys, dtype=pl.String))


def _where(row: Mapping[str, Any]) -> str:
    return f"{row['source']}" + ("" if row.get("phase") is None else f" phase {row['phase']}")


def comparability_warnings(rows: pl.DataFrame) -> pl.DataFrame:
    """Warnings for the rows of `compare`: an untrusted window left out of the ratios, and each
    pair of one engine's runs at different input lengths that were not paired, with the facts
    they differ in (``not_comparable``) or that one of them does not state."""
    out: list[dict[str, str]] = []
    measured = rows.filter(pl.col("per_request_tps").is_not_null())
    for r in measured.filter(~pl.col("trusted").fill_null(False)).iter_rows(named=True):
        out.append(
            {
                "source": r["source"],
                "code": "untrusted_window",
                "message": f"{_where(r)}: its stable window is not trusted ({r['note'] or 'too short'}): "
                "left out of every ratio",
            }
        )
    trusted = measured.filter(pl.col("trusted").fill_null(False)).to_dicts()
    for i, a in enumerate(trusted):
        for b in trusted[i + 1 :]:
            if (
                a["engine"] != b["engine"]
                or a["source"] == b["source"]
                or a["input_label"] == b["input_label"]
            ):
                continue
            differ, unknown = differences(a, b)
            if a["concurrency"] != b["concurrency"]:
                differ.append(f"N {a['concurrency']} vs {b['concurrency']}")
            if differ:
                out.append(
                    {
                        "source": b["source"],
                        "code": "not_comparable",
                        "message": f"no ratio between {_where(a)} and {_where(b)}: the runs differ "
                        f"({'; '.join(differ)})",
                    }
                )
            elif unknown:
                out.append(
                    {
                        "source": b["source"],
                        "code": "comparability_unknown",
                        "message": f"no ratio between {_where(a)} and {_where(b)}: "
                        f"{', '.join(unknown)} not stated by both logs, so they cannot be shown "
                        "to be the same setup",
                    }
                )
    return pl.DataFrame(out, schema=WARNING_SCHEMA, orient="row")


__all__ = ["KEY_COLUMNS", "WARNING_SCHEMA", "comparability_warnings", "with_comparability"]
