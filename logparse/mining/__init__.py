"""Mine the lines no rule understood: templates (`logparse unknown`) and rules suggested from them."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from logparse.grammar import Grammar, load_grammar
from logparse.mining.drain import Cluster, TemplateMiner
from logparse.parse import UNPARSED, LineParser
from logparse.pipeline import choose_engine
from logparse.reader import ReadStats, describe, read_lines


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


def mine_unparsed(path: str | Path, *, engine: str = "auto", patterns: Sequence[str | Path] = (),
                  miner: TemplateMiner | None = None) -> UnknownLines:
    """Read a log, parse it, and cluster the bodies of its `unparsed` lines into templates."""
    grammar = load_grammar(patterns)
    stats = ReadStats()
    name = describe(path)
    lines = read_lines(path, stats)
    engine, _, lines = choose_engine(grammar, engine, lines, name)
    parser = LineParser(grammar, engine)
    miner = miner or TemplateMiner()
    total = 0
    for line_no, text in lines:
        total += 1
        if parser.parse(line_no, text)["kind"] != UNPARSED:
            continue
        frame = parser.envelope(text)
        miner.add(line_no, text, frame.body, frame.envelope)
    return UnknownLines(name, engine, total, miner.lines, miner.clusters(), stats, grammar)


__all__ = ["Cluster", "TemplateMiner", "UnknownLines", "mine_unparsed"]
