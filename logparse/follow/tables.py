"""The rows a followed log gave so far, a frame per kind, the oldest dropped past a bound."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

# Rows kept per kind for the live analysis: enough for hours of stats lines, bounded whatever the
# log's rate. Past twice this many, the oldest are dropped down to it.
LIVE_ROWS = 100_000


@dataclass
class LiveTables:
    """Each kind's rows in line order; past `limit` rows a kind the oldest are dropped (the
    analysis of a live run looks at its recent part; the Parquet tables keep everything)."""

    limit: int = LIVE_ROWS
    parts: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    heights: dict[str, int] = field(default_factory=dict)
    dropped_to: int = 0  # the last line number dropped from any kind (0: none)
    _whole: dict[str, pl.DataFrame] = field(default_factory=dict)

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        """Append a block's rows of `kind`."""
        if frame.is_empty():
            return
        self.parts.setdefault(kind, []).append(frame)
        self.heights[kind] = self.heights.get(kind, 0) + frame.height
        self._whole.pop(kind, None)
        if self.heights[kind] > 2 * self.limit:
            whole = self.frame(kind)
            cut = whole.head(whole.height - self.limit)
            self.dropped_to = max(self.dropped_to, int(cut["line_no"].max()))  # type: ignore[arg-type]
            kept = whole.tail(self.limit)
            self.parts[kind], self.heights[kind], self._whole[kind] = [kept], kept.height, kept

    def frame(self, kind: str) -> pl.DataFrame:
        """The rows of `kind` kept so far (empty when none)."""
        if kind not in self._whole:
            parts = self.parts.get(kind)
            if not parts:
                return pl.DataFrame()
            whole = pl.concat(parts, how="vertical_relaxed") if len(parts) > 1 else parts[0]
            self.parts[kind] = [whole]
            self._whole[kind] = whole
        return self._whole[kind]

    def frames(self) -> dict[str, pl.DataFrame]:
        """Every kind's rows kept so far."""
        return {kind: self.frame(kind) for kind in self.parts}


__all__ = ["LIVE_ROWS", "LiveTables"]
