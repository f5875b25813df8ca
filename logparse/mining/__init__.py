"""Mine the lines no rule understood: templates (`logparse unknown`) and rules suggested from them."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from logparse.grammar import Grammar, load_grammar
from logparse.mining.drain import Cluster, TemplateMiner
from logparse.grammar import UNPARSED
from logparse.parse import LineParser
from logparse.ingest.reader import ReadStats, describe, read_lines


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
    from logparse.ingest.detect import HEAD_LINES
    from logparse.ingest.run import choose_engine

    head: list[tuple[int, str]] = []
    for item in read_lines(path, ReadStats()):
        head.append(item)
        if sum(bool(t.strip()) for _, t in head) >= HEAD_LINES:
            break
    engine, _ = choose_engine(grammar, engine, head, name)
    lines = read_lines(path, stats) if str(path) != "-" else iter(head)
    parser = LineParser(grammar, engine)
    miner = miner or TemplateMiner()
    total = 0
    for line_no, text in lines:
        total += 1
        if parser.parse(line_no, text)["kind"] != UNPARSED:
            continue
        frame = parser.frame(text)
        miner.add(line_no, text, frame.body, frame.notes[-1].source if frame.notes else "")
    return UnknownLines(name, engine, total, miner.lines, miner.clusters(), stats, grammar)


__all__ = ["Cluster", "TemplateMiner", "UnknownLines", "mine_unparsed"]
