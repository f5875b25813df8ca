"""The engine's metrics of a followed log, brought up to date when they are read.

Each block's rows wait in a queue; a scrape of `/metrics` (on the server's thread) folds the
queued rows into the `LiveSeries` and reads its series. The fold's cost is per call much more
than per row, so a busy log costs one fold per scrape (or per `FOLD_EVERY_S` when nobody
scrapes, which bounds the queue), not one per block read. The series are those `LiveSeries`
gives for the same lines: its result does not depend on how the lines are cut into blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from logparse.export.live import LiveSeries
from logparse.export.series import Series

FOLD_EVERY_S = 5.0  # the queued rows are folded at least this often


@dataclass
class QueuedSeries:
    """`LiveSeries` behind a queue of blocks (see the module's docstring); thread-safe."""

    live: LiveSeries
    queued: list[Mapping[str, pl.DataFrame]] = field(default_factory=list)
    folded_at: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rows: Mapping[str, pl.DataFrame], *, now: float) -> None:
        """Queue one update's rows (kind -> frame, after every earlier update's)."""
        with self._lock:
            self.queued.append(rows)
            if self.folded_at is None or now - self.folded_at >= FOLD_EVERY_S:
                self._fold()
                self.folded_at = now

    def series(self) -> list[Series]:
        """Every series with its last sample, the queued rows folded in first."""
        with self._lock:
            self._fold()
            return self.live.series()

    def _fold(self) -> None:
        if not self.queued:
            return
        kinds = {kind for rows in self.queued for kind in rows}
        merged = {}
        for kind in kinds:
            frames = [rows[kind] for rows in self.queued if kind in rows]
            merged[kind] = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
        self.queued = []
        self.live.add(merged)


__all__ = ["FOLD_EVERY_S", "QueuedSeries"]
