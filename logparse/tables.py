"""Collect events into one typed polars table per kind, and write them as Parquet."""
from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from logparse.errors import InputError
from logparse.grammar import COMMON_FIELDS, FieldType, Grammar
from logparse.timeparse import parse_times

POLARS_TYPES: dict[str, pl.DataType] = {
    "int": pl.Int64(),
    "float": pl.Float64(),
    "str": pl.String(),
    "bool": pl.Boolean(),
    "floats": pl.List(pl.Float64()),
}
COMMON_ORDER = ["line_no", "ts", "time", "engine", "rank", "pid", "level", "rule"]
CHUNK_ROWS = 50_000
MARKER_FILE = ".logparse"


def kind_schema(grammar: Grammar, kind: str) -> dict[str, pl.DataType]:
    """The polars schema of a kind's table: common columns, then the kind's fields."""
    schema: dict[str, pl.DataType] = {}
    for name in COMMON_ORDER:
        schema[name] = pl.Datetime("us") if name == "time" else POLARS_TYPES[COMMON_FIELDS[name]]
    fields: Mapping[str, FieldType] = grammar.schema(kind)
    for name, typ in fields.items():
        schema[name] = POLARS_TYPES[typ]
    return schema


class TableBuilder:
    """Accumulates events (dicts) per kind in bounded chunks; `finish` returns the tables."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._chunks: dict[str, list[pl.DataFrame]] = {}
        self._stamps: list[str | None] = []
        self.counts: dict[str, int] = {}

    def add(self, event: Mapping[str, Any]) -> None:
        """Add one event (its `kind` key picks the table)."""
        kind = event["kind"]
        rows = self._rows.setdefault(kind, [])
        rows.append(event)  # type: ignore[arg-type]
        self._stamps.append(event.get("ts"))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if len(rows) >= CHUNK_ROWS:
            self._flush(kind)

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Add many events."""
        for event in events:
            self.add(event)

    def _flush(self, kind: str) -> None:
        rows = self._rows.get(kind)
        if not rows:
            return
        schema = kind_schema(self.grammar, kind)
        schema_no_time = {k: v for k, v in schema.items() if k != "time"}
        frame = pl.from_dicts(rows, schema=schema_no_time, strict=False)
        self._chunks.setdefault(kind, []).append(frame)
        self._rows[kind] = []

    def finish(self, *, year: int | None = None, fallback_time: dt.datetime | None = None) -> dict[str, pl.DataFrame]:
        """One DataFrame per kind present, with `time` parsed from `ts` in line order."""
        for kind in list(self._rows):
            self._flush(kind)
        times = parse_times(self._stamps, year=year, fallback=fallback_time)
        time_of_line = pl.DataFrame(
            {"line_no": pl.Series(range(1, len(times) + 1), dtype=pl.Int64),
             "time": pl.Series(times, dtype=pl.Datetime("us"))}
        )
        tables: dict[str, pl.DataFrame] = {}
        for kind in sorted(self._chunks):
            frame = pl.concat(self._chunks[kind], how="vertical")
            schema = kind_schema(self.grammar, kind)
            frame = frame.join(time_of_line, on="line_no", how="left").select(list(schema))
            tables[kind] = frame.sort("line_no")
        return tables


def write_tables(tables: Mapping[str, pl.DataFrame], out: Path, *, force: bool = False) -> list[Path]:
    """Write `out/<kind>.parquet` for each table, atomically; refuse to clobber foreign folders."""
    prepare_out_dir(out, force=force)
    written = []
    for kind, frame in tables.items():
        target = out / f"{kind}.parquet"
        fd, tmp = tempfile.mkstemp(prefix=f".{kind}.", suffix=".parquet.tmp", dir=out)
        os.close(fd)
        try:
            frame.write_parquet(tmp, compression="zstd", row_group_size=CHUNK_ROWS * 2)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        written.append(target)
    for stale in out.glob("*.parquet"):
        if stale.stem not in tables and (out / MARKER_FILE).exists():
            stale.unlink()
    return written


def prepare_out_dir(out: Path, *, force: bool = False) -> None:
    """Create `out`, or accept it if empty or written by logparse before (or `force`)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not (out / MARKER_FILE).exists() and not force:
        raise InputError(f"{out}: folder is not empty and was not written by logparse; "
                         "choose another --out or pass --force")
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER_FILE).write_text("written by logparse\n", encoding="utf-8")


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """Read `folder/<kind>.parquet` tables written by `write_tables`."""
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of logparse tables")
    return {p.stem: pl.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


def remove_tree(path: Path) -> None:
    """Remove a folder tree (used for temporary outputs)."""
    shutil.rmtree(path, ignore_errors=True)
