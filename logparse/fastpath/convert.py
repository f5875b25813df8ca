"""Vectorised twins of `logparse.parse.convert`, exact by construction.

A captured text is cast with polars (`chunk._cast`); where the cast gives null for a non-null
text (thousands separators, `1.0` for an int, `12%`, whitespace...), the reference `convert`
itself is applied to those few values (`chunk._patch_column`). Polars only reads plain decimal
syntax, which Python reads the same way, so every value polars does read is the value `convert`
returns. `python_values` turns Python values into a column exactly as `TableBuilder` does.
"""
from __future__ import annotations

from typing import Any

import polars as pl

from logparse.parse import _FALSE, _NUMBER_RE, _TRUE

POLARS_TYPES: dict[str, pl.DataType] = {
    "int": pl.Int64(), "float": pl.Float64(), "str": pl.String(), "bool": pl.Boolean(),
    "floats": pl.List(pl.Float64()),
}
NUMBER_RE_RUST = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|nan|inf"
if _NUMBER_RE.pattern != NUMBER_RE_RUST:  # the two must stay the same pattern
    raise ImportError("logparse.parse._NUMBER_RE changed: update NUMBER_RE_RUST")
BOOL_MAP = {**{k: True for k in _TRUE}, **{k: False for k in _FALSE}}


def python_values(values: list[Any], dtype: pl.DataType) -> pl.Series:
    """Python values as a column of `dtype`, converted as `TableBuilder` converts event values."""
    return pl.DataFrame([{"v": v} for v in values], schema={"v": dtype}, strict=False).to_series()


__all__ = ["BOOL_MAP", "NUMBER_RE_RUST", "POLARS_TYPES", "python_values"]
