"""Mine the lines no rule understood: templates (`logparse unknown`) and rules suggested from them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from logparse.engine import compiled
from logparse.grammar import UNPARSED, Grammar, load_grammar
from logparse.ingest import ingest
from logparse.ingest.reader import ReadStats
from logparse.mining.drain import Cluster, TemplateMiner

BATCH_LINES = 8192  # unparsed lines handed to the core at a time, to have their envelopes peeled


@dataclass
class UnknownLines:
    """The templates of a log's unparsed lines."""

    source: str
    engine: str
    lines: int
    unparsed: int
    templates: list[Cluster]
    stats: ReadStats
    grammar: Grammar


def mine_unparsed(
    path: str | Path,
    *,
    engine: str = "auto",
    patterns: Sequence[str | Path] = (),
    year: int | None = None,
    tz: str | None = None,
    miner: TemplateMiner | None = None,
) -> UnknownLines:
    """Read a log (`engine`, `patterns`, `year`, `tz` as for `logparse.ingest`), parse it, and
    cluster the bodies of its `unparsed` lines into templates."""
    result = ingest(path, engine=engine, year=year, tz=tz, patterns=patterns)
    grammar = result.grammar or load_grammar(patterns)
    miner = miner or TemplateMiner()
    unparsed = result.tables.get(UNPARSED)
    if unparsed is not None and result.engine is not None:
        core = compiled(grammar, result.engine)
        rows = unparsed.lazy().select("line_no", "raw").collect()
        # the core peels the envelope of each unparsed line again, for its message
        for batch in rows.iter_slices(BATCH_LINES):
            texts = batch["raw"].to_list()
            events = core.parse_lines(texts, alone=True)
            for line_no, text, event in zip(batch["line_no"].to_list(), texts, events, strict=True):
                frame = event["_frame"]
                notes = frame["notes"]
                miner.add(line_no, text, frame["body"], notes[-1]["source"] if notes else "")
    return UnknownLines(
        result.source, result.engine or "", result.lines, miner.lines, miner.clusters(), result.stats, grammar
    )


__all__ = ["Cluster", "TemplateMiner", "UnknownLines", "mine_unparsed"]
