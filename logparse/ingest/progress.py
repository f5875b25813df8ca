"""A one-line progress bar on stderr (bytes, MB/s, ETA), only for a terminal and a large input."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

MIN_BYTES = 50 << 20  # smaller inputs finish before a bar is worth drawing
INTERVAL_S = 0.2
WIDTH = 24


def wanted(total: int | None, stream: TextIO | None = None) -> bool:
    """A bar only when stderr is a terminal and the input is known to be large."""
    stream = stream or sys.stderr
    if os.environ.get("LOGPARSE_NO_PROGRESS"):
        return False
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return bool(tty and total is not None and total >= MIN_BYTES)


class Progress:
    """Call with (bytes done, total bytes); `close()` clears the line."""

    def __init__(self, label: str = "", stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.last < INTERVAL_S and (total is None or done < total):
            return
        self.last = now
        elapsed = max(now - self.start, 1e-6)
        rate = done / elapsed
        if total:
            frac = min(1.0, done / total)
            filled = int(frac * WIDTH)
            bar = "#" * filled + "-" * (WIDTH - filled)
            eta = (total - done) / rate if rate > 0 else 0.0
            text = (
                f"{self.label}[{bar}] {frac:6.1%} {done / 1e6:,.0f}/{total / 1e6:,.0f} MB "
                f"{rate / 1e6:,.0f} MB/s ETA {_clock(eta)}"
            )
        else:
            text = f"{self.label}{done / 1e6:,.0f} MB {rate / 1e6:,.0f} MB/s"
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


def _clock(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


__all__ = ["MIN_BYTES", "Progress", "wanted"]
