"""One run of a fleet: a log ingested into its `run=<name>` folder of a dataset, on a local file
system or on object storage. `ingest_run` is the unit of work, a plain function of plain data that
any engine can call (Ray, Dask, Spark, a process pool): it returns its result instead of raising.

The run is written whole or not at all, as readers see it. The compiled core writes its tables into
a scratch folder; on a local file system the folder is renamed into place; on object storage (no
rename) the run's old files are removed, the tables uploaded, and the completion marker
(`_ingest.json`, the ingest facts) written last. A run is counted complete only once that marker
exists, so a task killed at any point, then retried or rerun, leaves neither a partial run counted
nor a duplicate row: the retry clears the run's folder before writing it again.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.errors import EngineNotDetected, InputError, LogparseError, OutputError
from logparse.ingest import ingest_to_folder
from logparse.ingest.reader import ReadStats, read_problems
from logparse.store import STATS_FILE, remove_tree
from logparse.store.folder import reason
from logparse.store.remote import (
    Location,
    delete_file,
    delete_folder,
    is_uri,
    kind_of,
    locate,
    read_bytes,
    upload_folder,
)
from logparse.store.remote import write_bytes as put

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


def completed(run: Location) -> dict[str, Any] | None:
    """The completion marker of the run at `run` (its ingest facts), or None while it has none."""
    data = read_bytes(run.join(STATS_FILE))
    if data is None:
        return None
    try:
        info = json.loads(data)
    except ValueError:
        return None  # a marker cut short is no marker
    return info if isinstance(info, dict) else None


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
        with _scratch(dest) as folder:
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


@contextmanager
def _scratch(dest: Location) -> Iterator[Path]:
    """A fresh local folder for the core to write the run into: beside the run on a local file
    system (so that it can be renamed into place), else in the temporary folder
    (`LOGPARSE_SCRATCH`, else `TMPDIR`); removed at the end. The scratch folders an earlier
    attempt at this run left (its process killed) are removed first: one task at a time writes a
    run (Ray retries a task after its worker died)."""
    if dest.local is not None:
        parent, prefix = dest.local.parent, f".{dest.local.name}."
        suffix = ".logparse-tmp"
    else:
        parent = Path(os.environ.get("LOGPARSE_SCRATCH") or tempfile.gettempdir())
        prefix = f"logparse-run-{hashlib.sha1(dest.uri.encode()).hexdigest()[:16]}-"
        suffix = ""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in parent.glob(f"{glob.escape(prefix)}*{suffix}"):
            remove_tree(stale)
        folder = parent / f"{prefix}{secrets.token_hex(4)}{suffix}"
        folder.mkdir()
    except OSError as exc:
        where = dest.uri if dest.local is not None else str(parent)
        raise OutputError(f"cannot write {where}: {exc.strerror or exc}") from None
    try:
        yield folder
    finally:
        remove_tree(folder)


def publish(folder: Path, dest: Location) -> None:
    """Make the finished local run `folder` the run at `dest`, whole: renamed into place on a local
    file system; else the old run's marker and files removed, the tables uploaded, the marker
    (`_ingest.json`) last."""
    if dest.local is not None:
        _rename_into_place(folder, dest)
        return
    marker = (folder / STATS_FILE).read_bytes()
    delete_file(dest.join(STATS_FILE))  # first: from here on the run is not counted complete
    delete_folder(dest)
    upload_folder(folder, dest, skip=[STATS_FILE])
    put(dest.join(STATS_FILE), marker)


def _rename_into_place(folder: Path, dest: Location) -> None:
    assert dest.local is not None
    target = dest.local
    old = target.parent / f".{target.name}.{secrets.token_hex(4)}.logparse-old"
    moved = False
    try:
        if target.exists():
            os.rename(target, old)
            moved = True
        os.rename(folder, target)
    except OSError as exc:
        if moved and not target.exists():
            os.rename(old, target)  # the run as it was
        raise OutputError(f"cannot write {dest.uri}: {exc.strerror or exc}") from None
    if moved:
        shutil.rmtree(old, ignore_errors=True)


__all__ = [
    "DONE",
    "FAILED",
    "NOT_RUN",
    "SKIPPED",
    "RunResult",
    "RunTask",
    "completed",
    "ingest_run",
    "publish",
    "run_location",
    "store_down",
]
