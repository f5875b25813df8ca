"""A log's blocks of lines, readable again from the start (reopened, or replayed from a spool).

Blocks come from `reader.iter_blocks`; a block never ends inside a record a container runtime split
into CRI partial lines (the parsers join those with the line that completes them).
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from logparse.ingest.detect import HEAD_LINES
from logparse.ingest.reader import (
    BLOCK_BYTES,
    Block,
    ReadStats,
    _decode,
    _note_changes,
    _UpTo,
    describe,
    open_log,
    read_lines,
)

# A CRI partial line ("TS stdout P ..."): the record goes on on the next line
_CRI_PARTIAL = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ \n]{8,40} (?:stdout|stderr) P(?: |$)")


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


def _is_regular(path: str | Path) -> bool:
    if str(path) == "-":
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _ends_partial(block: Block) -> bool:
    """Whether the block's last line is a CRI partial line."""
    if block.cut or not block.data:
        return False
    data = block.data[:-1] if block.data.endswith(b"\n") else block.data
    start = data.rfind(b"\n") + 1
    return _CRI_PARTIAL.match(data, start) is not None


def _joined(blocks: Iterator[Block]) -> Iterator[Block]:
    """`blocks`, a block that ends with a CRI partial line merged with the next one."""
    held: Block | None = None
    for block in blocks:
        if held is not None:
            if block.cut:
                yield held
                held = None
            else:
                block = Block(held.first_line, held.data + block.data, held.lines + block.lines)
                held = None
        if _ends_partial(block):
            held = block
            continue
        yield block
    if held is not None:
        yield held


def _block_lines(block: Block, stats: ReadStats | None = None) -> list[str]:
    stats = stats if stats is not None else ReadStats()
    if block.cut:
        return [_decode(block.data, stats)]
    return [_decode(raw, stats) for raw in block.data.split(b"\n")[: block.lines]]


class Source:
    """The blocks of an input, readable again from the start."""

    def __init__(self, path: str | Path, block_bytes: int = BLOCK_BYTES) -> None:
        self.path = path
        self.name = describe(path)
        self.block_bytes = block_bytes
        self.regular = _is_regular(path)
        self.size: int | None = None
        self.stream: BinaryIO | None = None
        self.stats = ReadStats()
        self.spool: BlockSpool | None = None
        self._live: Iterator[Block] | None = None
        self._buffered: list[Block] = []

    def open(self) -> None:
        self.stats = ReadStats()
        self.stream = open_log(self.path)
        snapshot = getattr(self.stream, "logparse_snapshot", None)
        if isinstance(snapshot, _UpTo):
            if self.size is None:
                self.size = snapshot.size
            elif snapshot.size != self.size:  # grew since the first reading: read what it held then
                snapshot.remaining = self.size - (snapshot.size - snapshot.remaining)
                snapshot.size = self.size
        from logparse.ingest.reader import iter_blocks

        self._live = _joined(
            iter_blocks(self.stream, self.stats, name=self.name, block_bytes=self.block_bytes)
        )
        if not self.regular:
            self.spool = BlockSpool()

    def position(self) -> int:
        """Bytes read so far (for progress)."""
        snapshot = getattr(self.stream, "logparse_snapshot", None)
        if isinstance(snapshot, _UpTo):
            return snapshot.size - snapshot.remaining
        return self.stats.bytes_read

    def head(self) -> list[tuple[int, str]]:
        """The first `HEAD_LINES` non-blank lines (for detection), without losing them."""
        head: list[tuple[int, str]] = []
        non_empty = 0
        if self.regular:
            lines = read_lines(self.path, ReadStats())
            try:
                for item in lines:
                    head.append(item)
                    non_empty += bool(item[1].strip())
                    if non_empty >= HEAD_LINES:
                        break
            finally:
                lines.close()  # type: ignore[attr-defined]
            return head
        assert self._live is not None
        for block in self._live:
            self._buffered.append(block)
            for i, text in enumerate(_block_lines(block)):
                head.append((block.first_line + i, text))
                non_empty += bool(text.strip())
                if non_empty >= HEAD_LINES:
                    return head
        return head

    def blocks(self) -> Iterator[Block]:
        assert self._live is not None
        for block in itertools.chain(self._buffered, self._live):
            if self.spool is not None and self.spool.active:
                self.spool.write(block)
            yield block
        self._buffered = []

    def lines(self) -> Iterator[tuple[int, str]]:
        """Every line as (line number, text), decoded as the parser sees it; decoding problems are
        counted in `stats`."""
        for block in self.blocks():
            for i, text in enumerate(_block_lines(block, self.stats)):
                yield block.first_line + i, text

    def restart(self) -> Iterator[Block]:
        """Blocks from the start again (the stats of the first reading are kept for a pipe)."""
        if self.regular:
            self.close()
            self.open()
            return self.blocks()
        assert self.spool is not None and self.spool.active
        spool = self.spool
        self.spool = None  # the replay itself is not spooled again

        def replay() -> Iterator[Block]:
            yield from spool.replay()
            assert self._live is not None
            yield from itertools.chain(self._buffered, self._live)
            spool.close()

        self._buffered = []
        return replay()

    def stop_spooling(self) -> None:
        if self.spool is not None:
            self.spool.stop()

    def finish(self) -> None:
        if self.stream is not None and self.regular:
            _note_changes(self.path, getattr(self.stream, "logparse_snapshot", None), self.stats)

    def close(self) -> None:
        if self.stream is not None and self.stream is not sys.stdin.buffer:
            self.stream.close()
        self.stream = None
        if self.spool is not None:
            self.spool.close()
