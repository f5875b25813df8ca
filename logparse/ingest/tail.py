"""A log that is still being written, as a binary stream the compiled core reads (`logparse follow`).

`FollowedFile` follows a path as `tail -F` does: it returns what the file holds, then waits (polling)
for appended bytes; a rotation (the path renamed away and a new file created in its place) is
followed to the new file once the old one is read to its end, a truncation (`copytruncate`) from
the start again. `FollowedPipe` reads standard input (`docker logs -f … | logparse follow -`) until
it ends. Both return b"" to end the stream: the file deleted, the pipe closed, or `stop` set (by a
signal handler: SIGTERM, Ctrl-C).

Only complete lines are handed out: the bytes after the last newline wait for theirs. A line that
ends the input for good (a deleted file, the end of a pipe) is handed out without one; one left
unfinished when following is stopped is not read (the writer may still finish it), and is said.
A rotated or truncated file's unfinished last line is ended there, so it is never glued to the
next file's first line.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from logparse.errors import InputError
from logparse.escape import for_terminal

POLL_S = 0.2  # how long to wait for appended bytes before looking again
READ_BYTES = 1 << 20  # the most read from the file at a time
# An unfinished line held this long is handed on anyway: the core cuts over-long lines itself.
MAX_HELD_BYTES = 64 << 20


class _Lines:
    """The bytes read so far, split into complete lines ready to hand out and the unfinished rest."""

    def __init__(self, stop: threading.Event, on_idle: Callable[[], None] | None, poll_s: float) -> None:
        self.stop = stop
        self.on_idle = on_idle
        self.poll_s = poll_s
        self.ready = bytearray()
        self.partial = bytearray()
        self.ended = False
        self.caught_up = False  # the last read met the end of what was written
        self.notes: list[str] = []  # what happened to the input (rotation, truncation, the end)
        self.lines_ended_here = 0  # unfinished last lines of a rotated / truncated file, ended here

    def take(self, data: bytes) -> None:
        """Add bytes read: the complete lines become ready, the rest waits for its newline."""
        end = data.rfind(b"\n")
        if end < 0:
            self.partial += data
            if len(self.partial) > MAX_HELD_BYTES:
                self.ready += self.partial
                self.partial.clear()
            return
        self.ready += self.partial
        self.ready += data[: end + 1]
        self.partial = bytearray(data[end + 1 :])

    def end_line(self) -> None:
        """The input the unfinished line came from is done with: end that line here."""
        if self.partial:
            self.ready += self.partial + b"\n"
            self.partial.clear()
            self.lines_ended_here += 1

    def finish(self, *, keep_partial: bool) -> None:
        """No more bytes will come: hand out the unfinished line (`keep_partial`) or drop it."""
        if self.partial:
            if keep_partial:
                self.ready += self.partial
            else:
                self.notes.append(
                    f"stopped with {len(self.partial):,} bytes of an unfinished last line (no newline "
                    "yet): not read"
                )
            self.partial.clear()
        self.ended = True

    def fill(self) -> bool:
        """Read what is there now; False when nothing was."""
        raise NotImplementedError

    def pause(self) -> None:
        """Nothing came: tell the caller (`on_idle`), then wait a poll interval for more."""
        if self.on_idle is not None:
            self.on_idle()
        if not self.ended:
            self.stop.wait(self.poll_s)

    def read1(self, n: int = -1) -> bytes:
        """Up to `n` bytes of complete lines, waiting for them; b"" at the end."""
        while not self.ready:
            if self.ended:
                return b""
            if self.stop.is_set():
                self.finish(keep_partial=False)
            elif not self.fill():
                self.pause()
        size = len(self.ready) if n is None or n < 0 else min(n, len(self.ready))
        out = bytes(self.ready[:size])
        del self.ready[:size]
        return out

    read = read1

    def head_lines(self, wanted: int) -> list[str]:
        """The complete lines read so far, decoded (read on, without waiting, until there are
        `wanted` of them or nothing more is written); they stay to be read."""
        while self.ready.count(b"\n") < wanted and not self.ended and not self.stop.is_set():
            if not self.fill():
                break
        text = bytes(self.ready).decode("utf-8", errors="replace")
        return text.split("\n")[: text.count("\n")]


class FollowedFile(_Lines):
    """A log file followed as `tail -F` does (see the module's docstring)."""

    def __init__(
        self,
        path: str | Path,
        *,
        stop: threading.Event,
        on_idle: Callable[[], None] | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        super().__init__(stop, on_idle, poll_s)
        self.path = Path(path)
        self.name = str(path)
        self.file = self._open()
        stat = os.fstat(self.file.fileno())
        self.identity = (stat.st_dev, stat.st_ino)
        self.position = 0
        self.moved_away = False

    def _open(self) -> BinaryIO:
        shown = for_terminal(self.name)
        try:
            if self.path.is_dir():
                raise InputError(f"{shown}: is a directory; give the log file inside it")
            return open(self.path, "rb", buffering=0)  # held open while followed
        except FileNotFoundError:
            raise InputError(f"{shown}: no such file") from None
        except OSError as exc:
            raise InputError(f"{shown}: cannot open: {exc.strerror or exc}") from None

    def fill(self) -> bool:
        data = self.file.read(READ_BYTES)
        if data:
            self.position += len(data)
            self.caught_up = False
            self.take(data)
            return True
        self.caught_up = True
        return self._look()

    def _look(self) -> bool:
        """At the end of the file: was it deleted, rotated or truncated? True when something
        changed (there may be more to read)."""
        mine = os.fstat(self.file.fileno())
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            if mine.st_nlink == 0:
                self.notes.append(f"{self.name} was deleted: following ends")
                self.finish(keep_partial=True)
                return True
            if not self.moved_away:
                self.moved_away = True
                self.notes.append(f"{self.name} was moved away: waiting for a new file there")
            return False
        except OSError:
            return False
        if (now.st_dev, now.st_ino) != self.identity:
            if self.file.read(1):  # written to after we looked: read the old file to its end first
                self.file.seek(-1, os.SEEK_CUR)
                return True
            self.end_line()
            self.file.close()
            self.file = self._open()
            stat = os.fstat(self.file.fileno())
            self.identity, self.position, self.moved_away = (stat.st_dev, stat.st_ino), 0, False
            self.notes.append(f"{self.name} was rotated: following the new file from its start")
            return True
        if mine.st_size < self.position:
            self.end_line()
            self.file.seek(0)
            self.position = 0
            self.notes.append(f"{self.name} was truncated: reading it again from its start")
            return True
        return False

    def close(self) -> None:
        """Close the file."""
        self.file.close()


class FollowedPipe(_Lines):
    """Standard input (or any pipe), read until it ends; `stop` ends it early."""

    def __init__(
        self,
        stream: BinaryIO,
        *,
        stop: threading.Event,
        on_idle: Callable[[], None] | None = None,
        poll_s: float = POLL_S,
        name: str = "standard input",
    ) -> None:
        super().__init__(stop, on_idle, poll_s)
        self.stream = stream
        self.name = name
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None  # a Python object (a test's BytesIO): read it as it is

    def fill(self) -> bool:
        if self.fd is not None:
            readable, _, _ = select.select([self.fd], [], [], 0)
            if not readable:
                self.caught_up = True
                return False
            data = os.read(self.fd, READ_BYTES)
        else:
            reader = getattr(self.stream, "read1", self.stream.read)
            data = reader(READ_BYTES)
        if not data:
            self.caught_up = True
            self.notes.append(f"{self.name} ended")
            self.finish(keep_partial=True)
            return True
        self.caught_up = False
        self.take(data)
        return True

    def close(self) -> None:
        """Nothing to close: the pipe belongs to the caller."""


__all__ = ["POLL_S", "FollowedFile", "FollowedPipe"]
