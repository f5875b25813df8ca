"""Read a log as blocks of complete lines, with exactly the line rules of `reader.iter_lines`.

`iter_lines` yields one decoded line at a time; the fast path wants many lines at once. A block is
the bytes of consecutive complete lines (each ended by `\\n`; the last line of the input may lack
it). A line longer than `reader.MAX_LINE_BYTES` comes alone, already cut (`Block.cut`), and the
rest of it is skipped and counted, as `iter_lines` does. `ReadStats` gets the same counts; the
per-line ones (`longest_line`, invalid UTF-8, NUL) are counted when the lines are decoded.
"""
from __future__ import annotations

import gzip
import os
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from logparse import reader
from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.reader import ReadStats, _cut, _cut_parts, _mib

BLOCK_BYTES = 4 << 20  # 4 MiB of lines at a time: bigger blocks buy little speed for a lot of memory


@dataclass(frozen=True)
class Block:
    """Lines `first_line`.. of the log: `data` holds them with their `\\n` (the last may lack it)."""

    first_line: int
    data: bytes
    lines: int
    cut: bool = False  # a single over-long line, cut to the cap (decode it alone)


def _split_long(data: bytes, first: int, limit: int, stats: ReadStats) -> Iterator[Block]:
    """Blocks of `data` where every line longer than `limit` comes alone, cut."""
    start = 0
    line_no = first
    pending_start = 0
    pending_lines = 0
    while start < len(data):
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl
        if end - start > limit:
            if pending_lines:
                yield Block(line_no - pending_lines, data[pending_start:start], pending_lines)
            yield Block(line_no, _cut(data[start:end], limit, stats), 1, cut=True)
            pending_start, pending_lines = (len(data) if nl < 0 else nl + 1), 0
        else:
            pending_lines += 1
        line_no += 1
        start = len(data) if nl < 0 else nl + 1
    if pending_lines:
        yield Block(line_no - pending_lines, data[pending_start:], pending_lines)


def iter_blocks(stream: BinaryIO, stats: ReadStats, *, name: str = "input",
                block_bytes: int = BLOCK_BYTES) -> Iterator[Block]:
    """Blocks of complete lines of a binary stream (see the module docstring)."""
    limit = reader.MAX_LINE_BYTES
    parts: list[bytes] = []
    size = 0
    skipping = False
    line_no = 0
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            block = read(block_bytes)
            if not block:
                break
            stats.bytes_read += len(block)
            if skipping:
                nl = block.find(b"\n")
                stats.long_line_bytes_skipped += len(block) if nl < 0 else nl
                if nl < 0:
                    continue
                skipping = False
                block = block[nl + 1:]
            last_nl = block.rfind(b"\n")
            if last_nl < 0:
                if block:
                    parts.append(block)
                    size += len(block)
            else:
                head = block[: last_nl + 1]
                rest = block[last_nl + 1:]
                data = b"".join((*parts, head)) if parts else head
                parts, size = ([rest], len(rest)) if rest else ([], 0)
                count = data.count(b"\n")
                if len(data) - count > limit and _has_long_line(data, limit):
                    yield from _split_long(data, line_no + 1, limit, stats)
                else:
                    yield Block(line_no + 1, data, count)
                line_no += count
            if size > limit:
                line_no += 1
                yield Block(line_no, _cut_parts(parts, size, limit, stats), 1, cut=True)
                parts, size, skipping = [], 0, True
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        stats.notes.append(f"{name}: compressed stream ends early or is corrupt ({exc}); read up to line {line_no}")
    except OSError as exc:
        msg = f"{for_terminal(name)}: read failed after line {line_no}: {exc.strerror or exc}"
        raise InputError(msg) from None
    if parts:
        stats.truncated_last_line = True
        line_no += 1
        yield Block(line_no, b"".join(parts), 1)
    elif skipping:
        stats.truncated_last_line = True
    stats.lines = line_no
    if stats.long_lines:
        stats.notes.append(f"{name}: {stats.long_lines} line(s) longer than {_mib(limit)} cut to their first "
                           f"{_mib(limit)} ({stats.long_line_bytes_skipped:,} bytes skipped)")


def _has_long_line(data: bytes, limit: int) -> bool:
    start = 0
    while start < len(data):
        nl = data.find(b"\n", start)
        end = len(data) if nl < 0 else nl
        if end - start > limit:
            return True
        start = end + 1
    return False


class BlockSpool:
    """Blocks written aside so a non-seekable input (stdin, a FIFO) can be read again."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="logparse-spool-")  # noqa: SIM115 - closed in close()
        self.active = True

    def write(self, block: Block) -> None:
        header = b"%d %d %d %d\n" % (block.first_line, block.lines, int(block.cut), len(block.data))
        self._file.write(header)
        self._file.write(block.data)

    def replay(self) -> Iterator[Block]:
        self._file.flush()
        self._file.seek(0)
        while True:
            header = self._file.readline()
            if not header:
                break
            first, lines, cut, size = (int(x) for x in header.split())
            yield Block(first, self._file.read(size), lines, bool(cut))
        self._file.seek(0, os.SEEK_END)

    def stop(self) -> None:
        """No rereading will be needed: drop what was kept."""
        if self.active:
            self.active = False
            self._file.close()

    def close(self) -> None:
        self.stop()


__all__ = ["BLOCK_BYTES", "Block", "BlockSpool", "iter_blocks"]
