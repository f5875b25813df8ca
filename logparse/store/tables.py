"""Event tables on disk: one Parquet file per kind, written a row group at a time; read back as
lazy scans or frames.

Layouts: a log's folder `DIR/<kind>.parquet`; a dataset `DIR/run=<name>/kind=<kind>/part-NNNNN.parquet`
(a new part every `PART_ROW_GROUPS` row groups: a Parquet writer keeps every row group's metadata
until its file is closed). Each column's `description` and `unit` are written into its Parquet
field metadata (`logparse.store.describe`), which DuckDB, polars and pyarrow read past.
"""

from __future__ import annotations

import contextlib
import io
import queue
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from logparse.grammar import Grammar
from logparse.store.describe import column_metadata
from logparse.store.folder import MARKER_FILE

ROW_GROUP_ROWS = 100_000
COMPRESSION: Final = "zstd"
COMPRESSION_LEVEL = 1  # chosen by measurement: see reports/bench.md
PART_ROW_GROUPS = 32


def part_file(index: int) -> str:
    """The name of a table's `index`-th file in the dataset layout (names sort in writing order)."""
    return f"part-{index:05d}.parquet"


class KindWriter:
    """One kind's table: batches gathered until a row group is full, then written."""

    def __init__(self, path: Path, schema: pa.Schema, *, rotate: bool = False) -> None:
        self.path = path
        self.schema = schema
        self.rotate = rotate
        self.paths: list[Path] = []
        self.pending: list[pa.RecordBatch] = []
        self.rows = 0
        self.writer: pq.ParquetWriter | None = None
        self.row_groups = 0

    def add(self, batch: pa.RecordBatch) -> pa.Table | None:
        """Take a batch; a full row group's table when one is ready to be written."""
        self.pending.append(batch)
        self.rows += batch.num_rows
        return self.take() if self.rows >= ROW_GROUP_ROWS else None

    def take(self) -> pa.Table | None:
        if not self.pending:
            return None
        table = pa.Table.from_batches(self.pending, schema=self.schema)
        self.pending, self.rows = [], 0
        return table

    def write(self, table: pa.Table) -> None:
        if self.writer is None:
            path = self.path.with_name(part_file(len(self.paths))) if self.paths else self.path
            self.paths.append(path)
            self.writer = pq.ParquetWriter(
                path, self.schema, compression=COMPRESSION, compression_level=COMPRESSION_LEVEL
            )
            self.row_groups = 0
        self.writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self.row_groups += 1
        if self.rotate and self.row_groups >= PART_ROW_GROUPS:
            self.writer.close()
            self.writer = None

    def close(self) -> None:
        table = self.take()
        if table is not None or not self.paths:
            self.write(table if table is not None else self.schema.empty_table())
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def abort(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.writer = None
        for path in self.paths:
            path.unlink(missing_ok=True)


class TableWriter:
    """Every kind's table of one log in `folder`; row groups are encoded on a background thread
    (pyarrow releases the GIL while it encodes), so writing overlaps with parsing."""

    def __init__(
        self, folder: Path, *, layout: str = "flat", background: bool = True, grammar: Grammar | None = None
    ) -> None:
        self.folder = folder
        self.layout = layout
        self.grammar = grammar  # documents the columns in the Parquet metadata, when given
        self.writers: dict[str, KindWriter] = {}
        self._queue: queue.Queue[tuple[KindWriter, pa.Table] | None] | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        if background:
            self._queue = queue.Queue(maxsize=2)
            self._thread = threading.Thread(target=self._drain, name="logparse-parquet", daemon=True)
            self._thread.start()

    def _drain(self) -> None:
        assert self._queue is not None
        while (item := self._queue.get()) is not None:
            writer, table = item
            if self._error is None:
                try:
                    writer.write(table)
                except BaseException as exc:
                    self._error = exc

    def _check(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def path(self, kind: str) -> Path:
        if self.layout == "hive":
            folder = self.folder / f"kind={kind}"
            folder.mkdir(parents=True, exist_ok=True)
            return folder / part_file(0)
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / f"{kind}.parquet"

    def add(self, kind: str, batch: pa.RecordBatch) -> None:
        self._check()
        writer = self.writers.get(kind)
        if writer is None:
            writer = self.writers[kind] = KindWriter(
                self.path(kind), self._documented(kind, batch.schema), rotate=self.layout == "hive"
            )
        table = writer.add(batch)
        if table is not None:
            if self._queue is not None:
                self._queue.put((writer, table))
            else:
                writer.write(table)

    def _documented(self, kind: str, schema: pa.Schema) -> pa.Schema:
        """`schema` with each column's description and unit as field metadata."""
        if self.grammar is None or kind not in self.grammar.kinds:
            return schema
        meta = column_metadata(self.grammar, kind)
        fields = [f.with_metadata({**(f.metadata or {}), **meta.get(f.name, {})}) for f in schema]
        return pa.schema(fields, metadata=schema.metadata)

    def end_block(self) -> None:
        """Nothing to do at a block's end: row groups are written when full."""

    def _stop(self) -> None:
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def close(self) -> list[str]:
        """Finish every table; the kinds written."""
        self._stop()
        self._check()
        for kind in sorted(self.writers):
            self.writers[kind].close()
        return sorted(self.writers)

    def abort(self) -> None:
        self._stop()
        self._error = None
        for writer in self.writers.values():
            writer.abort()
        self.writers.clear()


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
