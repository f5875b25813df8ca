"""Read a log as numbered lines: plain files, gzip, or stdin; any bytes at all.

Lines are split on `\\n` only (as `sed -n Np` counts), one trailing `\\r` is dropped, and bytes
that are not UTF-8 become U+FFFD. tqdm's `\\r` redraws stay inside their line.

Hostile input ends cleanly in bounded memory: a line longer than `MAX_LINE_BYTES` keeps its first
`MAX_LINE_BYTES` and the rest, up to the next newline, is skipped (counted in `ReadStats`); a
regular file is read up to the size it had when opened, so a log still being written ends.
"""
from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from logparse.errors import InputError
from logparse.escape import for_terminal

BLOCK_SIZE = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
# No engine prints a line this long; beyond it a "line" is a runaway print, a binary or a NUL-filled
# file, and only its head is kept, so memory stays bounded whatever the input.
MAX_LINE_BYTES = 64 << 20


@dataclass
class ReadStats:
    """Counts gathered while reading, reported in the summary."""

    bytes_read: int = 0
    lines: int = 0
    invalid_utf8_lines: int = 0
    nul_lines: int = 0
    longest_line: int = 0
    truncated_last_line: bool = False
    notes: list[str] = field(default_factory=list)
    long_lines: int = 0  # lines longer than MAX_LINE_BYTES, cut to it
    long_line_bytes_skipped: int = 0


class _UpTo(io.RawIOBase):
    """A regular file read only up to the size it had when opened (a log still being written)."""

    def __init__(self, raw: io.FileIO, size: int) -> None:
        super().__init__()
        self._raw = raw
        self.size = size
        self.remaining = size
        self.shrank = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.remaining <= 0:
            return 0
        n = self._raw.readinto(memoryview(buffer).cast("B")[: self.remaining]) or 0
        if n == 0:
            self.shrank = True  # EOF before the size seen at open
        self.remaining -= n
        return n

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()
        super().close()


def describe(path: str | Path) -> str:
    """How a path is named in messages."""
    return "standard input" if str(path) == "-" else str(path)


def open_log(path: str | Path) -> BinaryIO:
    """Open a log for binary reading: `-` is stdin, gzip is detected by its magic bytes."""
    if str(path) == "-":
        return sys.stdin.buffer
    p = Path(path)
    shown = for_terminal(str(p))  # a file name is text from elsewhere too
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{shown}: is a directory; give the log file inside it")
    try:
        raw = open(p, "rb", buffering=0)  # noqa: SIM115 - returned to the caller, who closes it
    except OSError as exc:
        raise InputError(f"{shown}: cannot open: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):  # FIFO, character device, /dev/stdin: read until EOF
        return io.BufferedReader(raw, BLOCK_SIZE)
    try:
        size = os.fstat(raw.fileno()).st_size
        head = raw.read(2)
        raw.seek(0)
    except OSError as exc:
        raw.close()
        raise InputError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    # Read what the file held when opened; st_size 0 may be a /proc-like file: read to EOF.
    snapshot = _UpTo(raw, size) if size else None
    stream: BinaryIO = io.BufferedReader(snapshot or raw, BLOCK_SIZE)  # type: ignore[assignment]
    if head == GZIP_MAGIC:
        compressed = stream
        stream = gzip.GzipFile(fileobj=compressed, mode="rb")  # type: ignore[assignment]
        stream.myfileobj = compressed  # type: ignore[attr-defined]  # closed with the GzipFile
    stream.logparse_snapshot = snapshot  # type: ignore[attr-defined]
    return stream


def iter_lines(stream: BinaryIO, stats: ReadStats | None = None, *, name: str = "input") -> Iterator[tuple[int, str]]:
    """Yield `(line_no, text)` for every line of a binary stream, 1-based."""
    stats = stats if stats is not None else ReadStats()
    limit = MAX_LINE_BYTES
    parts: list[bytes] = []  # the line read so far, not yet ended by a newline
    size = 0
    skipping = False  # inside the tail of an over-long line whose head was already yielded
    line_no = 0
    # read1 hands over what a truncated gzip member decompressed before its end was reached.
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            block = read(BLOCK_SIZE)
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
            if b"\n" not in block:
                if block:
                    parts.append(block)
                    size += len(block)
            else:
                data = b"".join((*parts, block)) if parts else block
                lines = data.split(b"\n")
                rest = lines.pop()
                parts, size = ([rest], len(rest)) if rest else ([], 0)
                del data
                for raw in lines:
                    line_no += 1
                    if len(raw) > limit:
                        raw = _cut(raw, limit, stats)
                    yield line_no, _decode(raw, stats)
            if size > limit:
                line_no += 1
                yield line_no, _decode(_cut_parts(parts, size, limit, stats), stats)
                parts, size, skipping = [], 0, True
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        stats.notes.append(f"{name}: compressed stream ends early or is corrupt ({exc}); read up to line {line_no}")
    except OSError as exc:
        msg = f"{for_terminal(name)}: read failed after line {line_no}: {exc.strerror or exc}"
        raise InputError(msg) from None
    if parts:
        stats.truncated_last_line = True
        line_no += 1
        yield line_no, _decode(b"".join(parts), stats)
    elif skipping:
        stats.truncated_last_line = True
    stats.lines = line_no
    if stats.long_lines:
        stats.notes.append(f"{name}: {stats.long_lines} line(s) longer than {_mib(limit)} cut to their first "
                           f"{_mib(limit)} ({stats.long_line_bytes_skipped:,} bytes skipped)")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def _cut(raw: bytes, limit: int, stats: ReadStats) -> bytes:
    stats.long_lines += 1
    stats.long_line_bytes_skipped += len(raw) - limit
    return raw[:limit]


def _cut_parts(parts: list[bytes], size: int, limit: int, stats: ReadStats) -> bytes:
    """The first `limit` bytes of an unfinished line held in `parts` (emptied: memory is freed)."""
    stats.long_lines += 1
    stats.long_line_bytes_skipped += size - limit
    excess = size - limit
    while excess and parts:
        last = parts.pop()
        if len(last) > excess:
            parts.append(last[: len(last) - excess])
            break
        excess -= len(last)
    head = b"".join(parts)
    parts.clear()
    return head


def _decode(raw: bytes, stats: ReadStats) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if len(raw) > stats.longest_line:
        stats.longest_line = len(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        stats.invalid_utf8_lines += 1
        text = raw.decode("utf-8", errors="replace")
    if "\x00" in text:
        stats.nul_lines += 1
    return text


def read_lines(path: str | Path, stats: ReadStats | None = None) -> Iterator[tuple[int, str]]:
    """Open `path` and iterate its numbered lines; closes the file when done."""
    stats = stats if stats is not None else ReadStats()
    stream = open_log(path)
    try:
        yield from iter_lines(stream, stats, name=describe(path))
        _note_changes(path, getattr(stream, "logparse_snapshot", None), stats)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _note_changes(path: str | Path, snapshot: _UpTo | None, stats: ReadStats) -> None:
    """Say so when the file grew or shrank while it was read (a live or rotated log)."""
    if snapshot is None:
        return
    if snapshot.shrank:
        stats.notes.append(f"{describe(path)}: the file shrank while being read (truncated or rotated?); "
                           f"read {snapshot.size - snapshot.remaining:,} of {snapshot.size:,} bytes")
        return
    grown = (input_size(path) or 0) - snapshot.size
    if grown > 0:
        stats.notes.append(f"{describe(path)}: grew by {grown:,} bytes while being read; read the "
                           f"{snapshot.size:,} bytes it held when opened")


def input_size(path: str | Path) -> int | None:
    """Size in bytes of a regular file, for progress; None for stdin and pipes."""
    if str(path) == "-":
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


__all__ = ["ReadStats", "describe", "input_size", "iter_lines", "open_log", "read_lines"]
