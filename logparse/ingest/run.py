"""The one ingest: a log's blocks through a block parser, `time` added in line order, tables to a sink.

Memory stays bounded whatever the log's size: a few blocks are in flight (parsed on threads, the
compiled core releasing the GIL), tables go to their sink block by block. `time` is derived in line
order by `TimeResolver`; when the log itself says the first lines were misdated, the run starts
again from the first block (`Restart`).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from logparse.engine import BlockParser, BlockResult, block_parser
from logparse.engine.batches import kind_schema
from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.grammar import Grammar
from logparse.ingest.detect import detect_engine
from logparse.ingest.reader import BLOCK_BYTES, Block, ReadStats
from logparse.ingest.source import Source
from logparse.ingest.times import Restart, TimeFacts, TimeResolver
from logparse.store.schema import EXTRA, TIME
from logparse.store.units import add_derived

PARALLEL_MIN_BYTES = 16 << 20  # below this, a few blocks: a second thread has little to do
MAX_RESTARTS = 3
TIME_TYPE = pa.timestamp("us", tz="UTC")


class Sink(Protocol):
    """Where tables go, block by block (`add` per kind), then `close` (or `abort`)."""

    def add(self, kind: str, batch: pa.RecordBatch) -> None: ...
    def end_block(self) -> None: ...
    def close(self) -> list[str]: ...
    def abort(self) -> None: ...


def table_schema(grammar: Grammar, kind: str) -> pa.Schema:
    """A kind's table as the parsers give it, with `time` after `ts` (the derived columns are
    appended by `add_derived`)."""
    schema = kind_schema(grammar, kind)
    return schema.insert(schema.get_field_index("ts") + 1, pa.field(TIME, TIME_TYPE))


@dataclass
class Outcome:
    """What reading a log learned (the tables are in the sink)."""

    source: str
    engine: str
    scores: dict[str, float]
    stats: ReadStats
    counts: dict[str, int]
    kinds: list[str] = field(default_factory=list)
    times: TimeFacts = field(default_factory=TimeFacts)
    extra_keys: dict[tuple[str, str], int] = field(default_factory=dict)  # (rule, key) -> lines
    restarts: int = 0
    reference_lines: int = 0


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def choose_engine(
    grammar: Grammar, engine: str, head: list[tuple[int, str]], name: str
) -> tuple[str, dict[str, float]]:
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


class Cancelled(Exception):
    """The run was asked to stop (`stream_log(cancel=...)`)."""


def stream_log(
    path: str | Path,
    grammar: Grammar,
    sink_factory: Callable[[], Sink],
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    reference: bool = False,
    workers: int | None = None,
    block_bytes: int | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    cancel: threading.Event | None = None,
    mtime: dt.datetime | None = None,
) -> Outcome:
    """Parse `path` block by block into a sink made by `sink_factory` (a new one after a restart).

    `workers` threads parse blocks (None: the usable cores for inputs of `PARALLEL_MIN_BYTES` or
    more, else 1); the tables do not depend on it. `reference` reads every line with the Python
    reference parser. `cancel`, set by another thread, stops the run at the next block."""
    source = Source(path, block_bytes or int(os.environ.get("LOGPARSE_BLOCK_BYTES", BLOCK_BYTES)))
    source.open()
    pool: ThreadPoolExecutor | None = None
    try:
        if workers is None:
            env = os.environ.get("LOGPARSE_WORKERS")
            workers = int(env) if env else (usable_cores() if (source.size or 0) >= PARALLEL_MIN_BYTES else 1)
        if workers > 1:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="logparse-block")
        chosen, scores = choose_engine(grammar, engine, source.head(), source.name)
        parser = block_parser(grammar, chosen, reference=reference)
        known: tuple[int | None, dt.date | None] = (None, None)
        blocks = source.blocks()
        for restarts in range(MAX_RESTARTS + 1):
            sink = sink_factory()
            resolver = TimeResolver(
                year=year,
                zone=tz,
                mtime=mtime if mtime is not None else _mtime(path),
                known_year=known[0],
                known_date=known[1],
            )
            try:
                outcome = _run(
                    grammar,
                    parser,
                    source,
                    blocks,
                    sink,
                    resolver,
                    workers=workers,
                    pool=pool,
                    progress=progress,
                    cancel=cancel,
                )
                resolver.finish()
            except Restart as again:
                sink.abort()
                if restarts == MAX_RESTARTS:
                    break
                known = (
                    again.year if again.year is not None else known[0],
                    again.date if again.date is not None else known[1],
                )
                blocks = source.restart()
                continue
            except BaseException:
                sink.abort()
                raise
            outcome.kinds = sink.close()
            source.finish()
            _merge(source.stats, outcome.stats)
            outcome.stats = source.stats
            outcome.source, outcome.engine, outcome.scores = source.name, chosen, scores
            outcome.times, outcome.restarts = resolver.facts, restarts
            return outcome
        raise InputError(f"{for_terminal(source.name)}: its dates contradict each other; pass --year")
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        source.close()


def _mtime(path: str | Path) -> dt.datetime | None:
    if str(path) == "-":
        return None
    try:
        return dt.datetime.fromtimestamp(os.stat(path).st_mtime, tz=dt.UTC)
    except OSError:
        return None


def _merge(into: ReadStats, part: ReadStats) -> None:
    into.invalid_utf8_lines += part.invalid_utf8_lines
    into.nul_lines += part.nul_lines
    into.longest_line = max(into.longest_line, part.longest_line)


def _parse(parser: BlockParser, block: Block) -> BlockResult:
    return parser.parse_block(block.data, block.lines, block.first_line)


def _run(
    grammar: Grammar,
    parser: BlockParser,
    source: Source,
    blocks: Iterator[Block],
    sink: Sink,
    resolver: TimeResolver,
    *,
    workers: int,
    pool: ThreadPoolExecutor | None,
    progress: Callable[[int, int | None], None] | None,
    cancel: threading.Event | None,
) -> Outcome:
    counts: Counter[str] = Counter()
    stats = ReadStats()
    extra: Counter[tuple[str, str]] = Counter()
    reference_lines = 0
    schemas: dict[str, pa.Schema] = {}

    def finish(result: BlockResult, first_line: int) -> None:
        nonlocal reference_lines
        stats.invalid_utf8_lines += result.invalid_utf8_lines
        stats.nul_lines += result.nul_lines
        stats.longest_line = max(stats.longest_line, result.longest_line)
        reference_lines += result.reference_lines
        times = resolver.feed(result.stamps)
        if (
            source.spool is not None
            and source.spool.active
            and resolver.facts.inferred_from is None
            and resolver.facts.exact + resolver.facts.naive > 0
        ):
            source.stop_spooling()
        for kind, batch in result.tables.items():
            schema = schemas.get(kind)
            if schema is None:
                schema = schemas[kind] = table_schema(grammar, kind)
            offsets = pc.subtract(batch.column("line_no"), first_line)
            at = batch.schema.get_field_index("ts") + 1
            timed = pa.RecordBatch.from_arrays(
                [*batch.columns[:at], pc.take(times, offsets), *batch.columns[at:]], schema=schema
            )
            sink.add(kind, add_derived(grammar, kind, timed))
            if EXTRA in batch.schema.names:
                extra.update(_extra_keys(batch))
        sink.end_block()
        if resolver.settled and hasattr(sink, "settle"):
            sink.settle()
        counts.update(result.counts)
        if progress is not None:
            progress(source.position(), source.size)

    inflight: list[tuple[Future[BlockResult], int]] = []
    for block in _until(cancel, blocks):
        if pool is None:
            finish(_parse(parser, block), block.first_line)
            continue
        inflight.append((pool.submit(_parse, parser, block), block.first_line))
        while len(inflight) > workers:
            future, first = inflight.pop(0)
            finish(future.result(), first)
    while inflight:
        future, first = inflight.pop(0)
        finish(future.result(), first)
    return Outcome(
        source="",
        engine="",
        scores={},
        stats=stats,
        counts=dict(counts),
        extra_keys=dict(extra),
        reference_lines=reference_lines,
    )


def _extra_keys(batch: pa.RecordBatch) -> Mapping[tuple[str, str], int]:
    """(rule, key) -> lines, for the keys no vocabulary knew."""
    column = batch.column(EXTRA)
    if column.null_count == len(column):
        return {}
    rules = batch.column("rule")
    found: Counter[tuple[str, str]] = Counter()
    for rule, pairs in zip(rules.to_pylist(), column.to_pylist()):
        for key in {p["key"] for p in pairs or ()}:
            found[(rule or "", key)] += 1
    return found


def _until(cancel: threading.Event | None, blocks: Iterator[Block]) -> Iterator[Block]:
    for block in blocks:
        if cancel is not None and cancel.is_set():
            raise Cancelled("stopped before the end of the log")
        yield block
