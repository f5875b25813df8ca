"""Shared helpers of the fast-path tests: compare an ingest with the reference, read lines to mix."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
from polars.testing import assert_frame_equal

from logparse.grammar import load_grammar
from logparse.ingest import IngestResult, ingest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
REAL_LOGS = ROOT.parent / "shared" / "real-logs"


def corpus() -> list[tuple[str, Path]]:
    """(engine, path) of every fixture log and every real-log excerpt present."""
    found = [("auto", p) for p in sorted(FIXTURES.glob("**/*.log"))]
    found += [(p.parent.name, p) for p in sorted(REAL_LOGS.glob("*/*.log"))]
    return found


def assert_same_tables(want: Mapping[str, pl.DataFrame], got: Mapping[str, pl.DataFrame], label: str = "") -> None:
    """The same kinds, and every table equal (columns, types, values, row order)."""
    assert sorted(got) == sorted(want), f"{label}: kinds {sorted(got)} != {sorted(want)}"
    for kind, frame in want.items():
        try:
            assert_frame_equal(got[kind], frame)
        except AssertionError as exc:
            raise AssertionError(f"{label}: table {kind} differs: {exc}") from None


def assert_same_ingest(want: IngestResult, got: Any, label: str = "") -> None:
    """Tables, counts, engine and read statistics all equal."""
    assert got.engine == want.engine, label
    assert dict(got.counts) == dict(want.counts), label
    assert got.stats == want.stats, label
    assert_same_tables(want.tables, got.tables if hasattr(got, "tables") else got, label)


def reference(path: Path | str, engine: str = "auto", year: int | None = None) -> IngestResult:
    return ingest(path, engine=engine, year=year, reference=True)


def sample_lines(engine: str) -> list[str]:
    """Every sample line of the engine's rules, envelopes, fast envelopes, and of the wrappers."""
    grammar = load_grammar()
    eg = grammar.engines[engine]
    lines = [s.line for r in eg.rules for s in r.samples]
    lines += [s.line for e in eg.envelopes for s in e.samples]
    lines += [s.line for e in eg.fast_envelopes for s in e.samples]
    lines += [s.line for w in grammar.wrappers for s in w.samples]
    return lines


def corpus_lines(engine: str) -> list[str]:
    """Distinct lines of the fixtures and real logs of `engine`, plus its sample lines."""
    seen: dict[str, None] = {}
    for eng, path in corpus():
        if eng in (engine, "auto") and (eng == engine or path.parent.name == engine):
            for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
                if line:
                    seen.setdefault(line, None)
    for line in sample_lines(engine):
        seen.setdefault(line, None)
    return list(seen)
