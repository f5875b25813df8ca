"""The tables of a real log as a grammar without one kind's rules would give them: that kind's lines
moved to `unparsed` with their raw text (evidence seen but not typed, without inventing lines)."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from logparse.ingest import ingest


def as_if_untyped(path: Path, engine: str, kind: str) -> dict[str, pl.DataFrame]:
    """`path`'s tables with every `kind` event turned back into an `unparsed` line."""
    tables = dict(ingest(path, engine=engine).tables)
    typed = tables.pop(kind)
    raw = path.read_text().splitlines()
    moved = typed.select("line_no", "time", "engine", "rank", "level").with_columns(
        pl.col("line_no").map_elements(lambda n: raw[n - 1], return_dtype=pl.String).alias("raw"),
        pl.lit(None, dtype=pl.String).alias("rule"))
    if "unparsed" in tables:
        moved = pl.concat([tables["unparsed"], moved], how="diagonal_relaxed").sort("line_no")
    tables["unparsed"] = moved
    return tables
