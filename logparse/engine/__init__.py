"""Block parsers: a block of a log's lines (bytes, as the reader cuts them) into one Arrow batch per
event kind plus every line's stamp parts. Two implementations give the same batches, value for
value: `CoreParser` (the compiled Rust core, the default) and `ReferenceParser` (the per-line Python
parser, the oracle)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from logparse.engine.batches import event_batches, kind_schema, stamp_batch
from logparse.grammar import Grammar
from logparse.parse import LineParser


@dataclass
class BlockResult:
    """What one block gave: batches per kind, stamp parts per line, and reading counts."""

    tables: dict[str, pa.RecordBatch]
    stamps: pa.RecordBatch
    counts: dict[str, int]
    lines: int
    invalid_utf8_lines: int = 0
    nul_lines: int = 0
    longest_line: int = 0
    reference_lines: int = 0  # lines the core left to the reference parser
    extra: dict[str, int] = field(default_factory=dict)


class BlockParser(Protocol):
    """Parses blocks of one engine's log."""

    engine: str

    def parse_block(self, data: bytes, n_lines: int, first_line: int) -> BlockResult: ...


def decode_line(raw: bytes) -> tuple[str, bool]:
    """A line's text (one trailing `\\r` dropped, invalid UTF-8 replaced) and whether it was invalid."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


class ReferenceParser:
    """Every line through `logparse.parse.LineParser`."""

    def __init__(self, grammar: Grammar, engine: str) -> None:
        self.grammar = grammar
        self.engine = engine
        self.lines = LineParser(grammar, engine)

    def parse_block(self, data: bytes, n_lines: int, first_line: int) -> BlockResult:
        raws = data.split(b"\n")[:n_lines]
        invalid = nul = longest = 0
        texts = []
        for raw in raws:
            text, bad = decode_line(raw)
            invalid += bad
            nul += b"\x00" in raw
            longest = max(longest, len(raw) - raw.endswith(b"\r"))
            texts.append(text)
        events = list(self.lines.parse_lines(zip(range(first_line, first_line + len(texts)), texts)))
        tables = event_batches(self.grammar, events)
        return BlockResult(
            tables=tables,
            stamps=stamp_batch(e["_time"] for e in events),
            counts={k: b.num_rows for k, b in tables.items()},
            lines=len(texts),
            invalid_utf8_lines=invalid,
            nul_lines=nul,
            longest_line=longest,
        )


def core_available() -> bool:
    """Whether the compiled core is built and importable."""
    try:
        from logparse import _core  # noqa: F401
    except ImportError:
        return False
    return True


_CORES: dict[tuple[int, str], tuple[Grammar, object, dict[str, str]]] = {}


def _compiled(grammar: Grammar, engine: str) -> tuple[object, dict[str, str]]:
    """The core compiled for a grammar's engine (cached while the grammar lives)."""
    from logparse import _core
    from logparse.engine.spec import build_spec

    key = (id(grammar), engine)
    found = _CORES.get(key)
    if found is None or found[0] is not grammar:
        spec = build_spec(grammar, engine)
        found = _CORES[key] = (grammar, _core.Core(json.dumps(spec.data)), spec.untranslatable)
    return found[1], found[2]


class CoreParser:
    """The compiled core; lines a rule it cannot run could take go to the reference parser."""

    def __init__(self, grammar: Grammar, engine: str) -> None:
        self.grammar = grammar
        self.engine = engine
        self.core, self.untranslatable = _compiled(grammar, engine)
        self._reference: LineParser | None = None

    def parse_block(self, data: bytes, n_lines: int, first_line: int) -> BlockResult:
        out = self.core.parse_block(data, n_lines, first_line)  # type: ignore[attr-defined]
        tables = {kind: pa.record_batch(batch) for kind, batch in out["tables"].items()}
        stamps = pa.record_batch(out["stamps"])
        result = BlockResult(
            tables=tables,
            stamps=stamps,
            counts=dict(out["counts"]),
            lines=out["lines"],
            invalid_utf8_lines=out["invalid_utf8_lines"],
            nul_lines=out["nul_lines"],
            longest_line=out["longest_line"],
        )
        if out["reference"]:
            self._merge_reference(result, out["reference"], first_line)
        return result

    def _merge_reference(self, result: BlockResult, lines: list[tuple[int, str]], first_line: int) -> None:
        """Parse the lines the core left, and put their rows and stamps in line order."""
        import pyarrow.compute as pc

        if self._reference is None:
            self._reference = LineParser(self.grammar, self.engine)
        events = [self._reference.parse(line_no, text) for line_no, text in lines]
        for kind, batch in event_batches(self.grammar, events).items():
            merged = pa.Table.from_batches(
                [b for b in (result.tables.get(kind), batch) if b is not None],
                schema=kind_schema(self.grammar, kind),
            )
            merged = merged.take(pc.sort_indices(merged["line_no"])).combine_chunks()
            result.tables[kind] = merged.to_batches()[0]
            result.counts[kind] = merged.num_rows
        stamps = result.stamps.to_pylist()
        for (line_no, _), event in zip(lines, events):
            parts = event["_time"]
            stamps[line_no - first_line] = stamp_batch([parts]).to_pylist()[0]
        result.stamps = pa.RecordBatch.from_pylist(stamps, schema=result.stamps.schema)
        result.reference_lines = len(lines)


def block_parser(grammar: Grammar, engine: str, *, reference: bool = False) -> BlockParser:
    """The block parser to read `engine`'s lines with: the core unless `reference` (or not built)."""
    if reference or not core_available():
        return ReferenceParser(grammar, engine)
    return CoreParser(grammar, engine)


__all__ = [
    "BlockParser",
    "BlockResult",
    "CoreParser",
    "ReferenceParser",
    "block_parser",
    "core_available",
    "decode_line",
]
