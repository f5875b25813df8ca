"""Where an ingest's tables go besides the core's Parquet files and memory: JSON lines on a stream
(`ingest --format jsonl`), a block at a time."""

from __future__ import annotations

from typing import Any, TextIO

import polars as pl
import pyarrow as pa

from logparse.escape import json_default, json_line
from logparse.store.schema import TIME


class JsonlSink:
    """Every event as one JSON line, in line order, block by block. Keys: the event's kind, the
    common columns (null when absent), `time` as ISO-8601 with its zone, then the fields the line
    gave (a field left empty is left out).

    Until the log's dates are settled (a full date read: the core calls `settle`), the lines wait
    in a temporary file: a restart of the ingest must not print them twice."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.pending: list[pl.DataFrame] = []
        self.held: Any = None  # the temporary file of lines not yet printed
        self.live = False

    def settle(self) -> None:
        """The dates can no longer change: print what waited, then stream."""
        if not self.live:
            self._release()
            self.live = True

    def _release(self) -> None:
        if self.held is not None:
            self.held.seek(0)
            while chunk := self.held.read(1 << 20):
                self.out.write(chunk)
            self.held.close()
            self.held = None

    def add(self, kind: str, batch: pa.RecordBatch) -> None:
        """Take a kind's rows of one block (a pyarrow batch, or any Arrow C-interface batch)."""
        frame = pl.from_arrow(pa.Table.from_batches([pa.record_batch(batch)]))
        assert isinstance(frame, pl.DataFrame)
        frame = frame.with_columns(pl.col(TIME).dt.to_string("%Y-%m-%dT%H:%M:%S%.6f+00:00"))
        self.pending.append(frame.with_columns(pl.lit(kind).alias("kind")))

    def end_block(self) -> None:
        rows: list[tuple[int, str]] = []
        for frame in self.pending:
            rows.extend(_json_rows(frame))
        rows.sort(key=lambda r: r[0])
        text = "".join(line + "\n" for _, line in rows)
        self.pending = []
        if self.live:
            self.out.write(text)
            return
        if self.held is None:
            import tempfile

            # held open across blocks and closed by close() / _release(), so no `with`
            self.held = tempfile.TemporaryFile("w+", encoding="utf-8", prefix="logparse-jsonl-")  # noqa: SIM115
        self.held.write(text)

    def close(self) -> list[str]:
        self.end_block()
        self._release()
        self.live = True
        return []

    def abort(self) -> None:
        self.pending = []
        if self.held is not None:
            self.held.close()
            self.held = None


COMMON = (
    "kind",
    "line_no",
    "ts",
    TIME,
    "outer_ts",
    "engine",
    "rank",
    "pid",
    "level",
    "task",
    "prefix",
    "rule",
)


def _json_rows(frame: pl.DataFrame) -> list[tuple[int, str]]:
    """(line_no, JSON text) of each row: common keys always, fields only when set."""
    fields = [c for c in frame.columns if c not in COMMON]
    out = []
    for row in frame.iter_rows(named=True):
        event: dict[str, Any] = {k: row[k] for k in COMMON}
        for name in fields:
            value = row[name]
            if value is not None:
                event[name] = value
        out.append((row["line_no"], json_line(event, ensure_ascii=False, default=json_default)))
    return out
