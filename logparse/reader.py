"""Read a log as numbered lines: plain files, gzip, or stdin; any bytes at all.

Lines are split on `\\n` only (as `sed -n Np` counts), one trailing `\\r` is dropped, and bytes
that are not UTF-8 become U+FFFD. tqdm's `\\r` redraws stay inside their line.
"""
from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from logparse.errors import InputError

BLOCK_SIZE = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"


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


def describe(path: str | Path) -> str:
    """How a path is named in messages."""
    return "standard input" if str(path) == "-" else str(path)


def open_log(path: str | Path) -> BinaryIO:
    """Open a log for binary reading: `-` is stdin, gzip is detected by its magic bytes."""
    if str(path) == "-":
        return sys.stdin.buffer
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory; give the log file inside it")
    try:
        raw = open(p, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    except OSError as exc:
        raise InputError(f"{p}: cannot open: {exc.strerror or exc}") from None
    if stat.S_ISREG(st.st_mode):
        head = raw.read(2)
        raw.seek(0)
        if head == GZIP_MAGIC:
            return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def iter_lines(stream: BinaryIO, stats: ReadStats | None = None, *, name: str = "input") -> Iterator[tuple[int, str]]:
    """Yield `(line_no, text)` for every line of a binary stream, 1-based."""
    stats = stats if stats is not None else ReadStats()
    pending = b""
    line_no = 0
    # read1 hands over what a truncated gzip member decompressed before its end was reached.
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            block = read(BLOCK_SIZE)
            if not block:
                break
            stats.bytes_read += len(block)
            data = pending + block if pending else block
            lines = data.split(b"\n")
            pending = lines.pop()
            for raw in lines:
                line_no += 1
                yield line_no, _decode(raw, stats)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        stats.notes.append(f"{name}: compressed stream ends early or is corrupt ({exc}); read up to line {line_no}")
    except OSError as exc:
        raise InputError(f"{name}: read failed after line {line_no}: {exc.strerror or exc}") from None
    if pending:
        stats.truncated_last_line = True
        line_no += 1
        yield line_no, _decode(pending, stats)
    stats.lines = line_no


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
    stream = open_log(path)
    try:
        yield from iter_lines(stream, stats, name=describe(path))
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


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
