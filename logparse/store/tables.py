"""Event tables on disk: one Parquet file per kind, written by the compiled core a row group at a
time (`core/src/write.rs`, with the settings below); read back here as lazy scans or frames.

Layouts: a log's folder `DIR/<kind>.parquet`; a dataset `DIR/run=<name>/kind=<kind>/part-NNNNN.parquet`
(a new part every `PART_ROW_GROUPS` row groups: a Parquet writer keeps every row group's metadata
until its file is closed). Each column's `description` and `unit` are in its Parquet field
metadata (`logparse.store.describe`), which DuckDB, polars and pyarrow read past.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import polars as pl

from logparse.store.folder import MARKER_FILE

ROW_GROUP_ROWS = 100_000
COMPRESSION: Final = "zstd"
COMPRESSION_LEVEL = 1  # chosen by measurement: see reports/bench.md
PART_ROW_GROUPS = 32


def part_file(index: int) -> str:
    """The name of a table's `index`-th file in the dataset layout (names sort in writing order)."""
    return f"part-{index:05d}.parquet"


# -- reading tables back --------------------------------------------------------------------------
def is_table_folder(path: str | Path) -> bool:
    """A folder written by `logparse ingest --out` (a log's tables, a dataset, or one of its runs)."""
    if str(path) == "-":
        return False
    p = Path(path)
    if not p.is_dir():
        return False
    if (p / MARKER_FILE).exists():
        return True
    return p.name.startswith("run=") and (p.parent / MARKER_FILE).exists()


def runs_of(dataset: Path) -> list[Path]:
    """The `run=<name>` folders of a dataset (empty for a single log's folder)."""
    return sorted(p for p in dataset.iterdir() if p.is_dir() and p.name.startswith("run="))


def table_paths(folder: Path) -> dict[str, list[Path]]:
    """Parquet files per kind in a log's folder (`<kind>.parquet`) or a run (`kind=<kind>/*.parquet`)."""
    found: dict[str, list[Path]] = {}
    for p in sorted(folder.glob("*.parquet")):
        found.setdefault(p.stem, []).append(p)
    for d in sorted(folder.glob("kind=*")):
        if d.is_dir():
            files = sorted(d.glob("*.parquet"))
            if files:
                found.setdefault(d.name[len("kind=") :], []).extend(files)
    return found


def scan_tables(folder: Path, kinds: Sequence[str] | None = None) -> dict[str, pl.LazyFrame]:
    """Each kind's table in `folder` (only `kinds`, when given) as a lazy scan."""
    found = table_paths(folder)
    wanted = sorted(found) if kinds is None else [k for k in sorted(kinds) if k in found]
    return {kind: pl.scan_parquet(found[kind], glob=False) for kind in wanted}


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """Every kind's table in `folder`, read whole."""
    return {kind: pl.read_parquet(files, glob=False) for kind, files in sorted(table_paths(folder).items())}


def write_parquet(frame: pl.DataFrame, path: Path, **options: Any) -> None:
    """`frame.write_parquet(path, **options)`, encoded in memory and written by Python: a full disk
    is then an `OSError` with its errno, where polars' own writer gives a bare `ComputeError`."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer, **options)
    path.write_bytes(buffer.getvalue())


def write_csv(frame: pl.DataFrame, path: Path) -> None:
    """`frame.write_csv(path)`, written by Python (see `write_parquet`)."""
    path.write_text(frame.write_csv(), encoding="utf-8")


def write_tables(
    tables: Mapping[str, pl.DataFrame],
    out: Path,
    *,
    force: bool = False,
    sources: Sequence[str] | None = None,
    files: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write `out/<kind>.parquet` for each frame, and `out/<name>` holding `text` for each of
    `files`, the folder replaced whole (see `output_folder`)."""
    from logparse.store.folder import output_folder

    with output_folder(out, force=force, sources=sources) as tmp:
        for kind, frame in tables.items():
            write_parquet(
                frame, tmp / f"{kind}.parquet", compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS
            )
        for name, text in (files or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
    return [out / f"{kind}.parquet" for kind in tables] + [out / name for name in files or {}]
