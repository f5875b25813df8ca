"""The library entry point: read a log, detect its engine, parse every line into typed tables."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logparse.detect import HEAD_LINES, detect_engine
from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.grammar import Grammar, load_grammar
from logparse.parse import LineParser
from logparse.reader import ReadStats, describe, input_mtime, read_lines
from logparse.tables import LineCounts, TableBuilder

EventSink = Callable[[Mapping[str, Any]], None]


@dataclass
class IngestResult(LineCounts):
    """The tables of one log, and what was learned while reading it."""

    source: str
    engine: str
    scores: dict[str, float]
    tables: dict[str, pl.DataFrame]
    stats: ReadStats
    counts: dict[str, int] = field(default_factory=dict)
    grammar: Grammar | None = field(default=None, repr=False)  # the grammar the log was read with

    def __getitem__(self, kind: str) -> pl.DataFrame:
        return self.tables[kind]

    def get(self, kind: str) -> pl.DataFrame | None:
        """The table of `kind`, or None when the log has no such line."""
        return self.tables.get(kind)


def ingest(
    path: str | Path,
    *,
    engine: str = "auto",
    year: int | None = None,
    patterns: Sequence[str | Path] = (),
    on_event: EventSink | None = None,
    reference: bool = False,
) -> IngestResult:
    """Parse a vLLM or SGLang log (`-` for stdin, `.gz` accepted) into one DataFrame per kind.

    Parameters
    ----------
    path
        The log file. A folder of tables written by `logparse ingest --out` (one log's folder,
        or one `run=<name>` of a dataset) is read back instead of parsed.
    engine
        `auto` (detect from the head of the log), or an engine name such as `vllm`, `sglang`.
    year
        Year for timestamps that print none (vLLM), when the log itself shows no full date.
    patterns
        Extra grammar files (user rules), on top of the built-in ones and `LOGPARSE_PATTERNS`.
    on_event
        Called with every event in line order, e.g. to stream JSON lines (reads every line with
        the reference parser).
    reference
        Read every line with the reference per-line parser (`LineParser`) instead of the
        vectorised fast path. Both give the same tables; this one is slower.
    """
    from logparse.fastpath.dataset import is_table_folder, read_table_folder

    if is_table_folder(path):
        return read_table_folder(Path(path), patterns=patterns)
    if on_event is None and not reference:
        return _ingest_fast(path, engine=engine, year=year, patterns=patterns)
    return _ingest_reference(path, engine=engine, year=year, patterns=patterns, on_event=on_event)


def _ingest_fast(path: str | Path, *, engine: str, year: int | None,
                 patterns: Sequence[str | Path]) -> IngestResult:
    """The fast path, in memory: blocks of lines, high-volume kinds read vectorised."""
    from logparse.fastpath.sinks import MemorySink
    from logparse.fastpath.stream import stream_log

    grammar = load_grammar(patterns)
    outcome, sink = stream_log(path, grammar, MemorySink, engine=engine, year=year)
    assert isinstance(sink, MemorySink)
    return IngestResult(source=outcome.source, engine=outcome.engine, scores=outcome.scores,
                        tables=sink.tables(), stats=outcome.stats, counts=outcome.counts, grammar=grammar)


def _ingest_reference(path: str | Path, *, engine: str, year: int | None, patterns: Sequence[str | Path],
                      on_event: EventSink | None) -> IngestResult:
    """The reference path: every line through `LineParser`, tables built in memory."""
    grammar = load_grammar(patterns)
    stats = ReadStats()
    name = describe(path)
    lines = read_lines(path, stats)
    chosen, scores, lines = choose_engine(grammar, engine, lines, name)
    parser = LineParser(grammar, chosen)
    builder = TableBuilder(grammar)
    for event in parser.iter_events(lines):
        builder.add(event)
        if on_event is not None:
            on_event(event)
    tables = builder.finish(year=year, fallback_time=input_mtime(path))
    return IngestResult(source=name, engine=chosen, scores=scores, tables=tables, stats=stats,
                        counts=dict(builder.counts), grammar=grammar)


def choose_engine(grammar: Grammar, engine: str, lines: Iterator[tuple[int, str]],
                  name: str) -> tuple[str, dict[str, float], Iterator[tuple[int, str]]]:
    """The engine to parse with (`auto` detects it from the head) and the lines, head included."""
    if engine != "auto":
        if engine not in grammar.engines:
            known = ", ".join(sorted(grammar.engines))
            raise InputError(f"unknown engine {engine!r}; known engines: {known}")
        return engine, {engine: 1.0}, lines
    head: list[tuple[int, str]] = []
    non_empty = 0
    for item in lines:
        head.append(item)
        non_empty += bool(item[1].strip())
        if non_empty >= HEAD_LINES:
            break
    if non_empty == 0:
        # An empty or blank log has no engine to find; any grammar gives the same tables.
        return sorted(grammar.engines)[0], {}, iter(head)
    chosen, scores = detect_engine(grammar, [text for _, text in head], name=for_terminal(name))
    return chosen, scores, itertools.chain(head, lines)


