"""What a run is: model, engine, tensor/data parallel sizes, speculative decoding, quantisation.

Two runs are comparable only when these agree (and the phases compared have the same N).
Each is read from what the log printed (the arguments, the config line, the rank labels, the
stats lines); a fact the log does not state is None, never assumed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from logparse.analysis._frames import rank_index, table

IDENTITY_KEYS = ("model", "tensor_parallel", "data_parallel", "speculative", "quantization")
MODEL_COLUMNS = ("model", "served_model_name", "model_path", "model_tag")
_ARG = {
    "model": r"(?:model_path|model)['\"]?\s*[:=]\s*['\"]([^'\"]+)['\"]",
    "tensor_parallel": r"(?:tensor_parallel_size|tp_size)['\"]?\s*[:=]\s*(\d+)",
    "data_parallel": r"(?:data_parallel_size|dp_size)['\"]?\s*[:=]\s*(\d+)",
    "quantization": r"quantization['\"]?\s*[:=]\s*['\"]([^'\"]+)['\"]",
    "speculative": r"(?:speculative_config|speculative_algorithm)['\"]?\s*[:=]\s*(\{|['\"][A-Za-z])",
}


def first_text(frame: pl.DataFrame, columns: tuple[str, ...]) -> str | None:
    """The first non-empty value of the first of `columns` that has one, in line order."""
    if frame.is_empty():
        return None
    for column in columns:
        if column in frame.columns:
            values = frame.sort("line_no").get_column(column).drop_nulls().cast(pl.String)
            values = values.filter(values.str.len_chars() > 0)
            if values.len():
                return str(values[0])
    return None


def _from_args(tables: Mapping[str, pl.DataFrame], key: str) -> str | None:
    config = table(tables, "config", {"args": pl.String()})
    for text in config.sort("line_no").get_column("args").drop_nulls().to_list():
        match = re.search(_ARG[key], text)
        if match:
            return match.group(1)
    return None


def _rank_count(tables: Mapping[str, pl.DataFrame], token: str) -> int | None:
    """How many ranks of `token` (TP, DP) the rank labels number (highest index + 1), or None."""
    best = None
    for frame in tables.values():
        if "rank" in frame.columns and frame.height:
            top = frame.select(rank_index(token).max()).item()
            if top is not None and (best is None or top > best):
                best = int(top)
    return None if best is None else best + 1


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def run_identity(tables: Mapping[str, pl.DataFrame], *, engine: str) -> dict[str, Any]:
    """``model``, ``tensor_parallel``, ``data_parallel``, ``speculative``, ``quantization`` of one
    engine start, as printed (None when the log does not say)."""
    config = table(tables, "config", {c: pl.String() for c in MODEL_COLUMNS})
    model = first_text(config, MODEL_COLUMNS) or _from_args(tables, "model")
    tp = (
        _int(
            first_text(
                table(tables, "config", {"tensor_parallel_size": pl.String()}), ("tensor_parallel_size",)
            )
        )
        or _int(_from_args(tables, "tensor_parallel"))
        or _rank_count(tables, "TP")
    )
    stats = table(tables, "engine_stats", {"engine_idx": pl.Int64(), "engines_aggregated": pl.Int64()})
    engines = (
        stats.select(
            pl.max_horizontal(pl.col("engine_idx").max() + 1, pl.col("engines_aggregated").max())
        ).item()
        if stats.height
        else None
    )
    dp = _int(_from_args(tables, "data_parallel")) or _rank_count(tables, "DP") or _int(engines)
    quant = _from_args(tables, "quantization") or first_text(
        table(tables, "memory", {"quant": pl.String()}), ("quant",)
    )
    return {
        "model": model,
        "tensor_parallel": tp,
        "data_parallel": dp,
        "speculative": _speculative(tables, engine),
        "quantization": quant,
    }


def _speculative(tables: Mapping[str, pl.DataFrame], engine: str) -> bool | None:
    """Speculative decoding on (its metrics or arguments were printed), off (stats lines without
    it), or None (no stats line and no argument: the log does not say)."""
    if _from_args(tables, "speculative") is not None:
        return True
    if engine == "vllm":
        if table(tables, "spec_decode", {}).height:
            return True
        return False if table(tables, "engine_stats", {}).height else None
    decode = table(tables, "decode_batch", {"accept_len": pl.Float64()})
    if decode.is_empty():
        return None
    return bool(decode.get_column("accept_len").is_not_null().any())


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(facts both runs state and that differ, facts only one of them states), as phrases.

    >>> differences({"model": "A", "tensor_parallel": 8}, {"model": "B", "tensor_parallel": None})
    (['model A vs B'], ['tensor_parallel'])
    """
    differ, unknown = [], []
    for key in IDENTITY_KEYS:
        x, y = a.get(key), b.get(key)
        if x is None and y is None:
            continue
        if x is None or y is None:
            unknown.append(key)
        elif _norm(x) != _norm(y):
            differ.append(f"{key} {x} vs {y}")
    return differ, unknown


def _norm(value: Any) -> Any:
    """A model path and its last part name the same model (`/cache/org/Kimi-K3` = `Kimi-K3`)."""
    return str(value).rstrip("/").rsplit("/", 1)[-1].lower() if isinstance(value, str) else value


__all__ = ["IDENTITY_KEYS", "MODEL_COLUMNS", "differences", "first_text", "run_identity"]
