"""Where the tables of a streamed log go: memory (small logs, the Python API) or Parquet files
(JSON lines: `fastpath.jsonl`; several at once: `TeeSink`).

`ParquetSink` writes one file per kind with pyarrow's `ParquetWriter`, a row group at a time, so a
table never has to fit in memory. A kind whose rows all fit in one row group is written with
`DataFrame.write_parquet`, as `write_tables` writes it.
"""
from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from logparse.fastpath import profile
from logparse.tables import CHUNK_ROWS

ROW_GROUP_ROWS = CHUNK_ROWS * 2
ROW_GROUP_BYTES = 8 << 20  # a wide table's spilled rows make a row group earlier: its reading stays small
DIRECT_ROWS = 4096  # a block's rows of one kind at least this many: written as they come
COMPRESSION = "zstd"
PART_ROW_GROUPS = 32  # hive layout: a new part file after this many row groups (see `_KindWriter`)


def part_file(index: int) -> str:
    """The name of a table's `index`-th file in the hive layout (names sort in writing order)."""
    return f"part-{index:05d}.parquet"


class MemorySink:
    """Keeps every frame; `tables()` concatenates them per kind."""

    def __init__(self) -> None:
        self.frames: dict[str, list[pl.DataFrame]] = {}

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        self.frames.setdefault(kind, []).append(frame)

    def end_block(self, nulls: Mapping[int, tuple[str, ...]]) -> None:
        pass

    def close(self) -> list[str]:
        return sorted(self.frames)

    def abort(self) -> None:
        self.frames.clear()

    def tables(self) -> dict[str, pl.DataFrame]:
        return {kind: (parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical"))
                for kind, parts in sorted(self.frames.items())}


def _close_quietly(writer: pq.ParquetWriter | pa.ipc.RecordBatchFileWriter | None) -> None:
    """Close a writer whose file is about to be discarded (an error closing it changes nothing)."""
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()


class _Spill:
    """Rows waiting for their row group, in a temporary Arrow IPC file beside the table.

    Held in memory from one block to the next, such rows pin the allocators' pages between the
    blocks' own allocations, and the process grows as the log goes on (measured: 60 to 90 MB per
    GB of log); on disk they cost one sequential write and read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pa.ipc.RecordBatchFileWriter | None = None
        self.rows = 0
        self.bytes = 0

    def add(self, table: pa.Table) -> None:
        if self.writer is None:
            self.writer = pa.ipc.new_file(str(self.path), table.schema)
        self.writer.write_table(table)
        self.rows += table.num_rows
        self.bytes += table.nbytes

    def take(self) -> pa.Table | None:
        """The rows spilled so far (the file is removed), or None."""
        if self.writer is None:
            return None
        self.writer.close()
        self.writer, self.rows, self.bytes = None, 0, 0
        with pa.OSFile(str(self.path)) as source:
            table = pa.ipc.open_file(source).read_all()
        self.path.unlink()
        return table

    def discard(self) -> None:
        _close_quietly(self.writer)
        self.writer = None
        self.path.unlink(missing_ok=True)


class _KindWriter:
    """One kind's table. A block's rows of a busy kind are a row group by themselves; sparse kinds
    wait in a `_Spill` until they fill a row group.

    With `rotate`, the table is a series of files `part-00000.parquet`, `part-00001.parquet`... (the
    first is `path`), a new one every `PART_ROW_GROUPS` row groups: a Parquet writer keeps every
    row group's metadata until its file is closed, and the process grows with it (about 30 KB per
    row group of a wide table), so files closed from time to time keep memory flat.
    """

    def __init__(self, path: Path, *, rotate: bool = False) -> None:
        self.path = path
        self.rotate = rotate
        self.paths: list[Path] = []  # the files written so far
        self.row_groups = 0  # in the open file
        self.spill = _Spill(path.with_name(f".{path.stem}.spill.arrow"))
        self.writer: pq.ParquetWriter | None = None
        self.schema: pa.Schema | None = None
        self.started = False  # a row group was handed over to be written

    def add(self, frame: pl.DataFrame) -> pa.Table | None:
        """Take `frame`; return a full row group's table when one is ready to be written."""
        table = frame.to_arrow()
        if self.schema is None:
            self.schema = table.schema
        elif table.schema != self.schema:
            table = table.cast(self.schema)
        if not self.spill.rows and table.num_rows >= DIRECT_ROWS:
            self.started = True
            return table
        self.spill.add(table)
        if self.spill.rows >= ROW_GROUP_ROWS or self.spill.bytes >= ROW_GROUP_BYTES:
            return self.take()
        return None

    def take(self) -> pa.Table | None:
        table = self.spill.take()
        if table is not None:
            self.started = True
        return table

    def flush(self) -> None:
        table = self.take()
        if table is not None:
            self.write_frame(table)

    def write_frame(self, table: pa.Table) -> None:
        assert self.schema is not None
        if self.writer is None:
            path = self.path.with_name(part_file(len(self.paths))) if self.paths else self.path
            self.paths.append(path)
            texts = [f.name for f in self.schema if pa.types.is_large_string(f.type) or pa.types.is_string(f.type)]
            self.writer = pq.ParquetWriter(path, self.schema, compression=COMPRESSION, use_dictionary=texts or False)
            self.row_groups = 0
        self.writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self.row_groups += -(-table.num_rows // ROW_GROUP_ROWS)
        if self.rotate and self.row_groups >= PART_ROW_GROUPS:
            self.writer.close()
            self.writer = None

    def close(self) -> None:
        if self.writer is None and not self.started:
            # a table that fits one row group is written as `write_tables` writes tables
            frame = pl.from_arrow(self.spill.take())
            assert isinstance(frame, pl.DataFrame)
            frame.write_parquet(self.path, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)
            self.paths.append(self.path)
            return
        self.flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def abort(self) -> None:
        _close_quietly(self.writer)
        self.writer = None
        self.spill.discard()


class ParquetSink:
    """One Parquet file per kind in `folder` (`<kind>.parquet`, or `kind=<kind>/part-00000.parquet`, more parts for a large table).

    Full row groups are encoded on a background thread (pyarrow releases the GIL while it
    encodes), so writing overlaps with parsing the next block.
    """

    def __init__(self, folder: Path, name: Mapping[str, str] | None = None, layout: str = "flat",
                 background: bool | None = None) -> None:
        if background is None:
            background = not profile.ENABLED  # a profile counts the encoding where it happens
        self.folder = folder
        self.layout = layout
        self.writers: dict[str, _KindWriter] = {}
        self._queue: queue.Queue[tuple[_KindWriter, pa.Table] | None] | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        if background:
            self._queue = queue.Queue(maxsize=1)
            self._thread = threading.Thread(target=self._drain, name="logparse-parquet", daemon=True)
            self._thread.start()

    def _drain(self) -> None:
        assert self._queue is not None
        while True:
            item = self._queue.get()
            if item is None:
                return
            writer, frame = item
            if self._error is None:
                try:
                    writer.write_frame(frame)
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller's thread
                    self._error = exc

    def _check(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _stop(self) -> None:
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def path(self, kind: str) -> Path:
        if self.layout == "hive":
            folder = self.folder / f"kind={kind}"
            folder.mkdir(parents=True, exist_ok=True)
            return folder / part_file(0)
        return self.folder / f"{kind}.parquet"

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        self._check()
        writer = self.writers.get(kind)
        if writer is None:
            writer = self.writers[kind] = _KindWriter(self.path(kind), rotate=self.layout == "hive")
        self._write(writer, writer.add(frame))

    def end_block(self, nulls: Mapping[int, tuple[str, ...]]) -> None:
        pass

    def _write(self, writer: _KindWriter, table: pa.Table | None) -> None:
        if table is None:
            return
        if self._queue is not None:
            self._queue.put((writer, table))
        else:
            writer.write_frame(table)

    def close(self) -> list[str]:
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
        for writer in self.writers.values():
            for path in writer.paths:
                path.unlink(missing_ok=True)
        self.writers.clear()


class TeeSink:
    """Hands every frame to each of `sinks` (e.g. JSON lines on stdout and Parquet files)."""

    def __init__(self, *sinks: Any) -> None:
        self.sinks = sinks

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        for sink in self.sinks:
            sink.add(kind, frame)

    def end_block(self, nulls: Mapping[int, tuple[str, ...]]) -> None:
        for sink in self.sinks:
            sink.end_block(nulls)

    def close(self) -> list[str]:
        kinds: set[str] = set()
        for sink in self.sinks:
            kinds.update(sink.close())
        return sorted(kinds)

    def abort(self) -> None:
        for sink in self.sinks:
            sink.abort()


__all__ = ["MemorySink", "ParquetSink", "ROW_GROUP_ROWS", "part_file", "TeeSink"]

