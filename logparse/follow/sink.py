"""The core's sink for a followed log: each block's tables become status, alerts and metrics.

The core calls `add` with each kind's rows of a block and `end_block` when the block is done (on
the thread that reads, between reads). The rows of the blocks read since the last update (at most
`UPDATE_EVERY_S` ago, or until nothing more is written) are kept
(`tables.LiveTables`), fed to the alert rules (`alerts.Watch`) and to the metrics
(`export.live.LiveSeries`), and a block with stats lines gives a status update. The phase and its
stable window come from the post-mortem's own analysis of the current engine start, which is run
again when new stats lines came and its cost allows: never more often than `ANALYSIS_EVERY_S`, nor
than keeps it under `ANALYSIS_SHARE` of a core (a run hours long costs more per analysis, and is
analysed less often). `idle` is called when nothing new was written: the silence rules run and the
analysis catches up, so the status settles on what the summary says of the lines so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl
import pyarrow as pa

from logparse.analysis import segments as segments_mod
from logparse.analysis.analyze import analyze_start
from logparse.follow.alerts import STATS_KINDS, Alert, Watch
from logparse.follow.live_metrics import QueuedSeries
from logparse.follow.status import Status, Window, current_numbers
from logparse.follow.tables import LiveTables

ANALYSIS_EVERY_S = 1.0
# Blocks read within this of the last update wait for the next one (or for the reader to catch
# up): a busy log is said twice a second, not once per read.
UPDATE_EVERY_S = 0.5
ANALYSIS_SHARE = 0.05  # of one core, at most, spent re-analysing while lines keep coming
# Once nothing was written for this long, the analysis catches up whatever it costs: a pause is
# where a phase ends, and one analysis per pause is cheap however long each one takes.
QUIET_S = 0.5


class Outputs(Protocol):
    """Where the status updates, alerts and metrics go."""

    def status(self, status: Status) -> None: ...
    def alert(self, alert: Alert) -> None: ...
    def metrics(self, live: QueuedSeries) -> None: ...


@dataclass
class Phase:
    """The current phase as the latest analysis found it."""

    number: int
    first_line: int
    concurrency: int | None
    window: Window | None


@dataclass
class FollowSink:
    """See the module's docstring. `analysis_options`: `min_samples`, `min_duration_s`, ... as
    `analyze_start` takes them."""

    source: str
    engine: str
    outputs: Outputs
    watch: Watch
    live_series: QueuedSeries | None = None
    analysis_options: dict[str, Any] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    tables: LiveTables = field(default_factory=LiveTables)
    lines: int = 0
    version: str | None = None
    phase: Phase | None = None
    analysis_cost_s: float = 0.0  # CPU seconds spent analysing, in all
    analyses: int = 0
    _pending: dict[str, list[pl.DataFrame]] = field(default_factory=dict)
    _unsaid: dict[str, list[pl.DataFrame]] = field(default_factory=dict)  # blocks since the last update
    _said_at: float | None = None
    _read_at: float | None = None  # when the last block with rows was read
    _analysed_at: float | None = None
    _last_cost: float = 0.0
    _stale: bool = False  # stats lines came since the last analysis
    _earlier_phases: int = 0  # phases of earlier engine starts (and of rows dropped)
    _segment_start: int = 1
    _dropped_seen: int = 0
    _last_phases: pl.DataFrame | None = None

    def add(self, kind: str, batch: Any) -> None:
        """One kind's rows of the block (an Arrow C-interface batch)."""
        frame = pl.from_arrow(pa.record_batch(batch))
        assert isinstance(frame, pl.DataFrame)
        if "time" in frame.columns and isinstance(frame.schema["time"], pl.Datetime):
            frame = frame.with_columns(pl.col("time").dt.convert_time_zone("UTC").dt.replace_time_zone(None))
        self._pending.setdefault(kind, []).append(frame)

    def end_block(self) -> None:
        """The block is done: its rows wait for the next update (at most `UPDATE_EVERY_S` away)."""
        for kind, frames in self._pending.items():
            self._unsaid.setdefault(kind, []).extend(frames)
        if self._pending:
            self._read_at = self.clock()
        self._pending = {}
        if self._update_due():
            self._update()

    def _update_due(self) -> bool:
        """At most one update per `UPDATE_EVERY_S`: rows read since wait at most that long."""
        return self._said_at is None or self.clock() - self._said_at >= UPDATE_EVERY_S

    def _update(self) -> None:
        """Keep the rows read since the last update, run the rules, update the status and metrics."""
        rows = {k: pl.concat(v, how="vertical_relaxed") for k, v in self._unsaid.items()}
        self._unsaid = {}
        self._said_at = self.clock()
        if not rows:
            return
        for kind, frame in rows.items():
            self.tables.add(kind, frame)
            self.lines = max(self.lines, int(frame["line_no"].max() or 0))  # type: ignore[arg-type]
        config = rows.get("config")
        if self.version is None and config is not None and "version" in config.columns:
            versions = config["version"].drop_nulls()
            self.version = str(versions[0]) if len(versions) else None
        for alert in self.watch.block(rows, self.tables, now=self.clock()):
            self.outputs.alert(alert)
        stats = any(kind in rows for kind in STATS_KINDS)
        if self.live_series is not None and (
            stats or any(k in rows for k in ("kv_pool", "spec_decode", "config"))
        ):
            self.live_series.add(rows, now=self.clock())
            self.outputs.metrics(self.live_series)
        if stats:
            self._stale = True
            if self._analysis_due():
                self._analyse()
            self.outputs.status(self.status())

    def idle(self) -> None:
        """Nothing new was written: the rows not yet said, the silence rules, and the analysis
        catches up."""
        if self._unsaid and self._update_due():
            self._update()
        for alert in self.watch.idle(now=self.clock()):
            self.outputs.alert(alert)
        if self._stale and self._analysis_due(quiet=True):
            self._analyse()
            self.outputs.status(self.status())

    def settle(self) -> None:
        """The core's dates are settled (nothing to do: a followed log is never read again)."""

    def close(self) -> list[str]:
        """The log ended: the last analysis, so the last status is the lines' whole story."""
        if self._unsaid:
            self._update()
        if self._stale:
            self._analyse()
            self.outputs.status(self.status())
        return []

    def abort(self) -> None:
        """The core gave up on this reading (an error follows)."""
        self._pending, self._unsaid = {}, {}

    def _analysis_due(self, *, quiet: bool = False) -> bool:
        """Whether to analyse again now: at most every `ANALYSIS_EVERY_S`, and while lines keep
        coming no more often than keeps the cost under `ANALYSIS_SHARE` of a core (`quiet`: called
        when nothing came; once nothing came for `QUIET_S`, the cost does not hold it back)."""
        if self._analysed_at is None:
            return True
        now = self.clock()
        wait = max(ANALYSIS_EVERY_S, self._last_cost / ANALYSIS_SHARE)
        if quiet and self._read_at is not None and now - self._read_at >= QUIET_S:
            wait = ANALYSIS_EVERY_S
        return now - self._analysed_at >= wait

    def _analyse(self) -> None:
        """The current engine start's phases and stable windows, as the summary finds them. An
        engine start that ended since the last analysis (a restart followed it) is analysed whole
        first, so its last phase is said and counted even when no analysis ran since its last line."""
        started = time.process_time()
        frames = self.tables.frames()
        found = segments_mod.find_segments(frames)
        for row in found.iter_rows(named=True):
            first, last = int(row["first_line"]), int(row["last_line"])
            if last < self._segment_start:
                continue
            if first > self._segment_start:  # the start analysed before is over
                if self._last_phases is not None:
                    self._earlier_phases += self._last_phases.height
                self._segment_start, self._last_phases = first, None
            said = self.phase
            self._analyse_start(frames, first, last)
            if row["segment"] < found.height and self.phase is not None and self.phase != said:
                self.outputs.status(self.status())  # the ended start's last phase, not said before
        self._stale = False
        self._last_cost = time.process_time() - started
        self.analysis_cost_s += self._last_cost
        self.analyses += 1
        self._analysed_at = self.clock()

    def _analyse_start(self, frames: dict[str, pl.DataFrame], first: int, last: int) -> None:
        """The phases of the engine start on lines `first`..`last`: the current phase and the
        alerts its samples give."""
        mine = segments_mod.segment_tables(frames, first, last)
        part = analyze_start(mine, engine=self.engine, source=self.source, **self.analysis_options)
        phases = part.phases
        if self.tables.dropped_to > self._dropped_seen and self._last_phases is not None:
            gone = self._last_phases.filter(pl.col("last_line") <= self.tables.dropped_to).height
            self._earlier_phases += gone
            self._dropped_seen = self.tables.dropped_to
        self._last_phases = phases
        self.phase = None
        if phases.height:
            row = phases.row(-1, named=True)
            number = self._earlier_phases + phases.height
            windows = part.windows.filter(pl.col("phase") == row["phase"])
            window = Window.of(windows.row(0, named=True), number) if windows.height else None
            self.phase = Phase(number, int(row["first_line"]), row["concurrency"], window)
            samples = part.samples.filter(pl.col("phase") == row["phase"])
            for alert in self.watch.analysed(number, int(row["first_line"]), window, samples):
                self.outputs.alert(alert)

    def status(self) -> Status:
        """The status now: the latest stats lines' numbers, the phase and its window."""
        numbers = current_numbers(self.tables.frames(), engine=self.engine)
        phase = self.phase
        return Status(
            source=self.source,
            engine=self.engine,
            version=self.version,
            lines=self.lines,
            phase=None if phase is None else phase.number,
            concurrency=None if phase is None else phase.concurrency,
            window=None if phase is None else phase.window,
            **numbers,
        )


__all__ = ["ANALYSIS_EVERY_S", "QUIET_S", "FollowSink", "Outputs", "Phase"]
