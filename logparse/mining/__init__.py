"""Mine the lines no rule understood: templates (`logparse unknown`) and rules suggested from them."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from logparse.detect import HEAD_LINES, detect_engine
from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.grammar import Grammar, load_grammar
from logparse.mining.drain import Cluster, TemplateMiner
from logparse.parse import UNPARSED, LineParser
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
    if engine == "auto":
        head = []
        non_empty = 0
        for item in lines:
            head.append(item)
            non_empty += bool(item[1].strip())
            if non_empty >= HEAD_LINES:
                break
        texts = [t for _, t in head]
        engine = (detect_engine(grammar, texts, name=for_terminal(name))[0] if head
                  else sorted(grammar.engines)[0])
        lines = itertools.chain(head, lines)
    elif engine not in grammar.engines:
        raise InputError(f"unknown engine {engine!r}; known engines: {', '.join(sorted(grammar.engines))}")
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
