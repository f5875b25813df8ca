"""The one ingest: a log handed to the compiled core, which reads, parses, dates and writes it.

Python opens the log through the core (`_core.Reader`), reads its head to choose the engine,
then makes one call (`Core.ingest`): the core reads every block, parses blocks on threads (the GIL
released), resolves `time` in line order (restarting from the first block when the log itself says
the first lines were misdated), adds the derived columns and writes Parquet (or keeps the tables
in memory). Python is called back once per block, for progress and cancellation only.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO, cast

import pyarrow as pa

from logparse.engine import compiled
from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.grammar import Grammar
from logparse.ingest import reader as reading
from logparse.ingest.detect import HEAD_LINES, detect_engine
from logparse.ingest.reader import ReadStats, open_reader
from logparse.ingest.times import DEFAULT_ZONE, TimeFacts, check_zone
from logparse.store import remote, tables

PARALLEL_MIN_BYTES = 16 << 20  # below this, a few blocks: a second thread has little to do


class Sink(Protocol):
    """A Python receiver of every finished batch, block by block (`ingest --format jsonl`)."""

    def add(self, kind: str, batch: pa.RecordBatch) -> None: ...
    def end_block(self) -> None: ...
    def close(self) -> list[str]: ...
    def abort(self) -> None: ...


@dataclass
class Outcome:
    """What reading a log learned; `tables` holds the batches when they were kept in memory."""

    source: str
    engine: str
    scores: dict[str, float]
    stats: ReadStats
    counts: dict[str, int]
    kinds: list[str] = field(default_factory=list)
    times: TimeFacts = field(default_factory=TimeFacts)
    extra_keys: dict[tuple[str, str], int] = field(default_factory=dict)  # (rule, key) -> lines
    rule_counts: dict[tuple[str, str | None], int] = field(default_factory=dict)  # (kind, rule) -> lines
    restarts: int = 0
    span: tuple[dt.datetime, dt.datetime] | None = None
    ranks: list[str] = field(default_factory=list)
    tables: dict[str, list[pa.RecordBatch]] = field(default_factory=dict)
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage of the core (threads summed)


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def choose_engine(grammar: Grammar, engine: str, head: list[str], name: str) -> tuple[str, dict[str, float]]:
    """The engine to read with: `engine`, or the one detected from the head lines."""
    if engine != "auto":
        if engine not in grammar.engines:
            known = ", ".join(sorted(grammar.engines))
            raise InputError(f"unknown engine {engine!r}; known engines: {known}")
        return engine, {engine: 1.0}
    if not any(text.strip() for text in head):
        # Nothing but blank lines: no engine to find, and any grammar gives the same tables.
        return sorted(grammar.engines)[0], {}
    return detect_engine(grammar, head, name=for_terminal(name))


class Cancelled(Exception):
    """The run was asked to stop (`stream_log(cancel=...)`)."""


def stream_log(
    path: str | Path | BinaryIO,
    grammar: Grammar,
    *,
    folder: Path | None = None,
    layout: str = "flat",
    memory: bool = True,
    sink: Sink | None = None,
    jsonl: TextIO | None = None,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    workers: int | None = None,
    block_bytes: int | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    cancel: threading.Event | None = None,
    mtime: dt.datetime | None = None,
    name: str | None = None,
    once: bool = False,
) -> Outcome:
    """Read `path` (a path, or a binary stream named `name`) into Parquet files in `folder`
    (`layout` `flat` or `hive`), else into memory (`Outcome.tables`; `memory=False` with a `sink`
    keeps nothing), every batch also to `sink`, and every event as a JSON line to `jsonl` (written
    by the core, a block at a time).

    `workers` threads parse blocks (None: the usable cores for inputs of `PARALLEL_MIN_BYTES` or
    more, else 1); the tables do not depend on it. `cancel`, set by another thread, stops the run at
    the next block. `once` reads a stream that cannot be read again (a log followed live): nothing
    is spooled, and stamps without a year take `year`, else the year of `mtime` (else today's), as
    known (a full date met later dates the lines after it; none before it is read again)."""
    zone = check_zone(tz) if tz else DEFAULT_ZONE
    reader = open_reader(path, block_bytes, name=name, spool=not once)
    if workers is None:
        env = os.environ.get("LOGPARSE_WORKERS")
        workers = int(env) if env else (usable_cores() if (reader.size or 0) >= PARALLEL_MIN_BYTES else 1)
    head = reader.head(HEAD_LINES) if engine == "auto" else []
    chosen, scores = choose_engine(grammar, engine, head, reader.name)
    anchor = mtime if mtime is not None else _mtime(path)
    options: dict[str, Any] = {
        "row_group_rows": tables.ROW_GROUP_ROWS,
        "part_row_groups": tables.PART_ROW_GROUPS,
        "zone": zone,
        "year": year,
        "mtime_us": None if anchor is None else (anchor - _EPOCH) // dt.timedelta(microseconds=1),
        "today": _today(zone).isoformat(),
        "workers": max(1, workers),
    }
    if once:
        options["known_year"] = year if year is not None else _local_date(anchor, zone).year

    def stopped(done: int, total: int | None) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("stopped before the end of the log")
        if progress is not None:
            progress(done, total)

    started = time.perf_counter()
    out = compiled(grammar, chosen).ingest(
        reader,
        options,
        folder=None if folder is None else str(folder),
        layout=layout,
        memory=memory,
        sink=sink,
        jsonl=jsonl,
        progress=stopped,
    )
    if os.environ.get("LOGPARSE_PROFILE"):
        _print_profile(cast(dict[str, float], out["stages"]), time.perf_counter() - started, reader.size)
    times = out["times"]
    span = out["span"]
    return Outcome(
        source=reader.name,
        engine=chosen,
        scores=scores,
        stats=ReadStats(**out["stats"]),
        counts=dict(out["counts"]),
        kinds=list(out["kinds"]),
        times=TimeFacts(**times),
        extra_keys={(rule, key): n for rule, key, n in out["extra_keys"]},
        rule_counts={(kind, rule): n for kind, rule, n in out["rule_counts"]},
        restarts=out["restarts"],
        span=None if span is None else (_instant(span[0]), _instant(span[1])),
        ranks=list(out["ranks"]),
        tables={
            kind: [pa.record_batch(b) for b in batches] for kind, batches in out.get("tables", {}).items()
        },
        stages=dict(cast(dict[str, float], out["stages"])),
    )


STAGES = {
    "read": "reading blocks (I/O, newlines, cut lines)",
    "parse": "parsing blocks (envelopes, rules, values, columns)",
    "finish": "time, derived columns, hand-off to the sinks",
    "write": "Parquet row groups (encode, compress, write)",
    "close": "closing the tables (last row groups, footers)",
}


def _print_profile(stages: dict[str, float], wall: float, size: int | None) -> None:
    """`LOGPARSE_PROFILE=1`: the core's seconds per stage on stderr (threads summed, so the total
    may exceed the call's wall time)."""
    import sys

    total = sum(stages.values()) or 1.0
    rows = ["logparse profile (seconds by stage, threads summed):"]
    for key, label in STAGES.items():
        spent = stages.get(key, 0.0)
        rate = f"{(size or 0) / 1e6 / spent:9,.0f} MB/s" if spent and size else ""
        rows.append(f"  {label:<52}{spent:7.2f} s {100 * spent / total:5.1f}% {rate}")
    rows.append(f"  {'the core call, wall time':<52}{wall:7.2f} s")
    print("\n".join(rows), file=sys.stderr)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _instant(us: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=us)


def _today(zone: str) -> dt.date:
    """Today in `zone` (not in this machine's zone: stdin's dates do not depend on `TZ`)."""
    return _local_date(None, zone)


def _local_date(instant: dt.datetime | None, zone: str) -> dt.date:
    """The date of `instant` (None: now) in `zone`."""
    from zoneinfo import ZoneInfo

    return (instant or dt.datetime.now(dt.UTC)).astimezone(ZoneInfo(zone)).date()


def _mtime(path: str | Path | BinaryIO) -> dt.datetime | None:
    if str(path) == "-" or not isinstance(path, str | Path):
        return None
    if remote.is_uri(path):  # an object's modification time is when it was uploaded
        try:
            return remote.file_facts(str(path))[1]
        except InputError:
            return None
    try:
        return dt.datetime.fromtimestamp(os.stat(path).st_mtime, tz=dt.UTC)
    except OSError:
        return None


__all__ = [
    "PARALLEL_MIN_BYTES",
    "Cancelled",
    "Outcome",
    "Sink",
    "choose_engine",
    "reading",
    "stream_log",
    "usable_cores",
]
