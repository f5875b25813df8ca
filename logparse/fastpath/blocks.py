"""Blocks of complete lines for the fast path, and a spool to read a pipe's blocks again.

The block reader itself (`iter_blocks`, `Block`, `BLOCK_BYTES`) lives in `logparse.reader`, where
`iter_lines` decodes its blocks line by line: one implementation of reading, newline splitting and
cutting over-long lines. It is re-exported here for the fast path.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

from logparse.reader import BLOCK_BYTES, Block, iter_blocks


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
