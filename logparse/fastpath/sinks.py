"""Where the tables of a streamed log go: memory (small logs, the Python API) or Parquet files.

`ParquetSink` writes one file per kind with pyarrow's `ParquetWriter`, a row group at a time, so a
table never has to fit in memory. A kind whose rows all fit in one row group is written with
`DataFrame.write_parquet`, as `write_tables` writes it.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Mapping
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from logparse.fastpath import profile
from logparse.tables import CHUNK_ROWS

ROW_GROUP_ROWS = CHUNK_ROWS * 2
ROW_GROUP_BYTES = 8 << 20  # a wide table flushes earlier: memory stays bounded
SINK_BYTES = 12 << 20  # rows waiting for their row group, all kinds together
DIRECT_ROWS = 4096  # a block's rows of one kind at least this many: written as they come
COMPRESSION = "zstd"


class MemorySink:
    """Keeps every frame; `tables()` concatenates them per kind."""

    def __init__(self) -> None:
        self.frames: dict[str, list[pl.DataFrame]] = {}

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        self.frames.setdefault(kind, []).append(frame)

    def close(self) -> list[str]:
        return sorted(self.frames)

    def abort(self) -> None:
        self.frames.clear()

    def tables(self) -> dict[str, pl.DataFrame]:
        return {kind: (parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical"))
                for kind, parts in sorted(self.frames.items())}


class _KindWriter:
    """One kind's file. Frames are turned into Arrow tables as they come: that copies their texts
    into compact buffers, so a buffered row does not keep the whole block it was read from alive."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pending: list[pa.Table] = []
        self.rows = 0
        self.bytes = 0
        self.writer: pq.ParquetWriter | None = None
        self.schema: pa.Schema | None = None
        self.started = False  # a row group was handed over to be written

    def add(self, frame: pl.DataFrame) -> pa.Table | None:
        """Buffer `frame`; return a full row group's table when one is ready to be written.

        A block's worth of rows of a busy kind is a row group by itself: held back, such tables
        would interleave with the next blocks' allocations and the process would grow (allocator
        fragmentation) as the log goes on. Sparse kinds are gathered into fewer, larger groups.
        """
        table = frame.to_arrow()
        if not self.pending and table.num_rows >= DIRECT_ROWS:
            self.started = True
            return table
        self.pending.append(table)
        self.rows += table.num_rows
        self.bytes += table.nbytes
        if self.rows >= ROW_GROUP_ROWS or self.bytes >= ROW_GROUP_BYTES:
            return self.take()
        return None

    def take(self) -> pa.Table | None:
        if not self.pending:
            return None
        table = self.pending[0] if len(self.pending) == 1 else pa.concat_tables(self.pending)
        self.pending, self.rows, self.bytes = [], 0, 0
        self.started = True
        return table

    def flush(self) -> None:
        table = self.take()
        if table is not None:
            self.write_frame(table)

    def write_frame(self, table: pa.Table) -> None:
        if self.writer is None:
            self.schema = table.schema
            texts = [f.name for f in self.schema if pa.types.is_large_string(f.type) or pa.types.is_string(f.type)]
            self.writer = pq.ParquetWriter(self.path, self.schema, compression=COMPRESSION,
                                           use_dictionary=texts or False)
        elif table.schema != self.schema:
            table = table.cast(self.schema)
        self.writer.write_table(table, row_group_size=ROW_GROUP_ROWS)

    def close(self) -> None:
        if self.writer is None and not self.started:
            # a table that fits one row group is written as `write_tables` writes tables
            table = self.pending[0] if len(self.pending) == 1 else pa.concat_tables(self.pending)
            self.pending = []
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            frame.write_parquet(self.path, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)
            return
        self.flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def abort(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:  # noqa: BLE001, S110 - the folder is discarded anyway
                pass
            self.writer = None
        self.pending = []


class ParquetSink:
    """One Parquet file per kind in `folder` (`<kind>.parquet`, or `kind=<kind>/part-0.parquet`).

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
            return folder / "part-0.parquet"
        return self.folder / f"{kind}.parquet"

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        self._check()
        writer = self.writers.get(kind)
        if writer is None:
            writer = self.writers[kind] = _KindWriter(self.path(kind))
        self._write(writer, writer.add(frame))
        if sum(w.bytes for w in self.writers.values()) > SINK_BYTES:
            # many kinds each holding a part row group add up: write the largest out early
            biggest = max(self.writers.values(), key=lambda w: w.bytes)
            self._write(biggest, biggest.take())

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
            writer.path.unlink(missing_ok=True)
        self.writers.clear()


__all__ = ["MemorySink", "ParquetSink", "ROW_GROUP_ROWS"]

