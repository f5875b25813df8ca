"""Read a log as numbered lines: plain files, gzip, or stdin; any bytes at all.

Lines are split on `\\n` only (as `sed -n Np` counts), one trailing `\\r` is dropped, and bytes
that are not UTF-8 become U+FFFD. tqdm's `\\r` redraws stay inside their line.

Hostile input ends cleanly in bounded memory: a line longer than `MAX_LINE_BYTES` keeps its first
`MAX_LINE_BYTES` and the rest, up to the next newline, is skipped (counted in `ReadStats`); a
regular file is read up to the size it had when opened, so a log still being written ends.

Reading, newline splitting and cutting live once, in `iter_blocks`: it yields blocks of complete
lines (the vectorised fast path takes them whole); `iter_lines` decodes the lines of those blocks.
"""

from __future__ import annotations

import datetime as dt
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

BLOCK_SIZE = 1 << 20  # what `iter_lines` reads at a time
BLOCK_BYTES = 4 << 20  # the fast path's blocks: bigger ones buy little speed for a lot of memory
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
    stream: BinaryIO = io.BufferedReader(snapshot or raw, BLOCK_SIZE)
    if head == GZIP_MAGIC:
        compressed = stream
        stream = gzip.GzipFile(fileobj=compressed, mode="rb")  # type: ignore[assignment]
        stream.myfileobj = compressed  # type: ignore[attr-defined]  # closed with the GzipFile
    stream.logparse_snapshot = snapshot  # type: ignore[attr-defined]
    return stream


@dataclass(frozen=True)
class Block:
    """Lines `first_line`.. of the log: `data` holds them with their `\\n` (the last may lack it)."""

    first_line: int
    data: bytes
    lines: int
    cut: bool = False  # a single over-long line, cut to the cap (decode it alone)
    split: list[bytes] | None = field(default=None, compare=False, repr=False)  # its lines, if split already

    def raw_lines(self) -> list[bytes]:
        """The block's lines as bytes, without their `\\n` (a cut line holds no `\\n`)."""
        if self.split is not None:
            return self.split
        return self.data.split(b"\n")[: self.lines]


def iter_lines(
    stream: BinaryIO, stats: ReadStats | None = None, *, name: str = "input"
) -> Iterator[tuple[int, str]]:
    """Yield `(line_no, text)` for every line of a binary stream, 1-based (`iter_blocks`' lines, decoded)."""
    stats = stats if stats is not None else ReadStats()
    for block in iter_blocks(stream, stats, name=name, block_bytes=BLOCK_SIZE, split_lines=True):
        line_no = block.first_line
        for raw in block.raw_lines():
            yield line_no, _decode(raw, stats)
            line_no += 1
        del block, raw  # a cut block is a whole capped line: not kept while the next one is read


def iter_blocks(
    stream: BinaryIO,
    stats: ReadStats,
    *,
    name: str = "input",
    block_bytes: int = BLOCK_BYTES,
    split_lines: bool = False,
) -> Iterator[Block]:
    """Blocks of complete lines of a binary stream, read `block_bytes` at a time.

    A block is the bytes of consecutive lines, each ended by `\\n` (the last line of the input may
    lack it). A line longer than `MAX_LINE_BYTES` comes alone, already cut (`Block.cut`); the rest
    of it is skipped and counted. `stats` gets the reading counts; the per-line ones
    (`longest_line`, invalid UTF-8, NUL) are counted when the lines are decoded. With
    `split_lines`, blocks come split into their lines already (see `_Assembler`).
    """
    assembler = _Assembler(stats, MAX_LINE_BYTES, split_lines)
    # read1 hands over what a truncated gzip member decompressed before its end was reached.
    read = getattr(stream, "read1", stream.read)
    try:
        while chunk := read(block_bytes):
            stats.bytes_read += len(chunk)
            yield from assembler.feed(chunk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        stats.notes.append(
            f"{name}: compressed stream ends early or is corrupt ({exc}); read up to line {assembler.line_no}"
        )
    except OSError as exc:
        msg = f"{for_terminal(name)}: read failed after line {assembler.line_no}: {exc.strerror or exc}"
        raise InputError(msg) from None
    yield from assembler.finish()
    if stats.long_lines:
        limit = assembler.limit
        stats.notes.append(
            f"{name}: {stats.long_lines} line(s) longer than {_mib(limit)} cut to their first "
            f"{_mib(limit)} ({stats.long_line_bytes_skipped:,} bytes skipped)"
        )


class _Assembler:
    """Turns what is read, piece by piece, into blocks of complete lines, cutting over-long ones.

    With `split`, a block is split into its lines as it is made: `iter_lines` wants them, and the
    split gives their number for free, where a count would cost a second pass over the bytes.
    """

    def __init__(self, stats: ReadStats, limit: int, split: bool) -> None:
        self.stats = stats
        self.limit = limit
        self.split = split
        self.parts: list[bytes] = []  # the line read so far, not yet ended by a newline
        self.size = 0
        self.skipping = False  # inside the tail of an over-long line whose head was already yielded
        self.line_no = 0  # lines handed out so far

    def feed(self, chunk: bytes) -> Iterator[Block]:
        """The blocks completed by `chunk`, the next piece read."""
        if self.skipping:
            chunk = self._skip(chunk)
        last_nl = chunk.rfind(b"\n")
        if last_nl >= 0:
            data = _complete_lines(self.parts, chunk, last_nl + 1)
            rest = chunk[last_nl + 1 :]
            self.parts, self.size = ([rest], len(rest)) if rest else ([], 0)
            yield from self._blocks(data)
        elif chunk:
            self.parts.append(chunk)
            self.size += len(chunk)
        if self.size > self.limit:
            self.line_no += 1
            yield Block(self.line_no, _cut_parts(self.parts, self.size, self.limit, self.stats), 1, cut=True)
            self.parts, self.size, self.skipping = [], 0, True

    def finish(self) -> Iterator[Block]:
        """The last line, when the input does not end with a newline."""
        if self.parts:
            self.stats.truncated_last_line = True
            self.line_no += 1
            yield Block(self.line_no, b"".join(self.parts), 1)
        elif self.skipping:
            self.stats.truncated_last_line = True
        self.stats.lines = self.line_no

    def _skip(self, chunk: bytes) -> bytes:
        """What follows the end of the over-long line in `chunk` (nothing if it does not end there)."""
        nl = chunk.find(b"\n")
        if nl < 0:
            self.stats.long_line_bytes_skipped += len(chunk)
            return b""
        self.stats.long_line_bytes_skipped += nl
        self.skipping = False
        return chunk[nl + 1 :]

    def _blocks(self, data: bytes) -> Iterator[Block]:
        """`data`, complete lines, as blocks: one, or more when it holds an over-long line."""
        first = self.line_no + 1
        # A split of data that may hold an over-long line would copy that line once more.
        block = _block(first, data, self.split and len(data) <= self.limit)
        if len(data) - block.lines > self.limit:  # only then can one of its lines be over the cap
            yield from _split_long(data, first, self.limit, self.stats)
        else:
            yield block
        self.line_no += block.lines


def _block(first: int, data: bytes, split: bool) -> Block:
    """A block of the complete lines in `data`, split into them or only counted."""
    if not split:
        return Block(first, data, data.count(b"\n"))
    lines = data.split(b"\n")
    lines.pop()  # the empty piece after the last newline
    return Block(first, data, len(lines), split=lines)


def _complete_lines(parts: list[bytes], chunk: bytes, end: int) -> bytes:
    """The unfinished line in `parts` followed by `chunk[:end]`, copied once."""
    if parts:
        return b"".join((*parts, memoryview(chunk)[:end]))
    return chunk if end == len(chunk) else chunk[:end]


def _split_long(data: bytes, first: int, limit: int, stats: ReadStats) -> Iterator[Block]:
    """Blocks of `data` (complete lines from line `first`) where every line over `limit` comes alone, cut."""
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
            pending_start, pending_lines = end + 1, 0
        else:
            pending_lines += 1
        line_no += 1
        start = end + 1
    if pending_lines:
        yield Block(line_no - pending_lines, data[pending_start:], pending_lines)


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
        stats.notes.append(
            f"{describe(path)}: the file shrank while being read (truncated or rotated?); "
            f"read {snapshot.size - snapshot.remaining:,} of {snapshot.size:,} bytes"
        )
        return
    grown = (input_size(path) or 0) - snapshot.size
    if grown > 0:
        stats.notes.append(
            f"{describe(path)}: grew by {grown:,} bytes while being read; read the "
            f"{snapshot.size:,} bytes it held when opened"
        )


def input_size(path: str | Path) -> int | None:
    """Size in bytes of a regular file, for progress; None for stdin and pipes."""
    if str(path) == "-":
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
    "Block",
    "ReadStats",
    "describe",
    "input_mtime",
    "input_size",
    "iter_blocks",
    "iter_lines",
    "open_log",
    "read_lines",
    "read_problems",
]
