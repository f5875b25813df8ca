"""`follow_log`: read a log as it is written until it ends or is stopped, then its post-mortem.

One call into the compiled core reads the followed stream to its end (`ingest_to_folder`, one
block per read that returned data, the stream never read again); the tables go to Parquet (`out`,
else a scratch folder) and to the `FollowSink`. When the stream ends (the file deleted, stdin
closed, `stop` set by SIGTERM / Ctrl-C), the Parquet tables are complete and the post-mortem is
the one `summary` gives of the same lines.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from logparse.analysis.analyze import Analysis, analyze
from logparse.errors import EngineNotDetected
from logparse.escape import for_terminal
from logparse.export.live import LiveSeries
from logparse.follow.alerts import DROP, Watch
from logparse.follow.live_metrics import QueuedSeries
from logparse.follow.outputs import Reporter
from logparse.follow.sink import FollowSink
from logparse.grammar import Grammar, load_grammar
from logparse.ingest import IngestResult, ingest_to_folder
from logparse.ingest.detect import HEAD_LINES, detect_engine
from logparse.ingest.tail import POLL_S, FollowedFile, FollowedPipe
from logparse.store import output_folder, remove_tree, save_info


@dataclass
class FollowResult:
    """How following ended, and the post-mortem of every line read (None: no line was)."""

    source: str
    engine: str | None
    lines: int
    notes: list[str]
    analysis: Analysis | None
    ingest: IngestResult | None
    alerts: int
    cpu_s: float  # CPU time of this process while following
    wall_s: float
    analysis_cpu_s: float
    analyses: int
    folder: Path | None = None  # where the tables were written (`out`), else None
    extra: dict[str, Any] = field(default_factory=dict)


def open_followed(
    path: str | Path, *, stop: threading.Event, poll_s: float = POLL_S
) -> FollowedFile | FollowedPipe:
    """The stream to follow: `-` is standard input, anything else a file followed as `tail -F`."""
    import sys

    if str(path) == "-":
        return FollowedPipe(sys.stdin.buffer, stop=stop, poll_s=poll_s)
    return FollowedFile(path, stop=stop, poll_s=poll_s)


def follow_log(
    stream: FollowedFile | FollowedPipe,
    reporter: Reporter,
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    out: Path | None = None,
    force: bool = False,
    drop: float = DROP,
    model_name: str | None = None,
    metrics: bool = False,
    analysis_options: dict[str, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> FollowResult:
    """Follow `stream` until it ends, reporting to `reporter`; then its post-mortem.

    `out` keeps the typed tables (as `ingest --out` writes them; `force` as there). `drop` is the
    share below the stable window a sample must fall for a `throughput_drop` alert; `metrics`
    keeps the engine's metrics up to date for `reporter`'s server (`model_name` as for `export`).
    `analysis_options` go to the analysis (`min_samples`, `min_duration_s`, `concurrency`, ...).
    """
    started_cpu, started_wall = time.process_time(), time.monotonic()
    grammar = load_grammar(patterns)
    chosen = _engine(stream, grammar, engine, reporter)
    if chosen is None:
        return FollowResult(
            stream.name,
            None,
            0,
            stream.notes,
            None,
            None,
            reporter.alerts,
            time.process_time() - started_cpu,
            time.monotonic() - started_wall,
            0.0,
            0,
        )
    run = Path(stream.name).name if stream.name != "standard input" else "stdin"
    sink = FollowSink(
        source=stream.name,
        engine=chosen,
        outputs=reporter,
        watch=Watch(chosen, drop=drop),
        live_series=QueuedSeries(LiveSeries(chosen, run, model_name=model_name)) if metrics else None,
        analysis_options=dict(analysis_options or {}),
        clock=clock,
    )
    notes_seen = 0

    def idle() -> None:
        nonlocal notes_seen
        for note in stream.notes[notes_seen:]:
            reporter.view.note(note)
        notes_seen = len(stream.notes)
        sink.idle()

    stream.on_idle = idle
    mtime = _mtime(stream)
    result: IngestResult | None = None
    analysis: Analysis | None = None
    options = dict(analysis_options or {})

    def read_into(folder: Path) -> tuple[IngestResult, Analysis]:
        got = ingest_to_folder(
            cast(BinaryIO, stream),  # read with read1(n), as the core reads any stream
            folder,
            engine=chosen,
            year=year,
            tz=tz,
            patterns=patterns,
            workers=1,
            extra_sink=sink,
            name=stream.name,
            once=True,
            mtime=mtime,
        )
        idle()  # the notes of the end
        if _mark_guessed_dates(got, year=year, mtime=mtime):
            save_info(folder, got.info())
        frames = got.frames()
        return got, analyze(
            frames,
            engine=got.engine,
            source=got.source,
            read_stats=got.stats,
            times=got.times,
            grammar=got.grammar,
            **options,
        )

    try:
        if out is not None:
            with output_folder(out, force=force, sources=[stream.name]) as tmp:
                result, analysis = read_into(tmp)
        else:
            scratch = Path(tempfile.mkdtemp(prefix="logparse-follow-"))
            try:
                result, analysis = read_into(scratch)
            finally:
                remove_tree(scratch)
    finally:
        stream.close()
    return FollowResult(
        source=stream.name,
        engine=chosen,
        lines=result.lines,
        notes=list(stream.notes),
        analysis=analysis,
        ingest=result,
        alerts=reporter.alerts,
        cpu_s=time.process_time() - started_cpu,
        wall_s=time.monotonic() - started_wall,
        analysis_cpu_s=sink.analysis_cost_s,
        analyses=sink.analyses,
        folder=out,
    )


def _engine(
    stream: FollowedFile | FollowedPipe, grammar: Grammar, engine: str, reporter: Reporter
) -> str | None:
    """The engine to read with: `engine`, else detected from the first lines, waiting for more
    while the lines written so far do not tell; None when the stream ends before any line."""
    if engine != "auto":
        from logparse.ingest.run import choose_engine

        return choose_engine(grammar, engine, [], stream.name)[0]
    while True:
        lines = stream.head_lines(HEAD_LINES)
        if any(line.strip() for line in lines):
            try:
                return detect_engine(grammar, lines, name=for_terminal(stream.name))[0]
            except EngineNotDetected:
                if len(lines) >= HEAD_LINES or stream.ended or stream.stop.is_set():
                    raise
            reporter.view.waiting(f"{len(lines)} line(s) read: not yet enough to tell the engine")
        elif stream.ended or stream.stop.is_set():
            return None
        else:
            reporter.view.waiting(f"waiting for the first lines of {stream.name}")
        stream.pause()


def _mtime(stream: FollowedFile | FollowedPipe) -> Any:
    """The followed file's modification time when following began (None for a pipe)."""
    import datetime as dt

    if isinstance(stream, FollowedFile):
        return dt.datetime.fromtimestamp(os.fstat(stream.file.fileno()).st_mtime, tz=dt.UTC)
    return None


def _mark_guessed_dates(result: IngestResult, *, year: int | None, mtime: Any) -> bool:
    """A followed log is read once: the year (date) of stamps that print none was taken from
    `--year`, the file's modification time or today, and is marked guessed as such (True when
    it was)."""
    times = result.times
    if not (times.year_inferred or times.date_inferred):
        return False
    times.inferred_from = (
        "--year"
        if year is not None
        else "the file's modification time"
        if mtime is not None
        else "today (stdin has no mtime)"
    )
    return True


__all__ = ["FollowResult", "follow_log", "open_followed"]
