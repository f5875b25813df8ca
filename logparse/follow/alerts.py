"""Alerts while a log is followed: what a person watching it would want to be told at once.

| alert | severity | when |
|---|---|---|
| `oom` | error / warning | an out-of-memory line (every form the grammar types as `oom`); lines within `BURST_S` of the previous one are one alert; error when one was not recovered |
| `preemptions` | warning | preemptions / retractions (vLLM V0 warnings, V1 `Preemptions: N`, SGLang retract lines): one alert per burst (none within `BURST_S` before) |
| `stall` | error | no stats line for `STALL_FACTOR` times the log's own stats interval while requests were running: said when the next stats line shows the gap, or (vLLM, which prints while it has requests) as soon as the silence lasts that long |
| `throughput_drop` | warning | a sample of the phase with its N running and no prefill decodes more than `drop` below the phase's trusted stable window |
| `restart` | warning | a new engine start in the log (`segments.find_segments`) |
| `startup_failure` | error | a start that never said it was ready, then an out-of-memory error, ERROR lines or a traceback (`startfail.start_not_ready`) |
| `new_warning` | info | a warning family (the rule's category, else the message's template) seen for the first time |
"""

from __future__ import annotations

import datetime as dt
import itertools
import statistics
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from logparse.analysis import coldstart, segments, startfail
from logparse.analysis.diagnostics import OOM_ECHO_S
from logparse.follow.status import Window
from logparse.follow.tables import LiveTables
from logparse.mining.masking import mask_body

BURST_S = 60.0  # events closer than this (log time) to the previous one belong to its burst
STALL_FACTOR = 3.0  # a silence of this many stats intervals while requests run is a stall
DROP = 0.2  # a decode sample this much below the stable window is a throughput drop
RECENT_INTERVALS = 50  # the stats intervals the log's usual interval is the median of
STATS_KINDS = ("engine_stats", "decode_batch", "prefill_batch")


@dataclass(frozen=True)
class Alert:
    """One alert: what, how bad, the event behind it and its numbers."""

    alert: str
    severity: str
    kind: str  # the event kind of the line behind it
    line_no: int | None
    time: dt.datetime | None
    message: str
    values: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of the alert (`"type": "alert"`)."""
        time = None
        if self.time is not None:
            aware = self.time if self.time.tzinfo else self.time.replace(tzinfo=dt.UTC)
            time = aware.astimezone(dt.UTC).isoformat()
        return {
            "type": "alert",
            "alert": self.alert,
            "severity": self.severity,
            "kind": self.kind,
            "time": time,
            "line_no": self.line_no,
            "message": self.message,
            "values": self.values,
        }

    def line(self) -> str:
        """The plain one-line form."""
        where = f"line {self.line_no}" if self.line_no is not None else "now"
        return f"ALERT {self.severity} {self.alert} ({where}): {self.message}"


@dataclass
class _LastStats:
    line_no: int
    time: dt.datetime | None
    running: int
    kind: str
    arrived: float  # monotonic seconds when its block was read


@dataclass
class Watch:
    """The alert rules and what they remember between blocks."""

    engine: str
    drop: float = DROP
    last_oom: dt.datetime | None = None
    last_preemption: dt.datetime | None = None
    families: set[str] = field(default_factory=set)
    starts: int = 0  # the first line of the latest engine start seen
    failed_starts: set[int] = field(default_factory=set)
    times: deque[dt.datetime] = field(default_factory=lambda: deque(maxlen=RECENT_INTERVALS + 1))
    last: _LastStats | None = None
    stalled: bool = False  # a stall was said for the current silence
    reference: dict[int, Window] = field(default_factory=dict)  # phase start line -> its window
    dropping: bool = False
    checked_line: int = 0

    def interval(self) -> float | None:
        """The log's usual stats interval (s): the median gap between its recent stats stamps."""
        stamps = sorted(set(self.times))
        gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(stamps)]
        return statistics.median(gaps) if len(gaps) >= 3 else None

    def block(self, rows: Mapping[str, pl.DataFrame], tables: LiveTables, *, now: float) -> list[Alert]:
        """The alerts of one block's rows (`tables` already holds them)."""
        out: list[Alert] = []
        out += self._ooms(rows.get("oom"))
        out += self._preemptions(rows)
        out += self._warnings(rows.get("warning"))
        out += self._stalls(rows, now=now)
        if any(kind in rows for kind in ("config", "weight_load", "memory")):
            out += self._restarts(tables)
        if self._crash_evidence(rows):
            out += self._failed_start(tables)
        return sorted(out, key=lambda a: a.line_no or 0)

    def _ooms(self, oom: pl.DataFrame | None) -> list[Alert]:
        if oom is None or oom.is_empty():
            return []
        out = []
        for row in oom.sort("line_no").iter_rows(named=True):
            if _close(self.last_oom, row["time"], BURST_S):
                self.last_oom = row["time"] or self.last_oom
                continue
            self.last_oom = row["time"]
            burst = oom.filter((pl.col("line_no") >= row["line_no"]) & _within(row["time"], BURST_S))
            fatal = burst.filter(~pl.col("recovered").fill_null(False))
            what = "out of memory" if fatal.height else "out of memory, recovered"
            out.append(
                Alert(
                    "oom",
                    "error" if fatal.height else "warning",
                    "oom",
                    row["line_no"],
                    row["time"],
                    f"{what} ({burst.height} line(s) in this block): {_clip(row.get('detail') or '')}",
                    {"lines": burst.height, "unrecovered": fatal.height, "echo_window_s": OOM_ECHO_S},
                )
            )
        return out

    def _preemptions(self, rows: Mapping[str, pl.DataFrame]) -> list[Alert]:
        events = []
        pre = rows.get("preemption")
        if pre is not None and not pre.is_empty():
            count = pl.col("count").fill_null(1) if "count" in pre.columns else pl.lit(1)
            events.append(
                pre.select(
                    "line_no", "time", count.cast(pl.Int64).alias("n"), pl.lit("preemption").alias("kind")
                )
            )
        stats = rows.get("engine_stats")
        if stats is not None and "preemptions" in stats.columns:
            hit = stats.filter(pl.col("preemptions").fill_null(0) > 0)
            events.append(
                hit.select(
                    "line_no",
                    "time",
                    pl.col("preemptions").cast(pl.Int64).alias("n"),
                    pl.lit("engine_stats").alias("kind"),
                )
            )
        if not events:
            return []
        frame = pl.concat(events).sort("line_no")
        out = []
        for row in frame.iter_rows(named=True):
            if _close(self.last_preemption, row["time"], BURST_S):
                self.last_preemption = row["time"] or self.last_preemption
                continue
            self.last_preemption = row["time"]
            burst = frame.filter((pl.col("line_no") >= row["line_no"]) & _within(row["time"], BURST_S))
            total = int(burst["n"].sum())
            what = "retraction(s)" if self.engine == "sglang" else "preemption(s)"
            out.append(
                Alert(
                    "preemptions",
                    "warning",
                    row["kind"],
                    row["line_no"],
                    row["time"],
                    f"{total} {what} ({burst.height} line(s) in this block): requests are evicted and recomputed",
                    {"count": total, "lines": burst.height},
                )
            )
        return out

    def _warnings(self, warning: pl.DataFrame | None) -> list[Alert]:
        if warning is None or warning.is_empty():
            return []
        out = []
        for row in warning.sort("line_no").iter_rows(named=True):
            family = _family(row.get("category"), row.get("message") or "")
            if family in self.families:
                continue
            self.families.add(family)
            out.append(
                Alert(
                    "new_warning",
                    "info",
                    "warning",
                    row["line_no"],
                    row["time"],
                    f"first warning of its kind ({row.get('category') or 'other'}): {_clip(row.get('message') or '')}",
                    {"family": family},
                )
            )
        return out

    def _stalls(self, rows: Mapping[str, pl.DataFrame], *, now: float) -> list[Alert]:
        parts = [
            rows[k].select("line_no", "time", pl.col(_RUNNING[k]).alias("running"), pl.lit(k).alias("kind"))
            for k in STATS_KINDS
            if k in rows and _RUNNING[k] in rows[k].columns
        ]
        if not parts:
            return []
        frame = pl.concat(parts).sort("line_no")
        step = self.interval()  # the usual interval before this block
        before = self.last
        out = []
        if step:
            # each row against the one before it (the block's first against the last one said)
            head = pl.DataFrame(
                [[before.line_no, before.time, before.running, before.kind]] if before else [],
                schema=frame.schema,
                orient="row",
            )
            paired = pl.concat([head.cast(frame.schema), frame]).with_columns(
                pl.col("line_no").shift(1).alias("_line"),
                pl.col("time").shift(1).alias("_time"),
                pl.col("running").shift(1).fill_null(0).alias("_running"),
                pl.col("kind").shift(1).alias("_kind"),
            )
            if before is not None:
                paired = paired.slice(1)
            gap = (pl.col("time") - pl.col("_time")).dt.total_microseconds() / 1_000_000
            # SGLang prints nothing while idle: only a Decode line after the gap (no new prefill)
            # shows the same requests were decoding through it
            busy = (pl.col("_running") > 0) & (
                pl.lit(self.engine != "sglang") | (pl.col("kind") == "decode_batch")
            )
            hits = (
                paired.with_row_index("_at")
                .with_columns(gap.alias("_gap"))
                .filter((pl.col("_gap") > STALL_FACTOR * step) & busy)
            )
            for hit in hits.iter_rows(named=True):
                if hit["_at"] == 0 and self.stalled:
                    continue  # said while the log was silent
                was = _LastStats(hit["_line"], hit["_time"], int(hit["_running"]), hit["_kind"], now)
                out.append(self._stall(was, hit["_gap"], step, resumed=hit["line_no"]))
        self.times.extend(frame["time"].drop_nulls().tail(RECENT_INTERVALS + 1).to_list())
        last = frame.row(-1, named=True)
        self.last = _LastStats(last["line_no"], last["time"], int(last["running"] or 0), last["kind"], now)
        self.stalled = False
        return out

    def idle(self, *, now: float) -> list[Alert]:
        """Nothing new was read: a vLLM log silent for too long while requests run is a stall."""
        step, before = self.interval(), self.last
        if self.engine != "vllm" or self.stalled or before is None or not step or before.running <= 0:
            return []
        silent = now - before.arrived
        if silent <= STALL_FACTOR * step:
            return []
        self.stalled = True
        return [self._stall(before, silent, step, resumed=None)]

    def _stall(self, before: _LastStats, gap: float, step: float, *, resumed: int | None) -> Alert:
        if resumed is None:
            how = f"no stats line for {gap:,.0f} s so far"
        else:
            how = f"no stats line for {gap:,.0f} s (lines {before.line_no}–{resumed})"
        return Alert(
            "stall",
            "error",
            before.kind,
            before.line_no,
            before.time,
            f"{how}, {STALL_FACTOR:g}× the usual {step:,.0f} s interval, while {before.running} request(s) were running",
            {
                "silence_s": round(gap, 3),
                "interval_s": step,
                "running": before.running,
                "resumed_line": resumed,
            },
        )

    def _restarts(self, tables: LiveTables) -> list[Alert]:
        found = segments.find_segments(tables.frames())
        out = []
        for row in found.iter_rows(named=True):
            first = int(row["first_line"])
            if row["segment"] > 1 and first > self.starts:
                out.append(
                    Alert(
                        "restart",
                        "warning",
                        "config",
                        first,
                        _time_at(tables, first),
                        f"the engine started again at line {first} (start {row['segment']} of what was read)",
                        {"start": int(row["segment"])},
                    )
                )
            self.starts = max(self.starts, first)
        return out

    def _crash_evidence(self, rows: Mapping[str, pl.DataFrame]) -> bool:
        if "oom" in rows:
            return True
        if any("level" in f.columns and f["level"].is_in(["ERROR", "CRITICAL"]).any() for f in rows.values()):
            return True
        raw = rows.get("unparsed")
        return raw is not None and raw["raw"].str.contains(startfail.TRACEBACK, literal=True).any()

    def _failed_start(self, tables: LiveTables) -> list[Alert]:
        frames = tables.frames()
        found = segments.find_segments(frames)
        last = found.row(-1, named=True)
        if last["first_line"] in self.failed_starts:
            return []
        mine = segments.segment_tables(frames, last["first_line"], last["last_line"])
        if any(kind in mine and mine[kind].height for kind in STATS_KINDS):
            return []  # it served: not a failed start
        finding = startfail.start_not_ready(mine, ready=coldstart.ready_row(mine), samples=pl.DataFrame())
        if finding is None or finding["severity"] != "error":
            return []
        self.failed_starts.add(last["first_line"])
        return [
            Alert(
                "startup_failure",
                "error",
                "engine_init",
                finding["line_no"],
                _time_at(tables, finding["line_no"]),
                finding["message"],
                {"start": int(last["segment"])},
            )
        ]

    def analysed(
        self, phase: int, phase_start: int, window: Window | None, samples: pl.DataFrame
    ) -> list[Alert]:
        """After an analysis: the phase's samples since the last look against its stable window."""
        if window is not None and window.trusted and not self.dropping:
            self.reference[phase_start] = window
        ref = self.reference.get(phase_start)
        fresh = samples.filter(pl.col("line_no") > self.checked_line).sort("line_no")
        if fresh.height:
            self.checked_line = int(fresh["line_no"].max())  # type: ignore[arg-type]
        if ref is None:
            return []
        out = []
        floor = ref.gen_tps * (1 - self.drop)
        for row in fresh.iter_rows(named=True):
            if row["running"] != ref.concurrency or row["prefill"] or row["gen_tps"] is None:
                continue
            low = row["gen_tps"] < floor
            if low and not self.dropping:
                below = 1 - row["gen_tps"] / ref.gen_tps
                out.append(
                    Alert(
                        "throughput_drop",
                        "warning",
                        "engine_stats" if self.engine == "vllm" else "decode_batch",
                        row["line_no"],
                        row["time"],
                        f"phase {phase}: {row['gen_tps']:,.1f} tok/s, {below:.0%} below the stable "
                        f"{ref.gen_tps:,.1f} tok/s of N={ref.concurrency} (more than {self.drop:.0%})",
                        {
                            "gen_tps": row["gen_tps"],
                            "stable_gen_tps": ref.gen_tps,
                            "below": below,
                            "phase": phase,
                        },
                    )
                )
            self.dropping = low
        return out


_RUNNING = {"engine_stats": "running", "decode_batch": "running_req", "prefill_batch": "running_req"}


def _family(category: str | None, message: str) -> str:
    """A warning's family: its rule's category, else its message with the values masked."""
    if category and category != "other":
        return category
    return "other: " + " ".join(mask_body(message).keys())


def _close(before: dt.datetime | None, now: dt.datetime | None, seconds: float) -> bool:
    if before is None or now is None:
        return before is not None and now is None
    return abs((now - before).total_seconds()) <= seconds


def _within(start: dt.datetime | None, seconds: float) -> pl.Expr:
    if start is None:
        return pl.lit(True)
    return pl.col("time").is_null() | (pl.col("time") <= start + dt.timedelta(seconds=seconds))


def _time_at(tables: LiveTables, line: int) -> dt.datetime | None:
    for frame in tables.frames().values():
        if "line_no" in frame.columns and "time" in frame.columns:
            hit = frame.filter(pl.col("line_no") == line)
            if hit.height:
                return hit["time"][0]
    return None


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["Alert", "Watch"]
