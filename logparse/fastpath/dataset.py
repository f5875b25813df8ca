"""Many logs into one Parquet dataset, and folders of tables read back as an ingested log.

Layout (hive partitions, read as is by polars, DuckDB, Spark, Trino)::

    DATASET/.logparse
    DATASET/run=<name>/kind=<kind>/part-00000.parquet   (part-00001... for a large table)

A kind has the same columns in every run, so one kind across runs is one table::

    pl.scan_parquet("DATASET/run=*/kind=decode_batch/*.parquet", hive_partitioning=True)
    SELECT * FROM read_parquet('DATASET/*/kind=decode_batch/*.parquet', hive_partitioning = true)

Logs are parsed side by side, each in its own thread (`--jobs`; polars' kernels release the GIL, so
threads share the cores without each holding a copy of polars); the dataset is written into a
temporary folder that replaces DATASET when every log is done (an interrupted run leaves the old
one in place).
"""
from __future__ import annotations

import glob
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.reader import ReadStats, load_read_stats
from logparse.tables import MARKER_FILE

LOG_SUFFIXES = (".log", ".log.gz", ".txt", ".txt.gz", ".out", ".out.gz")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


# -- inputs -----------------------------------------------------------------------------------------
def expand_inputs(args: Sequence[str]) -> tuple[list[str], bool]:
    """The log files named by `args` (files, folders, globs) and whether they form a dataset.

    A folder gives the files under it whose names end in .log, .txt, .out (optionally .gz); a glob
    gives the files it matches. One plain file argument keeps the single-log layout.
    """
    files: list[str] = []
    several = len(args) > 1
    for arg in args:
        path = Path(arg)
        if arg != "-" and path.is_dir() and not is_table_folder(path):
            found = sorted(str(p) for p in path.rglob("*") if p.is_file() and p.name.endswith(LOG_SUFFIXES)
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not found:
                raise InputError(f"{for_terminal(arg)}: no log files (*.log, *.txt, *.out, .gz) in this folder")
            files.extend(found)
            several = True
        elif arg != "-" and not path.exists() and glob.has_magic(arg):
            found = sorted(p for p in glob.glob(arg, recursive=True) if Path(p).is_file())
            if not found:
                raise InputError(f"{for_terminal(arg)}: the pattern matches no file")
            files.extend(found)
            several = True
        else:
            files.append(arg)
    return list(dict.fromkeys(files)), several


def run_name(log: str) -> str:
    """A log's name in a dataset: its file name without .log/.txt/.gz, safe in a path."""
    name = "stdin" if log == "-" else Path(log).name
    for suffix in (".gz", ".log", ".txt", ".out"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return _UNSAFE.sub("_", name).strip("._") or "log"


def run_names(logs: Sequence[str]) -> list[str]:
    """Unique run names for `logs` (a parent folder is added, then a counter, on collisions)."""
    names = [run_name(log) for log in logs]
    if len(set(names)) != len(names):
        names = [_UNSAFE.sub("_", f"{Path(log).parent.name}_{name}").strip("._") if log != "-" else name
                 for log, name in zip(logs, names)]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out


# -- reading tables back ----------------------------------------------------------------------------
def is_table_folder(path: str | Path) -> bool:
    """A folder written by `logparse ingest --out` (a log's tables, a dataset, or one of its runs)."""
    if str(path) == "-":
        return False
    p = Path(path)
    if not p.is_dir():
        return False
    if (p / MARKER_FILE).exists():
        return True
    return p.name.startswith("run=") and (p.parent / MARKER_FILE).exists()


def runs_of(dataset: Path) -> list[Path]:
    """The `run=<name>` folders of a dataset (empty for a single log's folder)."""
    return sorted(p for p in dataset.iterdir() if p.is_dir() and p.name.startswith("run="))


def table_paths(folder: Path) -> dict[str, list[Path]]:
    """Parquet files per kind in a log's folder (`<kind>.parquet`) or a run (`kind=<kind>/*.parquet`)."""
    found: dict[str, list[Path]] = {}
    for p in sorted(folder.glob("*.parquet")):
        found.setdefault(p.stem, []).append(p)
    for d in sorted(folder.glob("kind=*")):
        if d.is_dir():
            files = sorted(d.glob("*.parquet"))
            if files:
                found.setdefault(d.name[len("kind="):], []).extend(files)
    return found


def scan_tables(folder: Path, kinds: Sequence[str] | None = None) -> dict[str, pl.LazyFrame]:
    """Each kind's table in `folder` (only `kinds`, when given) as a lazy scan (nothing is read yet)."""
    found = table_paths(folder)
    wanted = sorted(found) if kinds is None else [k for k in sorted(kinds) if k in found]
    return {kind: pl.scan_parquet(found[kind], glob=False) for kind in wanted}


def read_table_folder(path: Path, *, patterns: Sequence[str | Path] = ()) -> Any:
    """The tables of a folder written by `logparse ingest --out`, as an `IngestResult`.

    A dataset of several runs is refused with the list of its runs: analyse one run at a time.
    """
    from logparse.grammar import load_grammar
    from logparse.pipeline import IngestResult

    folder = path
    runs = runs_of(path) if (path / MARKER_FILE).exists() else []
    if runs:
        if len(runs) > 1:
            shown = ", ".join(r.name for r in runs[:8]) + (", ..." if len(runs) > 8 else "")
            raise InputError(f"{for_terminal(str(path))}: a dataset of {len(runs)} runs ({for_terminal(shown)}); "
                             f"give one of them, e.g. {for_terminal(str(runs[0]))}")
        folder = runs[0]
    tables = {kind: pl.read_parquet(files, glob=False) for kind, files in sorted(table_paths(folder).items())}
    if not tables:
        raise InputError(f"{for_terminal(str(path))}: holds no tables")
    engine = None
    for frame in tables.values():
        if "engine" in frame.columns:
            values = frame.get_column("engine").drop_nulls()
            if len(values):
                engine = str(values[0])
                break
    if engine is None:
        raise InputError(f"{for_terminal(str(path))}: its tables do not say which engine wrote the log")
    counts = {kind: frame.height for kind, frame in tables.items()}
    stats = load_read_stats(folder) or ReadStats(lines=sum(counts.values()))
    return IngestResult(source=str(path), engine=engine, scores={engine: 1.0}, tables=tables, stats=stats,
                        counts=counts, grammar=load_grammar(patterns))


# -- writing a dataset ------------------------------------------------------------------------------
@contextmanager
def dataset_folder(out: Path, *, force: bool = False) -> Iterator[Path]:
    """A temporary folder that becomes `out` when the block ends without error."""
    from logparse.tables import table_folder

    with table_folder(out, force=force) as tmp:
        yield tmp


@dataclass(frozen=True)
class Job:
    """One log of a dataset."""

    log: str
    run: str
    engine: str
    year: int | None
    patterns: tuple[str, ...]
    folder: str | None  # the run folder to write, or None (headline only)
    workers: int = 1  # threads for the log's blocks: `run_jobs` sets it from its `parallel`
    reference: bool = False
    cancel: threading.Event | None = None  # set: stop at the next block (see `run_jobs`)


def ingest_job(job: Job) -> dict[str, Any]:
    """Parse one log into its run folder (in a worker thread); return its headline facts.

    A log that cannot be read (no such file, no engine detected...) gives `{"error": message}`.
    """
    from logparse.errors import LogparseError

    try:
        return _ingest_job(job)
    except LogparseError as exc:
        if job.folder is not None:
            from logparse.tables import remove_tree

            remove_tree(Path(job.folder))
        return {"run": job.run, "source": job.log, "error": str(exc)}


def _ingest_job(job: Job) -> dict[str, Any]:
    from logparse.fastpath.run import ingest_to_folder

    def into(folder: Path) -> dict[str, Any]:
        return ingest_to_folder(job.log, folder, engine=job.engine, year=job.year, patterns=job.patterns,
                                layout="hive", workers=job.workers, reference=job.reference, cancel=job.cancel)

    if job.folder is not None:
        folder = Path(job.folder)
        folder.mkdir(parents=True, exist_ok=True)
        facts = into(folder)
    else:
        with tempfile.TemporaryDirectory(prefix="logparse-") as tmp:
            facts = into(Path(tmp))
    facts["run"] = job.run
    return facts


def run_jobs(jobs: Sequence[Job], *, parallel: int,
             on_done: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run `jobs` on `parallel` threads of this process; facts in job order (errors re-raised).

    A large log (`PARALLEL_MIN_BYTES` or more) is parsed alone, its blocks on `parallel` threads;
    the smaller logs are then parsed side by side, one thread each (two large logs side by side
    contend for the GIL in their Python glue more than one log's blocks do: 250 MB in two logs took
    5.7 s one after the other, 6.0 s side by side). `on_done` is called in this thread as each job
    ends.
    """
    from logparse.fastpath.stream import PARALLEL_MIN_BYTES
    from logparse.reader import input_size

    results: list[dict[str, Any] | None] = [None] * len(jobs)
    alone = [i for i, job in enumerate(jobs)
             if parallel <= 1 or len(jobs) == 1 or (input_size(job.log) or 0) >= PARALLEL_MIN_BYTES]
    for i in alone:
        results[i] = ingest_job(replace(jobs[i], workers=max(1, parallel)))
        if on_done:
            on_done(i, results[i])  # type: ignore[arg-type]
    side_by_side = [i for i in range(len(jobs)) if i not in set(alone)]
    if side_by_side:
        _side_by_side(jobs, side_by_side, parallel, results, on_done)
    return results  # type: ignore[return-value]


def _side_by_side(jobs: Sequence[Job], indices: Sequence[int], parallel: int, results: list[dict[str, Any] | None],
                  on_done: Callable[[int, dict[str, Any]], None] | None) -> None:
    cancel = threading.Event()
    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="logparse-log")
    futures = {pool.submit(ingest_job, replace(jobs[i], workers=1, cancel=cancel)): i for i in indices}
    try:
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            if on_done:
                on_done(i, results[i])  # type: ignore[arg-type]
    except BaseException:
        cancel.set()  # the running logs stop at their next block (a thread cannot be killed)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def default_jobs() -> int:
    """Logs parsed at once by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


__all__ = ["Job", "dataset_folder", "default_jobs", "expand_inputs", "ingest_job", "is_table_folder",
           "read_table_folder", "run_jobs", "run_name", "run_names", "runs_of", "scan_tables", "table_paths"]
