"""One run of a fleet: a log ingested into its `run=<name>` folder of a dataset, on a local file
system or on object storage. `ingest_run` is the unit of work, a plain function of plain data that
any engine can call (Ray, Dask, Spark, a process pool): it returns its result instead of raising.
How a run is written whole (its completion marker last) is `logparse.fleet.publish`.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from logparse.errors import EngineNotDetected, InputError, LogparseError, OutputError
from logparse.fleet.publish import completed, publish, scratch
from logparse.ingest import ingest_to_folder
from logparse.ingest.reader import ReadStats, read_problems
from logparse.store.folder import reason
from logparse.store.remote import Location, is_uri, kind_of, locate

# Statuses of a run.
DONE = "done"
SKIPPED = "skipped"  # already complete (its marker names the same log): not read again
FAILED = "failed"
NOT_RUN = "not run"  # left out after the output store failed

RUN_PREFIX = "run="


@dataclass(frozen=True)
class RunTask:
    """What one run needs: the log (a path or URI), the dataset it goes to (a path or URI), its
    name there, and how the log is read (as `logparse ingest`). `workers` threads parse its
    blocks; `size` (bytes, when known) is for progress and scheduling only."""

    log: str
    out: str
    run: str
    size: int | None = None
    engine: str = "auto"
    year: int | None = None
    tz: str | None = None
    patterns: tuple[str, ...] = ()
    force: bool = False
    workers: int = 1


@dataclass
class RunResult:
    """How one run ended: `status` (``done``, ``skipped``, ``failed``, ``not run``), what its log
    held (engine, lines, coverage, input bytes, problems met reading it), its wall time, and for a
    failure the `error` and its `cause` (``unread``: the log could not be read; ``engine``: its
    engine not detected; ``write``: the output could not be written; ``conflict``: the run's
    name holds another log's tables; ``worker``: the task's process died; ``other``)."""

    run: str
    log: str
    status: str
    engine: str | None = None
    lines: int | None = None
    coverage: float | None = None
    bytes: int | None = None
    seconds: float | None = None
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    cause: str | None = None
    host: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain data (JSON)."""
        return dataclasses.asdict(self)


def run_location(task: RunTask) -> Location:
    """Where the run's folder is: `<out>/run=<name>`."""
    return locate(task.out).join(f"{RUN_PREFIX}{task.run}")


def ingest_run(task: RunTask) -> RunResult:
    """Ingest `task.log` into its run folder, unless the run is already complete for the same log
    (`task.force` redoes it). Never raises for a log or a store that fails: the result says why."""
    start = time.monotonic()
    host = socket.gethostname()
    try:
        dest = run_location(task)
        info = None if task.force else completed(dest)
        if info is not None:
            return _already(task, info, host)
        with scratch(dest) as folder:
            result = ingest_to_folder(
                task.log,
                folder,
                engine=task.engine,
                year=task.year,
                tz=task.tz,
                patterns=task.patterns,
                workers=max(1, task.workers),
                layout="hive",
            )
            problems = [message for _, message in read_problems(result.stats)]
            if not result.lines and problems:  # nothing could be read: no run to count
                raise InputError("; ".join(problems))
            publish(folder, dest)
    except (LogparseError, OSError) as exc:  # an OSError: the scratch folder could not be written
        error = (
            exc
            if isinstance(exc, LogparseError)
            else OutputError(f"cannot write a run's scratch folder: {reason(exc)}")
        )
        return RunResult(
            task.run,
            task.log,
            FAILED,
            error=str(error),
            cause=_cause(error),
            seconds=time.monotonic() - start,
            host=host,
        )
    return RunResult(
        task.run,
        task.log,
        DONE,
        engine=result.engine if result.scores else None,  # a blank log names none
        lines=result.lines,
        coverage=result.coverage,
        bytes=result.stats.bytes_read,
        seconds=time.monotonic() - start,
        problems=problems,
        host=host,
    )


def store_down(task: RunTask, result: RunResult) -> str | None:
    """Why the fleet must stop after `result`: the output store failed (a run could not be
    written, or a run failed and the dataset cannot be reached any more: the store is down, and
    every run left would fail in turn); None when it can go on."""
    if result.status != FAILED or result.cause in ("engine", "conflict"):
        return None
    if result.cause == "write":
        return result.error or "the output store failed"
    try:
        kind_of(locate(task.out))
    except LogparseError as exc:
        return str(exc)
    return None


def _cause(exc: LogparseError) -> str:
    if isinstance(exc, EngineNotDetected):
        return "engine"
    if isinstance(exc, OutputError):
        return "write"
    return "unread" if type(exc) is InputError else "other"


def _already(task: RunTask, info: dict[str, Any], host: str) -> RunResult:
    """The result of a run found complete: skipped when its marker names this log, else a conflict."""
    source = info.get("source")
    if not _same_log(str(source), task.log):
        return RunResult(
            task.run,
            task.log,
            FAILED,
            error=f"run={task.run} already holds the tables of another log ({source}); "
            "name the logs apart, or pass --force to replace them",
            cause="conflict",
            host=host,
        )
    counts = {str(k): int(v) for k, v in (info.get("counts") or {}).items()}
    lines = sum(counts.values())
    read = info.get("read") or {}
    known = {f.name for f in dataclasses.fields(ReadStats)}
    stats = ReadStats(**{k: v for k, v in read.items() if k in known})
    return RunResult(
        task.run,
        task.log,
        SKIPPED,
        engine=info.get("engine"),
        lines=lines,
        coverage=(lines - counts.get("unparsed", 0)) / lines if lines else 1.0,
        bytes=stats.bytes_read,
        problems=[message for _, message in read_problems(stats)],
        host=host,
    )


def _same_log(recorded: str, log: str) -> bool:
    """Whether the marker's `recorded` source is `log` (a local path recorded relative to the folder
    the ingest ran in is taken relative to this one)."""
    if is_uri(recorded) or is_uri(log):
        return recorded == log
    return os.path.abspath(recorded) == os.path.abspath(log)


__all__ = [
    "DONE",
    "FAILED",
    "NOT_RUN",
    "SKIPPED",
    "RunResult",
    "RunTask",
    "ingest_run",
    "run_location",
    "store_down",
]
