"""Stream one log into a folder of Parquet tables and compute its headline from those files."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logparse.grammar import Grammar, load_grammar
from logparse.reader import ReadStats, input_size, save_read_stats
from logparse.tables import LineCounts
from logparse.fastpath import progress as progress_mod
from logparse.fastpath.dataset import scan_tables
from logparse.fastpath.sinks import ParquetSink
from logparse.fastpath.stream import StreamOutcome, stream_log


@dataclass
class StreamedLog(LineCounts):
    """An ingested log whose tables are on disk: what `headline()` needs, tables as lazy scans."""

    source: str
    engine: str
    scores: dict[str, float]
    tables: dict[str, pl.LazyFrame]
    stats: ReadStats
    counts: dict[str, int] = field(default_factory=dict)
    grammar: Grammar | None = None


def stream_to_folder(log: str | Path, folder: Path, *, engine: str = "auto", year: int | None = None,
                     patterns: Sequence[str | Path] = (), layout: str = "flat", workers: int | None = None,
                     reference: bool = False, show_progress: bool = True,
                     cancel: threading.Event | None = None) -> tuple[StreamOutcome, Grammar]:
    """Parse `log` into `folder` (`<kind>.parquet`, or `kind=<kind>/part-00000.parquet` for `hive`)."""
    grammar = load_grammar(patterns)
    bar = None
    if show_progress and progress_mod.wanted(input_size(log)):
        bar = progress_mod.Progress()
    try:
        outcome, _ = stream_log(log, grammar, lambda: ParquetSink(folder, layout=layout), engine=engine,
                                year=year, reference=reference, workers=workers, progress=bar,
                                cancel=cancel)
    finally:
        if bar is not None:
            bar.close()
    save_read_stats(outcome.stats, folder)
    return outcome, grammar


def streamed_log(outcome: StreamOutcome, folder: Path, grammar: Grammar) -> StreamedLog:
    """The log as `headline()` reads it, tables scanned from `folder`."""
    return StreamedLog(source=outcome.source, engine=outcome.engine, scores=outcome.scores,
                       tables=scan_tables(folder, outcome.kinds), stats=outcome.stats, counts=outcome.counts, grammar=grammar)


def headline_facts(outcome: StreamOutcome, folder: Path, grammar: Grammar) -> dict[str, Any]:
    """The headline of a streamed log, computed from its Parquet files (lazy scans)."""
    from logparse.fastpath.profile import report, stage
    from logparse.headline import headline

    with stage("headline (lazy scans of the Parquet)"):
        facts = headline(streamed_log(outcome, folder, grammar))
    report(outcome.stats.bytes_read)
    return facts


def ingest_to_folder(log: str | Path, folder: Path, **options: Any) -> dict[str, Any]:
    """Parse `log` into `folder` and return its headline facts."""
    outcome, grammar = stream_to_folder(log, folder, show_progress=False, **options)
    return headline_facts(outcome, folder, grammar)


__all__ = ["StreamedLog", "headline_facts", "ingest_to_folder", "stream_to_folder", "streamed_log"]
