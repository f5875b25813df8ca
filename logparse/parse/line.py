"""Turn one line into exactly one event, from the message out: the reference parser.

For each line:

1. The envelope is peeled (`envelope.Peeler.peel`): what remains is the message (`body`).
2. Lines whose level the engine leaves untyped (vLLM's DEBUG records) stay `unparsed`.
3. The engine's regular rules are tried on the whole message, in grammar order.
4. If none takes it, they are searched in the line (`RegexRule.search`, `PairsRule.search`): a known
   message that ends the line is typed wherever it begins. The text before it is scanned for
   envelope tokens (`Peeler.scan`); what they do not explain is the event's `prefix`.
5. Then fallback rules (e.g. "any other WARNING") on the message; else the event is `unparsed`.

`ts` is the innermost stamp of the line, `outer_ts` the outermost when there are several; the most
complete stamp is kept (`_time`, not a column) for `time`. `rank`, `pid`, `level`, `task` come from
the innermost layer that prints them. A CRI partial line (`P`) is `unparsed` with rule `partial`:
its text is read with the line that completes it.

The parser is total: whatever a line holds, it returns an event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from logparse.grammar import UNPARSED, EngineGrammar, Grammar
from logparse.parse.envelope import Frame, Note, Peeler
from logparse.parse.rules import AnyMatcher, Fields, matcher_for
from logparse.parse.stamps import StampParts, read_stamp
from logparse.parse.text import MATCH_LIMIT, strip_ansi

PARTIAL_RULE = "partial"
COMMON_KEYS = (
    "kind",
    "line_no",
    "ts",
    "outer_ts",
    "engine",
    "rank",
    "pid",
    "level",
    "task",
    "prefix",
    "rule",
)


@dataclass(frozen=True)
class Reading:
    """What the layers around a message say, folded innermost-wins."""

    ts: str | None
    outer_ts: str | None
    level: str | None
    rank: str | None
    pid: int | None
    task: str | None
    stamp: StampParts | None


class LineParser:
    """Parses lines of one engine's log. Build once; `parse` per line, or `parse_lines` for a run
    of consecutive lines (which joins CRI partial lines)."""

    def __init__(self, grammar: Grammar, engine: str) -> None:
        self.grammar = grammar
        self.engine_name = engine
        self.engine: EngineGrammar = grammar.engines[engine]
        self.peeler = Peeler(grammar.envelope)
        matchers = [matcher_for(rule, grammar) for rule in self.engine.rules]
        self.regular: list[AnyMatcher] = [m for m in matchers if not m.rule.fallback]
        self.fallback: list[AnyMatcher] = [m for m in matchers if m.rule.fallback]
        self._pending: str | None = None
        self._stamps: dict[str, StampParts | None] = {}

    # -- layers ----------------------------------------------------------------------------------
    def frame(self, line: str, pending: str | None = None) -> Frame:
        """The envelope of a line: colour codes off, envelope peeled."""
        return self.peeler.peel(strip_ansi(line[:MATCH_LIMIT]), pending)

    def reading(self, notes: list[Note]) -> Reading:
        """Fold layer notes: innermost stamp is `ts`, outermost `outer_ts`, most complete for time."""
        stamps = [n.ts for n in notes if n.ts]
        best: StampParts | None = None
        for text in stamps:
            parts = self.stamp(text)
            if parts is not None and (best is None or parts.completeness >= best.completeness):
                best = parts
        return Reading(
            ts=stamps[-1] if stamps else None,
            outer_ts=stamps[0] if len(stamps) > 1 else None,
            level=_innermost(n.level for n in notes),
            rank=_innermost(n.rank for n in notes),
            pid=_innermost(n.pid for n in notes),
            task=_innermost(n.task for n in notes),
            stamp=best,
        )

    def stamp(self, text: str) -> StampParts | None:
        """The parts of a printed stamp (cached: stamps repeat line after line)."""
        if text not in self._stamps:
            if len(self._stamps) > 4096:
                self._stamps.clear()
            self._stamps[text] = read_stamp(self.grammar.envelope, text)
        return self._stamps[text]

    # -- rules -----------------------------------------------------------------------------------
    def match(self, frame: Frame) -> tuple[AnyMatcher, Fields, Reading, str | None] | None:
        """The rule that takes the line, its fields, the envelope reading and the prefix."""
        reading = self.reading(frame.notes)
        if (reading.level or "") in self.engine.untyped_levels:
            return None
        body = frame.body
        for matcher in self.regular:
            if matcher.allows_text(body) and matcher.allows_level(reading.level):
                fields = matcher.match_body(body)
                if fields is not None:
                    return matcher, fields, reading, None
        found = self.search(frame)
        if found is not None:
            return found
        for matcher in self.fallback:
            if matcher.allows_text(body) and matcher.allows_level(reading.level):
                fields = matcher.match_body(body)
                if fields is not None:
                    return matcher, fields, reading, None
        return None

    def search(self, frame: Frame) -> tuple[AnyMatcher, Fields, Reading, str | None] | None:
        """A regular rule's message found anywhere in the line (it must end the line)."""
        text = frame.text
        outer = frame.notes[: frame.outer]
        for matcher in self.regular:
            if not matcher.allows_text(text):
                continue
            found = matcher.search(text)
            if found is None:
                continue
            start, fields = found
            notes, prefix = self.peeler.scan(text[:start])
            reading = self.reading([*outer, *notes])
            if (reading.level or "") in self.engine.untyped_levels:
                return None
            if matcher.allows_level(reading.level):
                return matcher, fields, reading, prefix
        return None

    # -- whole lines -----------------------------------------------------------------------------
    def parse(self, line_no: int, line: str) -> dict[str, Any]:
        """Exactly one event for this line: a typed kind, or `unparsed` with the raw text."""
        frame = self.frame(line, self._pending)
        self._pending = frame.pending if frame.partial else None
        if frame.partial:
            return self._event(line_no, line, self.reading(frame.notes), None, None, PARTIAL_RULE)
        found = self.match(frame)
        if found is None:
            return self._event(line_no, line, self.reading(frame.notes), None, None, None)
        matcher, fields, reading, prefix = found
        return self._event(line_no, line, reading, fields, prefix, matcher.rule.name, kind=matcher.rule.kind)

    def parse_lines(self, lines: Iterable[tuple[int, str]]) -> Iterator[dict[str, Any]]:
        """One event per (line_no, text) pair, in order; CRI partial lines join their successor."""
        self._pending = None
        parse = self.parse
        for line_no, text in lines:
            yield parse(line_no, text)

    iter_events = parse_lines

    def _event(
        self,
        line_no: int,
        line: str,
        reading: Reading,
        fields: Fields | None,
        prefix: str | None,
        rule: str | None,
        *,
        kind: str = UNPARSED,
    ) -> dict[str, Any]:
        event: dict[str, Any] = {
            "kind": kind,
            "line_no": line_no,
            "ts": reading.ts,
            "outer_ts": reading.outer_ts,
            "engine": self.engine_name,
            "rank": reading.rank,
            "pid": reading.pid,
            "level": reading.level,
            "task": reading.task,
            "prefix": prefix,
            "rule": rule,
            "_time": reading.stamp,
        }
        if fields is None:
            event["raw"] = line
        else:
            event.update(fields)
        return event


def _innermost(values: Iterable[Any]) -> Any:
    found = None
    for value in values:
        if value is not None:
            found = value
    return found


def event_fields(event: dict[str, Any]) -> dict[str, Any]:
    """The kind-specific fields of an event (everything but the common columns and `_` keys)."""
    return {k: v for k, v in event.items() if k not in COMMON_KEYS and not k.startswith("_")}
