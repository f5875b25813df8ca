"""Ingest one log block by block into sinks: the engine of `ingest()` and `logparse ingest`.

Memory stays bounded whatever the log's size: a few blocks are in flight (parsed on a small
thread pool: polars releases the GIL in its kernels), tables go to their sink block by block, and
`time` is derived in line order by `StreamTimes`. The tables equal those of the reference path
(`reference=True`: every line through `LineParser`, the same streaming around it).
"""
from __future__ import annotations

import datetime as dt
import itertools
import os
import stat
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

import polars as pl

from logparse.detect import HEAD_LINES, detect_engine
from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.grammar import Grammar
from logparse.parse import LineParser
from logparse.reader import (ReadStats, _decode, _note_changes, _UpTo, describe, input_mtime, open_log,
                             read_lines)
from logparse.fastpath.blocks import BLOCK_BYTES, Block, BlockSpool, iter_blocks
from logparse.fastpath.chunk import ChunkContext, ChunkResult, event_nulls, lines_from_bytes, process_chunk
from logparse.fastpath.plan import FAST_KINDS, EnginePlan, plan_for
from logparse.fastpath.profile import stage
from logparse.fastpath.times import Restart, StreamTimes

PROMOTE_MIN_LINES = 256  # a rule the reference path read this often in one block joins the fast path
PARALLEL_MIN_BYTES = 16 << 20  # below this, a few blocks: a second thread has little to do


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class Sink(Protocol):
    """Where the tables go: per block, `add` for each kind, then `end_block` (the block's frames
    together hold its lines, consecutive; `nulls` is `ChunkResult.nulls`)."""

    def add(self, kind: str, frame: pl.DataFrame) -> None: ...
    def end_block(self, nulls: Mapping[int, tuple[str, ...]]) -> None: ...
    def close(self) -> list[str]: ...
    def abort(self) -> None: ...


@dataclass
class StreamOutcome:
    """What streaming a log learned: everything but the tables (those are in the sink)."""

    source: str
    engine: str
    scores: dict[str, float]
    stats: ReadStats
    counts: dict[str, int]
    kinds: list[str] = field(default_factory=list)
    fast_lines: int = 0
    restarts: int = 0


def choose_engine(grammar: Grammar, engine: str, head: list[tuple[int, str]], name: str) -> tuple[str, dict[str, float]]:
    """The engine to read with: `engine`, or the one detected from the head lines."""
    if engine != "auto":
        if engine not in grammar.engines:
            known = ", ".join(sorted(grammar.engines))
            raise InputError(f"unknown engine {engine!r}; known engines: {known}")
        return engine, {engine: 1.0}
    if not any(text.strip() for _, text in head):
        # Nothing but blank lines: no engine to find, and any grammar gives the same tables.
        return sorted(grammar.engines)[0], {}
    return detect_engine(grammar, [text for _, text in head], name=for_terminal(name))


def _head_lines(path: str | Path) -> list[tuple[int, str]]:
    head: list[tuple[int, str]] = []
    non_empty = 0
    lines = read_lines(path, ReadStats())
    try:
        for item in lines:
            head.append(item)
            non_empty += bool(item[1].strip())
            if non_empty >= HEAD_LINES:
                break
    finally:
        lines.close()  # type: ignore[attr-defined]
    return head


def _block_lines(block: Block) -> list[str]:
    """The decoded lines of a block, as `read_lines` gives them."""
    if block.cut:
        return [_decode(block.data, ReadStats())]
    return [_decode(raw, ReadStats()) for raw in block.data.split(b"\n")[: block.lines]]


def _is_regular(path: str | Path) -> bool:
    if str(path) == "-":
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


class _Source:
    """The blocks of an input, readable again from the start (reopened, or replayed from a spool)."""

    def __init__(self, path: str | Path, block_bytes: int) -> None:
        self.path = path
        self.name = describe(path)
        self.block_bytes = block_bytes
        self.regular = _is_regular(path)
        self.size: int | None = None
        self.stream: BinaryIO | None = None
        self.stats = ReadStats()
        self.spool: BlockSpool | None = None
        self._live: Iterator[Block] | None = None
        self._buffered: list[Block] = []

    def open(self) -> None:
        self.stats = ReadStats()
        self.stream = open_log(self.path)
        snapshot = getattr(self.stream, "logparse_snapshot", None)
        if isinstance(snapshot, _UpTo):
            if self.size is None:
                self.size = snapshot.size
            elif snapshot.size != self.size:  # grew since the first reading: read what it held then
                snapshot.remaining = self.size - (snapshot.size - snapshot.remaining)
                snapshot.size = self.size
        self._live = iter_blocks(self.stream, self.stats, name=self.name, block_bytes=self.block_bytes)
        if not self.regular:
            self.spool = BlockSpool()

    def position(self) -> int:
        snapshot = getattr(self.stream, "logparse_snapshot", None)
        if isinstance(snapshot, _UpTo):
            return snapshot.size - snapshot.remaining
        return self.stats.bytes_read

    def peek_head(self) -> list[tuple[int, str]]:
        """The head lines for engine detection (from the blocks for a pipe, else a separate read)."""
        if self.regular:
            return _head_lines(self.path)
        assert self._live is not None
        head: list[tuple[int, str]] = []
        non_empty = 0
        for block in self._live:
            self._buffered.append(block)
            for i, text in enumerate(_block_lines(block)):
                head.append((block.first_line + i, text))
                non_empty += bool(text.strip())
                if non_empty >= HEAD_LINES:
                    return head
        return head

    def blocks(self) -> Iterator[Block]:
        assert self._live is not None
        for block in itertools.chain(self._buffered, self._live):
            if self.spool is not None and self.spool.active:
                self.spool.write(block)
            yield block
        self._buffered = []

    def restart(self) -> Iterator[Block]:
        """Blocks from the start again (stats of the first reading are kept for a pipe)."""
        if self.regular:
            self.close()
            self.open()
            return self.blocks()
        assert self.spool is not None and self.spool.active
        spool = self.spool
        self.spool = None  # the replay itself is not spooled again

        def replay() -> Iterator[Block]:
            yield from spool.replay()
            assert self._live is not None
            yield from itertools.chain(self._buffered, self._live)
            spool.close()
        self._buffered = []
        return replay()

    def stop_spooling(self) -> None:
        if self.spool is not None:
            self.spool.stop()

    def finish(self) -> None:
        if self.stream is not None and self.regular:
            _note_changes(self.path, getattr(self.stream, "logparse_snapshot", None), self.stats)

    def close(self) -> None:
        if self.stream is not None and self.stream is not sys.stdin.buffer:
            self.stream.close()
        self.stream = None
        if self.spool is not None:
            self.spool.close()


def _single_line_result(ctx: ChunkContext, block: Block, stats: ReadStats) -> ChunkResult:
    text = _decode(block.data, stats)
    event = ctx.parser.parse(block.first_line, text)
    frame = pl.from_dicts([event], schema=ctx.schema(event["kind"]), strict=False)
    if event["rule"] is not None:
        ctx.slow_rules[event["rule"]] += 1
    missing = event_nulls(event) if event["rule"] is not None else ()
    return ChunkResult(block.first_line, {event["kind"]: frame}, pl.Series("ts", [event["ts"]], dtype=pl.String),
                       Counter({event["kind"]: 1}), nulls={block.first_line: missing} if missing else {})


@dataclass
class _Decoded:
    stats: ReadStats
    slow_rules: Counter[str]
    result: ChunkResult


def _work(grammar: Grammar, engine: str, parser: LineParser, plan: EnginePlan | None, block: Block) -> _Decoded:
    stats = ReadStats()
    ctx = ChunkContext(grammar=grammar, engine=engine, parser=parser, plan=plan, stats=stats)
    if block.cut:
        result = _single_line_result(ctx, block, stats)
    else:
        with stage("lines into a column (read_csv)"):
            lines = lines_from_bytes(block.data)
        result = process_chunk(ctx, block.data, block.first_line, lines)
    return _Decoded(stats, ctx.slow_rules, result)


# -- parsing threads ------------------------------------------------------------------------------
class _Threads:
    """Threads that parse blocks while this one reads blocks and writes tables.

    Threads, not processes: nearly all the work of a block is polars kernels, which release the
    GIL, so a second core helps as much as a worker process would, without a second copy of polars
    and its memory (reports/bench.md, 307 MB log: 2 threads 5.9 s and 280 MB; 2 worker processes
    took 7.8 s and 538 MB).
    """

    def __init__(self, workers: int) -> None:
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="logparse-block")
        self.workers = workers

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)


def _merge_line_stats(into: ReadStats, part: ReadStats) -> None:
    into.invalid_utf8_lines += part.invalid_utf8_lines
    into.nul_lines += part.nul_lines
    into.longest_line = max(into.longest_line, part.longest_line)


def stream_log(
    path: str | Path,
    grammar: Grammar,
    sink_factory: Callable[[], Sink],
    *,
    engine: str = "auto",
    year: int | None = None,
    reference: bool = False,
    block_bytes: int | None = None,
    workers: int | None = 1,
    progress: Callable[[int, int | None], None] | None = None,
    kinds: frozenset[str] = FAST_KINDS,
    cancel: threading.Event | None = None,
) -> tuple[StreamOutcome, Sink]:
    """Parse `path` block by block into a sink made by `sink_factory` (a new one after a restart).

    `reference` reads every line with `LineParser` (no vectorised rules). `workers` threads parse
    blocks in parallel (1, the default: everything in this thread; None: `LOGPARSE_WORKERS`, else
    the usable cores for inputs of `PARALLEL_MIN_BYTES` or more). Each thread in flight holds a
    block and its frames, so memory grows by about 40 MB per thread. The tables do not depend on
    the number of threads. When `cancel` is set (by another thread), the run stops at the next
    block with `Cancelled`. Returns what was learned and the (closed) sink.
    """
    block_bytes = block_bytes or int(os.environ.get("LOGPARSE_BLOCK_BYTES", BLOCK_BYTES))
    source = _Source(path, block_bytes)
    source.open()
    pool = None
    try:
        if workers is None:
            env = os.environ.get("LOGPARSE_WORKERS")
            workers = int(env) if env else (usable_cores() if (source.size or 0) >= PARALLEL_MIN_BYTES else 1)
        if workers > 1:
            pool = _Threads(workers)
        head = source.peek_head()
        chosen, scores = choose_engine(grammar, engine, head, source.name)
        if not head and source.regular:
            pass
        parser = LineParser(grammar, chosen)
        known_year: int | None = None
        known_date: dt.date | None = None
        restarts = 0
        blocks = source.blocks()
        while True:
            sink = sink_factory()
            try:
                outcome = _run(grammar, chosen, parser, source, blocks, sink, year=year,
                               known=(known_year, known_date), reference=reference, pool=pool,
                               progress=progress, kinds=kinds, cancel=cancel)
            except Restart as again:
                sink.abort()
                restarts += 1
                if restarts > 3:
                    raise
                known_year, known_date = again.year, again.date
                blocks = source.restart()
                continue
            except BaseException:
                sink.abort()
                raise
            with stage("Parquet (encode, write)"):
                written = sink.close()
            source.finish()
            stats = source.stats
            _merge_line_stats(stats, outcome.line_stats)
            return StreamOutcome(source=source.name, engine=chosen, scores=scores, stats=stats,
                                 counts=dict(outcome.counts), kinds=written, fast_lines=outcome.fast_lines,
                                 restarts=restarts), sink
    finally:
        if pool is not None:
            pool.close()
        source.close()


@dataclass
class _RunResult:
    counts: Counter[str]
    line_stats: ReadStats
    fast_lines: int


def _run(grammar: Grammar, engine: str, parser: LineParser, source: _Source, blocks: Iterator[Block],
         sink: Sink, *, year: int | None, known: tuple[int | None, dt.date | None], reference: bool,
         pool: _Threads | None, progress: Callable[[int, int | None], None] | None,
         kinds: frozenset[str] = FAST_KINDS, cancel: threading.Event | None = None) -> _RunResult:
    times = StreamTimes(year=year, fallback=input_mtime(source.path), known_year=known[0], known_date=known[1])
    counts: Counter[str] = Counter()
    line_stats = ReadStats()
    promoted: set[str] = set()
    plan = None if reference else plan_for(grammar, engine, kinds=kinds)
    fast_lines = 0
    schemas: dict[str, dict[str, pl.DataType]] = {}
    from logparse.tables import kind_schema

    def finish(decoded: _Decoded) -> None:
        nonlocal plan, fast_lines
        result = decoded.result
        _merge_line_stats(line_stats, decoded.stats)
        with stage("time column"):
            time = times.feed(result.ts)
        if source.spool is not None and source.spool.active and _restart_impossible(times, year):
            source.stop_spooling()
        for kind, frame in result.frames.items():
            with stage("assembling blocks"):
                order = schemas.get(kind)
                if order is None:
                    order = schemas[kind] = kind_schema(grammar, kind)
                offsets = (frame.get_column("line_no") - result.first_line).cast(pl.UInt32)
                frame = frame.with_columns(time.gather(offsets).alias("time"))
                present = set(frame.columns)
                frame = frame.select([pl.col(c) if c in present else pl.lit(None, dtype=t).alias(c)
                                      for c, t in order.items()])
            with stage("Parquet (encode, write)"):
                sink.add(kind, frame)
        sink.end_block(result.nulls)
        counts.update(result.counts)
        fast_lines += result.fast_lines
        if plan is not None:
            hot = {rule for rule, n in decoded.slow_rules.items()
                   if n >= PROMOTE_MIN_LINES and rule not in plan.fast_rules and rule not in promoted}
            if hot:
                promoted.update(hot)
                plan = plan_for(grammar, engine, kinds=kinds, extra_rules=promoted)
        if progress is not None:
            progress(source.position(), source.size)

    if cancel is not None:
        blocks = _until(cancel, blocks)
    if pool is None:
        for block in _timed(blocks):
            finish(_work(grammar, engine, parser, plan, block))
    else:
        inflight: list[Future[_Decoded]] = []
        try:
            for block in blocks:
                if block.cut or block.lines < 64:  # not worth handing to a thread
                    inflight.append(_done(_work(grammar, engine, parser, plan, block)))
                else:
                    inflight.append(pool.executor.submit(_work, grammar, engine, parser, plan, block))
                while len(inflight) > pool.workers:
                    finish(inflight.pop(0).result())
            while inflight:
                finish(inflight.pop(0).result())
        finally:
            for future in inflight:
                future.cancel()
    return _RunResult(counts, line_stats, fast_lines)


def _timed(blocks: Iterator[Block]) -> Iterator[Block]:
    """`blocks`, the time spent reading them counted as a stage."""
    while True:
        with stage("reading blocks (I/O, newlines)"):
            block = next(blocks, None)
        if block is None:
            return
        yield block


class Cancelled(Exception):
    """The run was asked to stop (`stream_log(cancel=...)`)."""


def _until(cancel: threading.Event, blocks: Iterator[Block]) -> Iterator[Block]:
    """`blocks` until `cancel` is set."""
    for block in blocks:
        if cancel.is_set():
            raise Cancelled("stopped before the end of the log")
        yield block


def _done(value: _Decoded) -> Future[_Decoded]:
    future: Future[_Decoded] = Future()
    future.set_result(value)
    return future


def _restart_impossible(times: StreamTimes, year: int | None) -> bool:
    year_known = year is not None or times.found_year is not None
    return year_known and times.found_date is not None


__all__ = ["Cancelled", "StreamOutcome", "choose_engine", "stream_log"]
