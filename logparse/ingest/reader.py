"""Reading a log as numbered lines: plain files, gzip, stdin or any binary stream; any bytes at all.

The compiled core reads (`_core.Reader`); this module opens it and names what it counted. Lines are
split on `\\n` only (as `sed -n Np` counts), one trailing `\\r` is dropped, and bytes that are not
UTF-8 become U+FFFD. tqdm's `\\r` redraws stay inside their line.

Hostile input ends cleanly in bounded memory: a line longer than `MAX_LINE_BYTES` keeps its first
`MAX_LINE_BYTES` and the rest, up to the next newline, is skipped (counted in `ReadStats`); a
regular file is read up to the size it had when opened, so a log still being written ends.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from logparse.engine import core_module
from logparse.errors import LogparseError
from logparse.store import remote

BLOCK_SIZE = 1 << 20  # what `iter_lines` reads at a time
BLOCK_BYTES = 4 << 20  # the ingest's blocks: bigger ones buy little speed for a lot of memory
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


def read_problems(stats: ReadStats) -> list[tuple[str, str]]:
    """``(code, message)`` for each problem met reading the input: the reader's notes first (they
    say where reading stopped), then cut last line, invalid UTF-8 and NUL counts. One wording for
    the `ingest` headline and the post-mortem's ``input_*`` warnings."""
    found = [("input_read", note) for note in stats.notes]
    if stats.truncated_last_line:
        found.append(("input_truncated_last_line", "last line has no newline (truncated file?)"))
    if stats.invalid_utf8_lines:
        found.append(
            ("input_invalid_utf8", f"{stats.invalid_utf8_lines} line(s) with invalid UTF-8 (replaced)")
        )
    if stats.nul_lines:
        found.append(("input_nul_bytes", f"{stats.nul_lines} line(s) with NUL bytes"))
    return found


def describe(path: str | Path) -> str:
    """How a path is named in messages."""
    return "standard input" if str(path) == "-" else str(path)


def open_reader(
    source: str | Path | BinaryIO,
    block_bytes: int | None = None,
    *,
    name: str | None = None,
    spool: bool = True,
) -> Any:
    """A core reader of `source`: a path (`-` is stdin; gzip is known by its magic bytes), a URI of
    object storage (`s3://...`, `logparse.store.remote`) or a binary stream (`spool=False`: read
    once, never again). Raises `InputError` when the path cannot be read."""
    core = core_module()
    size = block_bytes or int(os.environ.get("LOGPARSE_BLOCK_BYTES", BLOCK_BYTES))
    if str(source) == "-":  # Python's stdin, which a caller (a test, an embedding) may have replaced
        return core.Reader.from_stream(sys.stdin.buffer, describe("-"), size, MAX_LINE_BYTES, None, spool)
    if remote.is_uri(source):  # object storage: the store's stream, read a block at a time
        text = str(source)
        length, _ = remote.file_facts(text)
        return core.Reader.from_stream(remote.open_input(text), text, size, MAX_LINE_BYTES, length, spool)
    if isinstance(source, str | Path):
        return core.Reader(str(source), size, MAX_LINE_BYTES)
    return core.Reader.from_stream(source, name or "input", size, MAX_LINE_BYTES, None, spool)


def iter_lines(
    stream: BinaryIO, stats: ReadStats | None = None, *, name: str = "input"
) -> Iterator[tuple[int, str]]:
    """Yield `(line_no, text)` for every line of a binary stream, 1-based."""
    yield from _lines(open_reader(stream, BLOCK_SIZE, name=name), stats)


def read_lines(path: str | Path, stats: ReadStats | None = None) -> Iterator[tuple[int, str]]:
    """Open `path` and iterate its numbered lines."""
    yield from _lines(open_reader(path, BLOCK_SIZE), stats)


def _lines(reader: Any, stats: ReadStats | None) -> Iterator[tuple[int, str]]:
    while (block := reader.next_lines()) is not None:
        first, texts = block
        for i, text in enumerate(texts):
            yield first + i, text
        if stats is not None:
            _copy(reader.stats(), stats)
    if stats is not None:
        _copy(reader.stats(), stats)


def _copy(counted: dict[str, Any], stats: ReadStats) -> None:
    for key, value in counted.items():
        setattr(stats, key, value)


def input_size(path: str | Path) -> int | None:
    """Size in bytes of a regular file, for progress; None for stdin and pipes."""
    if str(path) == "-":
        return None
    if remote.is_uri(path):
        try:
            return remote.file_facts(str(path))[0]
        except LogparseError:
            return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def input_mtime(path: str | Path) -> dt.datetime | None:
    """Local modification time of a file (the year of year-less stamps falls back to it); None for stdin."""
    if str(path) == "-":
        return None
    try:
        return dt.datetime.fromtimestamp(os.stat(path).st_mtime)
    except OSError:
        return None


__all__ = [
    "BLOCK_BYTES",
    "MAX_LINE_BYTES",
    "ReadStats",
    "describe",
    "input_mtime",
    "input_size",
    "iter_lines",
    "open_reader",
    "read_lines",
    "read_problems",
]
