"""Shared helpers of the ingest tests: a log read whole or in chosen blocks and threads, compared;
lines to mix."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
from polars.testing import assert_frame_equal

from logparse.grammar import load_grammar
from logparse.ingest import IngestResult, ingest
from logparse.ingest.run import stream_log

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
REAL_LOGS = ROOT.parent / "shared" / "real-logs"
PROJECT_CORPUS = FIXTURES / "real" / "corpus"


def corpus() -> list[tuple[str, Path]]:
    """(engine, path) of every fixture log and every real-log excerpt present."""
    # the project's labelled corpus holds excerpts of a few lines with no engine marker: its folder names the engine
    found = [("auto", p) for p in sorted(FIXTURES.glob("**/*.log")) if PROJECT_CORPUS not in p.parents]
    found += [(p.parent.name, p) for p in sorted(PROJECT_CORPUS.glob("*/*.log"))]
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
    assert_same_tables(want.tables, got.tables, label)


def whole(path: Path | str, engine: str = "auto", year: int | None = None) -> IngestResult:
    """The log read as one block on one thread: what every other split must give."""
    size = Path(path).stat().st_size if str(path) != "-" else 1 << 30
    outcome, tables = streamed(path, engine, year=year, block_bytes=size + 1, workers=1)
    return IngestResult(source=outcome.source, engine=outcome.engine, scores=outcome.scores, tables=tables,
                        stats=outcome.stats, counts=outcome.counts)


def streamed(path: Path | str, engine: str = "auto", *, year: int | None = None, block_bytes: int | None = None,
             workers: int | None = 1) -> tuple[Any, dict[str, pl.DataFrame]]:
    """An ingest through `stream_log` with chosen blocks and threads: (outcome, tables)."""
    outcome = stream_log(path, load_grammar(), engine=engine, year=year, block_bytes=block_bytes, workers=workers)
    tables: dict[str, pl.DataFrame] = {}
    for kind, batches in sorted(outcome.tables.items()):
        frame = pl.from_arrow(pa.Table.from_batches(batches))
        assert isinstance(frame, pl.DataFrame)
        tables[kind] = frame
    return outcome, tables


def sample_lines(engine: str) -> list[str]:
    """Every sample line of the engine's rules and of the envelope's tokens."""
    grammar = load_grammar()
    lines = [s.line for r in grammar.engines[engine].rules for s in r.samples]
    lines += [s.line for t in grammar.envelope.tokens for s in t.samples]
    return lines


def corpus_lines(engine: str) -> list[str]:
    """Distinct lines of the fixtures and real logs of `engine`, plus its sample lines."""
    seen: dict[str, None] = {}
    for eng, path in corpus():
        if eng == engine or (eng == "auto" and path.parent.name == engine):
            for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
                if line:
                    seen.setdefault(line, None)
    for line in sample_lines(engine):
        seen.setdefault(line, None)
    return list(seen)
