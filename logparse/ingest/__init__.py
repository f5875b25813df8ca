"""From a log file to tables: the library entry points of the ingest.

* `ingest(path)`: a log (or a folder of tables written earlier) as one polars frame per kind;
* `ingest_to_folder(path, folder)`: the same, written as Parquet (tables read back lazily);
* `ingest_many(logs, out)`: several logs side by side into one dataset, a run per log.

Reading, detection, parsing, `time` and writing are the one pipeline of `logparse.ingest.run`: one
call into the compiled core per log.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import polars as pl

from logparse.errors import EngineNotDetected, InputError, LogparseError, PartialFailure
from logparse.escape import for_terminal
from logparse.grammar import Grammar, load_grammar
from logparse.ingest.reader import ReadStats, input_size
from logparse.ingest.run import PARALLEL_MIN_BYTES, Outcome, Sink, stream_log, usable_cores
from logparse.ingest.times import TimeFacts
from logparse.store import (
    MARKER_FILE,
    STATS_FILE,
    is_complete,
    is_table_folder,
    load_info,
    read_tables,
    remove_tree,
    runs_of,
    save_info,
    scan_tables,
)
from logparse.store.copies import shown_name

Frame = pl.DataFrame | pl.LazyFrame


class LineCounts:
    """Line totals derived from `counts` (events per kind)."""

    counts: dict[str, int]

    @property
    def lines(self) -> int:
        """Number of input lines (= number of events)."""
        return sum(self.counts.values())

    @property
    def typed_lines(self) -> int:
        """Lines that became a kind other than `unparsed`."""
        return self.lines - self.counts.get("unparsed", 0)

    @property
    def coverage(self) -> float:
        """Typed lines over all lines (1.0 for an empty log)."""
        return self.typed_lines / self.lines if self.lines else 1.0


@dataclass
class IngestResult(LineCounts):
    """The tables of one log, and what was learned while reading it. `tables` are polars frames,
    or lazy scans of the Parquet files when the log was written to a folder."""

    source: str
    engine: str
    scores: dict[str, float]
    tables: dict[str, Any]
    stats: ReadStats
    counts: dict[str, int] = field(default_factory=dict)
    grammar: Grammar | None = field(default=None, repr=False)
    times: TimeFacts = field(default_factory=TimeFacts)
    extra_keys: dict[tuple[str, str], int] = field(default_factory=dict)
    folder: Path | None = None
    rule_counts: dict[tuple[str, str | None], int] = field(default_factory=dict)  # (kind, rule) -> lines
    span: tuple[Any, Any] | None = None  # first and last `time`, UTC
    ranks: list[str] | None = None  # every rank printed (None: not counted, a folder read back)

    def __getitem__(self, kind: str) -> Any:
        return self.tables[kind]

    def __contains__(self, kind: object) -> bool:
        """Whether the log has lines of `kind` (`"oom" in result`)."""
        return kind in self.tables

    def __iter__(self) -> Iterator[str]:
        """The kinds the log has lines of (`for kind in result: result[kind]`)."""
        return iter(self.tables)

    def get(self, kind: str) -> Any:
        """The table of `kind`, or None when the log has no such line."""
        return self.tables.get(kind)

    def frames(self) -> dict[str, pl.DataFrame]:
        """Every table read whole (lazy scans collected)."""
        return {k: v.collect() if isinstance(v, pl.LazyFrame) else v for k, v in self.tables.items()}

    def info(self) -> dict[str, Any]:
        """What is kept beside the tables (`store.save_info`)."""
        return {
            "source": self.source,
            "engine": self.engine,
            "scores": self.scores,
            "counts": self.counts,
            "read": dataclasses.asdict(self.stats),
            "times": self.times.as_dict(),
            "extra_keys": [[rule, key, n] for (rule, key), n in sorted(self.extra_keys.items())],
            "rule_counts": [
                [kind, rule, n] for (kind, rule), n in sorted(self.rule_counts.items(), key=_rule_order)
            ],
            "span": None if self.span is None else [t.isoformat() for t in self.span],
            "ranks": self.ranks,
        }


def _rule_order(item: tuple[tuple[str, str | None], int]) -> tuple[str, str]:
    (kind, rule), _ = item
    return kind, rule or ""


def _result(
    outcome: Outcome, tables: dict[str, Any], grammar: Grammar, folder: Path | None = None
) -> IngestResult:
    return IngestResult(
        source=outcome.source,
        engine=outcome.engine,
        scores=outcome.scores,
        tables=tables,
        stats=outcome.stats,
        counts=outcome.counts,
        grammar=grammar,
        times=outcome.times,
        extra_keys=outcome.extra_keys,
        folder=folder,
        rule_counts=outcome.rule_counts,
        span=outcome.span,
        ranks=outcome.ranks,
    )


def ingest(
    path: str | Path,
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    workers: int | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> IngestResult:
    """Parse a vLLM or SGLang log (`-` for stdin, `.gz` read as is) into one DataFrame per kind.

    Parameters
    ----------
    path
        The log. A folder of tables written by `logparse ingest --out` (one log's folder, or one
        `run=<name>` of a dataset) is read back instead.
    engine
        `auto` (detected from the head of the log), or an engine name (`vllm`, `sglang`).
    year
        The year of stamps that print none, when the log shows no full date.
    tz
        The zone of stamps that print none (default: UTC, whatever this machine's zone).
    patterns
        Extra grammar files, on top of the built-in ones and `LOGPARSE_PATTERNS`.
    workers
        Threads for the log's blocks (default: the cores, for large logs).
    progress
        Called with (bytes read, total bytes or None) as the log is read.
    """
    if is_table_folder(path):
        return read_folder(Path(path), patterns=patterns)
    grammar = load_grammar(patterns)
    outcome = stream_log(path, grammar, engine=engine, year=year, tz=tz, workers=workers, progress=progress)
    return _result(outcome, _frames(outcome.tables), grammar)


def _frames(tables: dict[str, list[Any]]) -> dict[str, pl.DataFrame]:
    """One polars frame per kind, rows in line order."""
    import pyarrow as pa

    out: dict[str, pl.DataFrame] = {}
    for kind in sorted(tables):
        frame = pl.from_arrow(pa.Table.from_batches(tables[kind]))
        assert isinstance(frame, pl.DataFrame)
        out[kind] = frame
    return out


def ingest_to_folder(
    path: str | Path | BinaryIO,
    folder: Path,
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    workers: int | None = None,
    layout: str = "flat",
    extra_sink: Sink | None = None,
    jsonl: TextIO | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    cancel: threading.Event | None = None,
    name: str | None = None,
    once: bool = False,
    mtime: dt.datetime | None = None,
) -> IngestResult:
    """Parse `path` into Parquet tables in `folder` (`<kind>.parquet`, or `kind=<kind>/part-*.parquet`
    for the `hive` layout of a dataset's run) and keep the ingest facts beside them. The result's
    tables are lazy scans of those files; `extra_sink` gets every batch too, and `jsonl` every event
    as a JSON line (the core writes it, a block at a time). `path` may be a binary stream named
    `name`; `once` and `mtime` as for `stream_log` (a log followed live)."""
    grammar = load_grammar(patterns)
    outcome = stream_log(
        path,
        grammar,
        name=name,
        once=once,
        mtime=mtime,
        folder=folder,
        layout=layout,
        sink=extra_sink,
        jsonl=jsonl,
        engine=engine,
        year=year,
        tz=tz,
        workers=workers,
        progress=progress,
        cancel=cancel,
    )
    folder.mkdir(parents=True, exist_ok=True)
    result = _result(outcome, scan_tables(folder, outcome.kinds), grammar, folder)
    save_info(folder, result.info())
    return result


def read_folder(path: Path, *, patterns: Sequence[str | Path] = ()) -> IngestResult:
    """The tables of a folder written by `logparse ingest --out`, as an `IngestResult`.

    A dataset of several runs is refused with the list of its runs: analyse one run at a time."""
    folder = path
    runs = runs_of(path) if (path / MARKER_FILE).exists() else []
    if runs:
        if len(runs) > 1:
            shown = ", ".join(r.name for r in runs[:8]) + (", ..." if len(runs) > 8 else "")
            raise InputError(
                f"{for_terminal(str(path))}: a dataset of {len(runs)} runs ({for_terminal(shown)}); "
                f"give one of them, e.g. {for_terminal(str(runs[0]))}"
            )
        folder = runs[0]
    tables = read_tables(folder)
    if not tables:
        raise InputError(f"{for_terminal(str(path))}: holds no tables")
    if folder.name.startswith("run=") and not is_complete(folder):
        raise InputError(
            f"{for_terminal(str(path))}: an incomplete run (no completion marker {STATS_FILE}): its ingest "
            "did not finish or is still under way; ingest its log again (a rerun redoes incomplete runs only)"
        )
    info = load_info(folder) or {}
    engine = info.get("engine") or _engine_of(tables)
    if engine is None:
        raise InputError(f"{for_terminal(str(path))}: its tables do not say which engine wrote the log")
    counts = {kind: frame.height for kind, frame in tables.items()}
    read = info.get("read") or {}
    known = {f.name for f in dataclasses.fields(ReadStats)}
    stats = (
        ReadStats(**{k: v for k, v in read.items() if k in known})
        if read
        else ReadStats(lines=sum(counts.values()))
    )
    times = TimeFacts(
        **{k: v for k, v in (info.get("times") or {}).items() if k in TimeFacts.__dataclass_fields__}
    )
    extra = {(r, k): n for r, k, n in info.get("extra_keys", [])}
    span = info.get("span")
    return IngestResult(
        source=shown_name(path),
        engine=str(engine),
        scores=info.get("scores") or {str(engine): 1.0},
        tables=tables,
        stats=stats,
        counts=counts,
        grammar=load_grammar(patterns),
        times=times,
        extra_keys=extra,
        folder=folder,
        rule_counts={(k, r): n for k, r, n in info.get("rule_counts", [])},
        span=None if not span else (dt.datetime.fromisoformat(span[0]), dt.datetime.fromisoformat(span[1])),
        ranks=info.get("ranks"),
    )


def _engine_of(tables: dict[str, pl.DataFrame]) -> str | None:
    for frame in tables.values():
        if "engine" in frame.columns:
            values = frame.get_column("engine").drop_nulls()
            if len(values):
                return str(values[0])
    return None


@dataclass(frozen=True)
class Job:
    """One log of a dataset: where it goes and how it is read."""

    log: str
    run: str
    folder: Path | None  # the run's folder (None: headline only, written to a scratch folder)
    engine: str = "auto"
    year: int | None = None
    tz: str | None = None
    patterns: tuple[str, ...] = ()


@dataclass
class JobResult:
    """A job's result, or why it failed: `error`, and its `cause`: ``unread`` (the log could not
    be read: no such file, a folder, ...), ``engine`` (read, but its engine not detected) or
    ``other`` (its tables could not be written, a broken grammar, ...)."""

    job: Job
    result: IngestResult | None = None
    error: str | None = None
    cause: str | None = None


def run_job(job: Job, *, workers: int = 1, cancel: threading.Event | None = None) -> JobResult:
    """Parse one log into its run folder; a log that cannot be read gives its error."""
    import tempfile

    def into(folder: Path) -> IngestResult:
        return ingest_to_folder(
            job.log,
            folder,
            engine=job.engine,
            year=job.year,
            tz=job.tz,
            patterns=job.patterns,
            workers=workers,
            layout="hive",
            cancel=cancel,
        )

    try:
        if job.folder is None:
            tmp = Path(tempfile.mkdtemp(prefix="logparse-"))
            try:
                result = into(tmp)
                result.tables = {k: v.collect() for k, v in result.tables.items()}
            finally:
                remove_tree(tmp)
            return JobResult(job, result)
        job.folder.mkdir(parents=True, exist_ok=True)
        return JobResult(job, into(job.folder))
    except LogparseError as exc:
        if job.folder is not None:
            remove_tree(job.folder)
        return JobResult(job, error=str(exc), cause=_cause(exc))


def _cause(exc: LogparseError) -> str:
    """`JobResult.cause` of an error: ``engine``, ``unread`` or ``other``."""
    if isinstance(exc, EngineNotDetected):
        return "engine"
    return "unread" if type(exc) is InputError else "other"


def ingest_many(
    jobs: Sequence[Job],
    *,
    parallel: int | None = None,
    on_done: Callable[[int, JobResult], None] | None = None,
) -> list[JobResult]:
    """Run `jobs`: a large log alone, its blocks on every thread; smaller logs side by side, a
    thread each. `on_done` is called in this thread as each job ends. Raises `PartialFailure` when
    some (not all) logs failed, after the others are done; `InputError` when all failed."""
    parallel = parallel or usable_cores()
    results: list[JobResult | None] = [None] * len(jobs)
    alone = [
        i
        for i, job in enumerate(jobs)
        if parallel <= 1 or len(jobs) == 1 or (input_size(job.log) or 0) >= PARALLEL_MIN_BYTES
    ]
    for i in alone:
        results[i] = run_job(jobs[i], workers=parallel)
        if on_done:
            on_done(i, results[i])  # type: ignore[arg-type]
    others = [i for i in range(len(jobs)) if i not in set(alone)]
    if others:
        cancel = threading.Event()
        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="logparse-log") as pool:
            futures = {pool.submit(run_job, jobs[i], cancel=cancel): i for i in others}
            try:
                for future in as_completed(futures):
                    i = futures[future]
                    results[i] = future.result()
                    if on_done:
                        on_done(i, results[i])  # type: ignore[arg-type]
            except BaseException:
                cancel.set()
                raise
    done = [r for r in results if r is not None]
    failed = [r for r in done if r.error]
    if failed and len(failed) == len(done):
        raise InputError(f"none of the {len(done)} logs could be read: {failed[0].error}")
    return done


def failures(results: Sequence[JobResult]) -> PartialFailure | None:
    """The `PartialFailure` of a set of job results, or None when every log was read."""
    failed = [r for r in results if r.error]
    if not failed:
        return None
    causes = [r.cause for r in failed]
    parts = [
        f"{causes.count('unread')} could not be read" if "unread" in causes else "",
        f"{causes.count('engine')} not recognised as an engine's log (pass --engine)"
        if "engine" in causes
        else "",
        f"{causes.count('other')} failed" if "other" in causes else "",
    ]
    return PartialFailure(
        f"{len(failed)} of {len(results)} logs were skipped: {', '.join(p for p in parts if p)}",
        len(failed),
        len(results),
    )


__all__ = [
    "IngestResult",
    "Job",
    "JobResult",
    "LineCounts",
    "failures",
    "ingest",
    "ingest_many",
    "ingest_to_folder",
    "read_folder",
    "run_job",
]


class _CallableModule(types.ModuleType):
    """This package, callable as `ingest`: importing it rebinds `logparse.ingest` from the function
    to the package, and `logparse.ingest("server.log")` is the documented entry point."""

    def __call__(self, path: str | Path, **options: Any) -> IngestResult:
        return ingest(path, **options)


sys.modules[__name__].__class__ = _CallableModule
