"""The event rows each engine era's metrics are read from, with the labels the engine gives them.

`era_rows` returns one row per log line of that era and kind, with ``line_no``, ``t_ms`` (the
event's ``time`` as Unix milliseconds: a naive ``time`` is read as UTC, an aware one converted)
and one ``label_*`` column per label the engine puts on its series (vLLM V1 ``engine``; SGLang
``dp_rank``, ``tp_rank``, ``pp_rank``, ``moe_ep_rank`` from the printed rank).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from logparse.export.catalog import Era

# SGLang's rank bracket part -> the label its metrics collector sets (0.5.6 / 0.5.14 labels).
SGLANG_RANK_LABELS = {"DP": "dp_rank", "TP": "tp_rank", "PP": "pp_rank", "EP": "moe_ep_rank"}
# Label columns are prefixed: the event tables already have an `engine` column (vllm / sglang).
LABEL_PREFIX = "label_"
# Fields that only V0 `Speculative metrics` lines print.
V0_SPEC_FIELDS = ("draft_accept_rate", "system_efficiency", "emitted")


def label_columns(era: Era) -> tuple[str, ...]:
    """The label columns `era_rows` adds for an era, in the engine's order (`label_name` strips
    their prefix)."""
    if era == "vllm-v1":
        return (LABEL_PREFIX + "engine",)
    if era == "sglang":
        return tuple(LABEL_PREFIX + label for label in SGLANG_RANK_LABELS.values())
    return ()


def label_name(column: str) -> str:
    """The Prometheus label a `label_columns` column holds."""
    return column.removeprefix(LABEL_PREFIX)


def era_rows(tables: Mapping[str, pl.DataFrame], era: Era, kind: str) -> pl.DataFrame:
    """Rows of event `kind` that belong to `era`, timed and labelled (empty when there are none)."""
    frame = tables.get(kind)
    if frame is None or frame.is_empty():
        return pl.DataFrame()
    frame = _timed(frame)
    if era == "sglang":
        return _sglang_rows(tables, frame, kind)
    if kind == "spec_decode":
        v0 = pl.any_horizontal(pl.col(c).is_not_null() for c in V0_SPEC_FIELDS)
        if era == "vllm-v0":
            return frame.filter(v0)
        return _engine_of_stats_line(tables, frame.filter(~v0))
    if kind == "engine_stats":
        v0 = pl.col("swapped").is_not_null()
        if era == "vllm-v0":
            return frame.filter(v0)
        return frame.filter(~v0 & pl.col("engines_aggregated").is_null()).with_columns(
            pl.col("engine_idx").cast(pl.String).alias(LABEL_PREFIX + "engine")
        )
    return frame  # prefix_cache: a V0-only line


def untimed(tables: Mapping[str, pl.DataFrame], kinds: tuple[str, ...]) -> int:
    """How many events of `kinds` have no ``time`` (their line printed no timestamp logparse read)."""
    return sum(tables[k]["time"].null_count() for k in kinds if k in tables and "time" in tables[k].columns)


def aggregated_lines(tables: Mapping[str, pl.DataFrame]) -> int:
    """How many vLLM stats lines sum all engines (`N Engines Aggregated:`), which no engine metric is."""
    stats = tables.get("engine_stats")
    if stats is None or "engines_aggregated" not in stats.columns:
        return 0
    return stats.height - stats["engines_aggregated"].null_count()


def _timed(frame: pl.DataFrame) -> pl.DataFrame:
    needed = ("swapped", "engines_aggregated", "engine_idx", "rank", *V0_SPEC_FIELDS)
    frame = frame.with_columns(pl.lit(None).alias(c) for c in needed if c not in frame.columns)
    # dt.epoch reads a naive datetime as UTC and converts an aware one: both give the UTC instant.
    return (
        frame.filter(pl.col("time").is_not_null())
        .with_columns(pl.col("time").dt.epoch("ms").alias("t_ms"))
        .sort("line_no")
    )


def _engine_of_stats_line(tables: Mapping[str, pl.DataFrame], spec: pl.DataFrame) -> pl.DataFrame:
    """V1 `SpecDecoding metrics` carry no `Engine NNN:`; vLLM prints them right after that engine's
    stats line, so they take the engine of the stats line before them."""
    stats = era_rows(tables, "vllm-v1", "engine_stats")
    if stats.is_empty() or spec.is_empty():
        return spec.with_columns(pl.lit(None, dtype=pl.String).alias(LABEL_PREFIX + "engine"))
    return spec.join_asof(stats.select("line_no", LABEL_PREFIX + "engine"), on="line_no", strategy="backward")


def _sglang_rows(tables: Mapping[str, pl.DataFrame], frame: pl.DataFrame, kind: str) -> pl.DataFrame:
    if kind == "kv_pool":
        # The pool size is the engine's gauge at every decode log (log_decode_stats @ 0.5.6): each
        # decode line after the allocation line carries the size it printed.
        pool = frame.filter(pl.col("tokens").is_not_null()).select("line_no", "tokens")
        decode = era_rows(tables, "sglang", "decode_batch")
        if pool.is_empty() or decode.is_empty():
            return pl.DataFrame()
        return decode.drop("tokens", strict=False).join_asof(pool, on="line_no", strategy="backward")
    parts = pl.col("rank").cast(pl.String)
    return frame.with_columns(
        parts.str.extract(rf"\b{part}(\d+)\b", 1).alias(LABEL_PREFIX + label)
        for part, label in SGLANG_RANK_LABELS.items()
    )
