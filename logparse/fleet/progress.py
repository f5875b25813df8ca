"""One progress line on stderr for a fleet: runs done / failed / remaining and MB/s (a terminal only)."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from logparse.fleet.task import DONE, SKIPPED, RunResult


def progress_wanted(stream: TextIO | None = None) -> bool:
    """Whether stderr is a terminal (and `LOGPARSE_NO_PROGRESS` unset)."""
    stream = stream or sys.stderr
    if os.environ.get("LOGPARSE_NO_PROGRESS"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class FleetProgress:
    """Call with each run's result; `close()` clears the line. MB/s counts the input bytes of the
    runs read so far over the time since the start (skipped runs are not read: not counted)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.done = self.skipped = self.failed = 0
        self.bytes = 0
        self.drawn = False

    def __call__(self, result: RunResult) -> None:
        if result.status == DONE:
            self.done += 1
            self.bytes += result.bytes or 0
        elif result.status == SKIPPED:
            self.skipped += 1
        else:
            self.failed += 1
        self.stream.write("\r" + self.line() + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def line(self) -> str:
        """`runs: 12 done, 3 skipped, 1 failed, 184 remaining of 200; 45.3 MB/s`."""
        left = self.total - self.done - self.skipped - self.failed
        rate = self.bytes / max(time.monotonic() - self.start, 1e-6) / 1e6
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        return (
            f"runs: {self.done} done{skipped}, {self.failed} failed, {left} remaining of {self.total}; "
            f"{rate:,.1f} MB/s"
        )

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


__all__ = ["FleetProgress", "progress_wanted"]
