"""The envelope shapes of one engine's lines, as lnav `regex` entries.

logparse takes envelope tokens off a line one after another, in any order (the core's peeler);
lnav needs one regex per kind of line. A *shape* is the sequence of tokens the peeler takes off a
real line (the sources of the notes of the core's `_frame` of the line), a run of one token (nested
`(Name pid=N)` prefixes) counted once. The shapes exported are those of the grammar's own sample
lines: the engine's rule samples, and the envelope's samples the engine's rules type. Each shape's
regex is its tokens' regexes in order, each a run of atomic matches after optional blanks (the
peeler takes a token again while it matches and commits to its first match), then the message as
`body`. A body may not begin with a token that continues the shape into a longer exported shape,
so each sample is matched by its own shape only.

The groups follow logparse's columns: the innermost stamp is lnav's `timestamp` (logparse `ts`),
the outermost of several is `outer_ts`; `level`, `rank`, `pid`, `task` come from the innermost
token that has them.

Lines no shape fits (no stamp, a JSON record, a tqdm redraw before the record, a shape no sample
shows) are continuation lines of the message before them in lnav.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from logparse.engine import compiled
from logparse.grammar import UNPARSED, Grammar, Token
from logparse.grammar.model import TOKEN_GROUPS
from logparse.grammar.regex_ir import to_pcre

TIMESTAMP = "timestamp"
OUTER_TS = "outer_ts"
BODY = "body"
BLANKS = "[ \\t]*"


@dataclass(frozen=True)
class Line:
    """A sample line of the grammar and what logparse reads from it."""

    text: str
    origin: str  # "rule <name>" or "token <name>", with its source
    event: dict[str, Any]  # the core's event of the line (read alone), `_frame` its envelope


@dataclass
class Shape:
    """A sequence of tokens and the sample lines that have it."""

    slots: tuple[Token, ...]
    lines: list[Line] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "__".join(token.name for token in self.slots)

    def slot_names(self) -> list[dict[str, str | None]]:
        """Per slot, the name each token group is written with (None: not captured)."""
        has = [set(token.regex.groupindex) & TOKEN_GROUPS for token in self.slots]
        stamped = [i for i, groups in enumerate(has) if "ts" in groups]
        out: list[dict[str, str | None]] = []
        for i in range(len(has)):
            names: dict[str, str | None] = {}
            for group in sorted(TOKEN_GROUPS):
                if group == "ts":
                    names[group] = (
                        TIMESTAMP
                        if stamped and i == stamped[-1]
                        else OUTER_TS
                        if len(stamped) > 1 and i == stamped[0]
                        else None
                    )
                else:
                    innermost = max((j for j, g in enumerate(has) if group in g), default=-1)
                    names[group] = group if i == innermost else None
            out.append(names)
        return out

    def regex(self, guard: Sequence[Token] = ()) -> str:
        """The PCRE2 regex of this shape; the body may not begin with a `guard` token."""
        parts = ["^"]
        for token, names in zip(self.slots, self.slot_names()):
            parts.append(f"(?>(?:{BLANKS}(?>{to_pcre(token.pattern, rename=names).pattern}))+)")
        stop = "|".join(silent(token) for token in guard)
        parts.append(f"{BLANKS}(?<{BODY}>" + (f"(?!{stop})" if stop else "") + ".*)$")
        return "".join(parts)


def silent(token: Token) -> str:
    """A token's regex with no capturing group."""
    return to_pcre(token.pattern, rename=dict.fromkeys(token.regex.groupindex)).pattern


def sample_lines(grammar: Grammar, engine: str) -> list[Line]:
    """The engine's rule samples, then the envelope samples its rules type (each read alone by the
    core, in one call)."""
    rules = [
        (
            sample,
            f"rule {rule.name}"
            + (f" ({sample.source or rule.source})" if sample.source or rule.source else ""),
        )
        for rule in grammar.engines[engine].rules
        for sample in rule.samples
    ]
    tokens = [
        (sample, f"token {token.name}" + (f" ({sample.source})" if sample.source else ""))
        for token in grammar.envelope.tokens
        for sample in token.samples
    ]
    events = compiled(grammar, engine).parse_lines([s.line for s, _ in rules + tokens], alone=True)
    out = [
        Line(sample.line, where, event)
        for (sample, where), event in zip(rules, events[: len(rules)], strict=True)
    ]
    for (sample, where), event in zip(tokens, events[len(rules) :], strict=True):
        if event["kind"] != UNPARSED:
            out.append(Line(sample.line, where, event))
    return out


def slots_of(tokens: dict[str, Token], line: Line) -> tuple[Token, ...] | None:
    """The shape of a line, or None when lnav could not take it as the start of a message (no
    stamp, a JSON record, the part after a carriage return, a partial CRI line)."""
    frame = line.event["_frame"]
    if frame["partial"] or frame["outer"] or "\r" in line.text:
        return None
    names = [note["source"] for note in frame["notes"]]
    if not any(note["ts"] for note in frame["notes"]) or any(name not in tokens for name in names):
        return None
    slots: list[Token] = []
    for name in names:
        if not slots or slots[-1].name != name:
            slots.append(tokens[name])
    return tuple(slots)


def shapes_of(grammar: Grammar, lines: Iterable[Line]) -> tuple[list[Shape], list[Line]]:
    """The shapes of `lines` (in order of first appearance) and the lines that have none."""
    tokens = {token.name: token for token in grammar.envelope.tokens}
    shapes: dict[tuple[str, ...], Shape] = {}
    shapeless: list[Line] = []
    for line in lines:
        slots = slots_of(tokens, line)
        if slots is None:
            shapeless.append(line)
            continue
        key = tuple(token.name for token in slots)
        shapes.setdefault(key, Shape(slots)).lines.append(line)
    return list(shapes.values()), shapeless


def guard_of(shape: Shape, shapes: Iterable[Shape]) -> list[Token]:
    """The tokens that continue `shape` into a longer shape: its body may not begin with them."""
    n = len(shape.slots)
    mine = [token.name for token in shape.slots]
    found: dict[str, Token] = {}
    for other in shapes:
        if len(other.slots) > n and [token.name for token in other.slots[:n]] == mine:
            found.setdefault(other.slots[n].name, other.slots[n])
    return list(found.values())
