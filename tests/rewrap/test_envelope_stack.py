"""Issue 12, the property: any stack of envelopes around any real row gives the same message.

A stack is 1-3 wrappers of `envelopes.py`: WHOLE_LINE ones composed (each around the line the
previous one printed), optionally one BODY wrapper innermost in place of the engine's own envelope.
Whatever the stack, the line must give the row's kind and labelled fields (those the unwrapped
line gives: see test_rewrap), `ts` from the innermost stamp (the engine's own, else the innermost
wrapper that prints one) and `outer_ts` from the outermost, as `logparse.ingest` (the compiled core) reads the line.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from envelopes import BODY, PRINTS, WHOLE_LINE
from hypothesis import given, settings
from hypothesis import strategies as st
from rewrap_corpus import ENGINES, body_level, events_by_line, expected, rows, same_value

from logparse.engine import compiled, core_available
from logparse.grammar import load_grammar
from logparse.ingest import ingest

pytestmark = pytest.mark.skipif(not core_available(), reason="the compiled core is not built")


@functools.cache
def _pool() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(engine, row) of every row whose unwrapped line gives its labelled kind and fields."""
    grammar = load_grammar()
    found = []
    for engine in ENGINES:
        engine_rows = list(rows(engine))
        events = compiled(grammar, engine).parse_lines([row["line"] for row in engine_rows], alone=True)
        for row, event in zip(engine_rows, events, strict=True):
            fields = expected("cri", row).fields
            if event["kind"] == row["kind"] and all(same_value(v, event.get(k)) for k, v in fields.items()):
                found.append((engine, row))
    return tuple(found)


@st.composite
def stacks(draw: st.DrawFn) -> tuple[str, dict[str, Any], str | None, list[str]]:
    """(engine, row, BODY wrapper or None, WHOLE_LINE wrappers innermost first): 1-3 layers."""
    engine, row = draw(st.sampled_from(_pool()))
    body = draw(st.one_of(st.none(), st.sampled_from(sorted(BODY))))
    most = 3 - (body is not None)
    outer = draw(st.lists(st.sampled_from(sorted(WHOLE_LINE)), min_size=0 if body else 1, max_size=most))
    return engine, row, body, outer


def _stamps(row: dict[str, Any], body: str | None, outer: list[str]) -> list[str]:
    """The stamps a stack prints whose value is known, innermost first."""
    inner = PRINTS[body].stamp if body else row["ts"]
    return [s for s in [inner, *(PRINTS[w].stamp for w in outer)] if s is not None]


def _line(row: dict[str, Any], body: str | None, outer: list[str]) -> str:
    text = BODY[body](row["body"], body_level(row)) if body else row["line"]
    for name in outer:
        text = WHOLE_LINE[name](text)
    return text


def _parse(line: str, engine: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stack.log"
        path.write_text(line + "\n", encoding="utf-8")
        return events_by_line(ingest(path, engine=engine).tables)[1]


@settings(max_examples=50, deadline=None)
@given(stacks())
def test_any_envelope_stack_gives_the_same_message_and_innermost_stamp(
    stack: tuple[str, dict[str, Any], str | None, list[str]],
) -> None:
    engine, row, body, outer = stack
    line = _line(row, body, outer)
    fields = expected("cri", row).fields
    stamps = _stamps(row, body, outer)
    event = _parse(line, engine)
    label = line[:200]
    assert event["kind"] == row["kind"], label
    wrong = {k: (v, event.get(k)) for k, v in fields.items() if not same_value(v, event.get(k))}
    assert not wrong, f"{label}: {wrong}"
    assert event["ts"] == (stamps[0] if stamps else None), label
    if len(stamps) > 1 and any(PRINTS[w].stamp for w in outer):
        assert event["outer_ts"] == stamps[-1], label
