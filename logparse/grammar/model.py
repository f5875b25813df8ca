"""The loaded grammar: immutable objects built from `patterns/*.toml` by `logparse.grammar.load`.

A grammar reads a line from the message out:

* the *envelope* (`envelope.toml`, shared by every engine) says how to take off whatever surrounds
  an engine's message: JSON containers (`Container`), prefix *tokens* (`Token`: timestamps,
  levels, process and rank tags, file:line, logger names, container and scheduler prefixes), and the
  timestamp shapes (`Stamp`) a token's `ts` may take;
* each engine's file holds *rules* for its messages: `Rule` (one regex for one message shape) and
  `StatsRule` (a title and a list of `key: value` pairs, read by key so that keys in any order,
  missing or new still type the line).

Every token, stamp and rule carries real sample lines with the values they must yield;
`logparse.grammar.check` verifies them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard

import regex

FieldType = Literal["int", "float", "str", "bool", "floats"]
FIELD_TYPES: frozenset[str] = frozenset({"int", "float", "str", "bool", "floats"})


def is_field_type(name: object) -> TypeGuard[FieldType]:
    """Whether `name` is one of the field types (`FIELD_TYPES`)."""
    return name in FIELD_TYPES


# Columns every table has, in this order, before the kind's own fields.
COMMON_FIELDS: dict[str, FieldType] = {
    "line_no": "int",
    "ts": "str",
    "outer_ts": "str",
    "engine": "str",
    "rank": "str",
    "pid": "int",
    "level": "str",
    "task": "str",
    "prefix": "str",
    "rule": "str",
}
# Columns of every table that no parser fills: ingest adds `time`; `extra` is on kinds some stats
# rule reads (their type names are those of the tables, not of grammar fields).
ADDED_COLUMNS: dict[str, str] = {"time": "time", "extra": "pairs"}
# Named groups a token may capture (others must start with "_": captured, then dropped).
TOKEN_GROUPS = frozenset({"ts", "level", "rank", "pid", "task"})
# Named groups a stamp shape may capture.
STAMP_GROUPS = frozenset({"Y", "m", "d", "H", "M", "S", "f", "tz", "mon", "epoch"})
# Functions a rule's `derive` table may apply to a captured group ("count:sizes").
DERIVE_FUNCTIONS = frozenset({"count", "duration"})
REGEX_FLAGS = regex.ASCII | regex.V0
UNPARSED = "unparsed"


@dataclass(frozen=True)
class Sample:
    """A line the engine (or the wrapper) really printed, the values it must yield, and where it
    was seen (`source`: an issue URL, a file of a repository, a format reference)."""

    line: str
    expect: Mapping[str, Any]
    index: int
    source: str = ""


@dataclass(frozen=True)
class Stamp:
    """One timestamp shape, matched against a whole `ts` capture."""

    name: str
    pattern: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path
    source: str = ""


@dataclass(frozen=True)
class Token:
    """One kind of envelope prefix, taken off the start of what is left of a line (with the
    separator that follows it). `ts`, `level`, `rank`, `pid`, `task` are what it tells."""

    name: str
    pattern: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path
    source: str = ""
    # A CRI "P" flag: this line is the first part of a record the runtime split.
    partial_group: str | None = None


@dataclass(frozen=True)
class Container:
    """Where JSON log records keep the message and its time, level and process (dotted paths)."""

    message: tuple[str, ...]
    time: tuple[str, ...]
    level: tuple[str, ...]
    pid: tuple[str, ...]
    rank: tuple[str, ...]
    samples: tuple[Sample, ...] = ()


@dataclass(frozen=True)
class Envelope:
    """Everything that can surround a message, shared by every engine."""

    tokens: tuple[Token, ...]
    stamps: tuple[Stamp, ...]
    container: Container
    levels: Mapping[str, str]  # printed level (upper case) -> the level recorded
    months: Mapping[str, int]  # month name (lower case) -> number, for syslog stamps


@dataclass(frozen=True)
class Rule:
    """One message shape of one event kind, matched against the whole message."""

    name: str
    engine: str
    kind: str
    pattern: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path
    source: str = ""
    description: str = ""
    anchors: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()  # literal strings whose presence rules the line out
    # regexes searched in the message once the rule matched; their groups fill fields left empty
    find: tuple[regex.Pattern[str], ...] = ()
    levels: frozenset[str] | None = None
    fallback: bool = False
    constants: Mapping[str, Any] = field(default_factory=dict)
    types: Mapping[str, FieldType] = field(default_factory=dict)
    derive: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def marks(self) -> tuple[str, ...]:
        """Literal text every line of this rule's family holds (its anchors): how a line no rule
        typed is still recognised as, say, a stats line of a newer version."""
        return self.anchors

    @functools.cached_property
    def templates(self) -> dict[str, str]:
        """Constants that name captured fields, e.g. `what = "compile_graph: {shape}"`."""
        return {k: v for k, v in self.constants.items() if isinstance(v, str) and "{" in v}

    def groups(self) -> tuple[str, ...]:
        """Named groups that become fields (not `_private` ones), the `find` regexes' too."""
        names = [g for g in self.regex.groupindex if not g.startswith("_")]
        for pattern in self.find:
            names.extend(g for g in pattern.groupindex if not g.startswith("_"))
        return tuple(dict.fromkeys(names))

    def field_names(self) -> tuple[str, ...]:
        """Fields this rule can produce: named groups, constants, derived fields."""
        return tuple(dict.fromkeys((*self.groups(), *self.constants, *self.derive)))


@dataclass(frozen=True)
class StatsKey:
    """How one key of a stats line is read: into `field` (by its type, with an optional unit
    after the number), or by `value`, a regex whose named groups are fields. `pattern` is set for
    keys given as a regex (its named groups are fields too)."""

    key: str
    field: str | None = None
    units: tuple[str, ...] = ()
    value: regex.Pattern[str] | None = None
    value_pattern: str = ""
    pattern: regex.Pattern[str] | None = None
    key_pattern: str = ""

    def groups(self) -> tuple[str, ...]:
        """Fields named by the key pattern and the value regex."""
        names: list[str] = []
        for compiled in (self.pattern, self.value):
            if compiled is not None:
                names.extend(g for g in compiled.groupindex if not g.startswith("_"))
        return tuple(names)


@dataclass(frozen=True)
class StatsRule:
    """A stats message: a `title` regex, then `key: value` pairs separated by ", ".

    The pairs begin at one of the `first` keys; the line is this rule's when every `require` key is
    present. Keys no entry knows are kept in the event's `extra` column."""

    name: str
    engine: str
    kind: str
    title: str
    title_regex: regex.Pattern[str]
    first: tuple[str, ...]
    require: tuple[str, ...]
    unless: tuple[str, ...]  # keys whose presence rules the line out
    keys: Mapping[str, StatsKey]
    key_patterns: tuple[StatsKey, ...]
    samples: tuple[Sample, ...]
    file: Path
    source: str = ""
    description: str = ""
    levels: frozenset[str] | None = None
    constants: Mapping[str, Any] = field(default_factory=dict)
    types: Mapping[str, FieldType] = field(default_factory=dict)

    fallback = False
    derive: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def anchors(self) -> tuple[str, ...]:
        """No single literal: a stats line is found by its first key (see `first`)."""
        return ()

    @property
    def marks(self) -> tuple[str, ...]:
        """Literal text every line of this rule's family holds: the title's leading literal
        ("Decode batch") and the first key ("#running-req: ")."""
        return tuple(m for m in (literal_prefix(self.title), self.first[0] + ": ") if m)

    @functools.cached_property
    def templates(self) -> dict[str, str]:
        return {}

    def field_names(self) -> tuple[str, ...]:
        """Fields this rule can produce: title groups, key fields, constants."""
        names = [g for g in self.title_regex.groupindex if not g.startswith("_")]
        for entry in (*self.keys.values(), *self.key_patterns):
            if entry.field:
                names.append(entry.field)
            names.extend(entry.groups())
        return tuple(dict.fromkeys((*names, *self.constants)))


AnyRule = Rule | StatsRule

_QUANTIFIERS = frozenset("?*+{")
_STOPS = frozenset("()|.^$")


def literal_prefix(pattern: str) -> str:
    """The literal text a regex begins with, in verbose syntax (`Prefill[ ]batch(?:...` gives
    "Prefill batch"); "" when it begins with anything else. A character a quantifier follows is
    not part of it."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("[ ]", i):
            char, step = " ", 3
        elif ch == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            char, step = pattern[i + 1], 2
        elif ch.isspace():
            i += 1
            continue
        elif ch in _STOPS or ch in _QUANTIFIERS or ch in "[\\":
            break
        else:
            char, step = ch, 1
        if i + step < len(pattern) and pattern[i + step] in _QUANTIFIERS:
            break
        out.append(char)
        i += step
    return "".join(out)


@dataclass(frozen=True)
class EngineGrammar:
    """Everything one engine's grammar files declare."""

    name: str
    title: str
    files: tuple[Path, ...]
    rules: tuple[AnyRule, ...]
    markers: tuple[str, ...] = ()
    untyped_levels: frozenset[str] = frozenset()
    signatures: tuple[regex.Pattern[str], ...] = ()  # line shapes only this engine prints (detection)

    @property
    def stats_rules(self) -> tuple[StatsRule, ...]:
        """The rules read as `key: value` lists."""
        return tuple(r for r in self.rules if isinstance(r, StatsRule))


@dataclass(frozen=True)
class ColumnDoc:
    """What a column means, in its unit, as `kinds.toml` (or a user grammar) documents it."""

    unit: str = ""
    description: str = ""
    file: Path | None = None  # where it was declared, for `patterns check` messages


@dataclass(frozen=True)
class Derived:
    """A column ingest adds to a kind's table in one unit for one idea: the first source column
    of the row that is set, times its factor (`kv_usage_frac = { from = { gpu_kv_pct = 0.01 } }`)."""

    name: str
    sources: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Grammar:
    """All grammars: kind schemas, the envelope and one `EngineGrammar` per engine."""

    kinds: Mapping[str, Mapping[str, FieldType]]
    envelope: Envelope
    engines: Mapping[str, EngineGrammar]
    files: tuple[Path, ...]
    kind_docs: Mapping[str, str] = field(default_factory=dict)  # kind -> one-line description
    column_docs: Mapping[str, Mapping[str, ColumnDoc]] = field(default_factory=dict)  # kind -> column
    common_docs: Mapping[str, ColumnDoc] = field(default_factory=dict)  # the columns every table has
    derived: Mapping[str, tuple[Derived, ...]] = field(default_factory=dict)  # kind -> derived columns

    def field_type(self, rule: AnyRule, name: str) -> FieldType:
        """Type of field `name` as produced by `rule` (rule-declared types win)."""
        if name in rule.types:
            return rule.types[name]
        if name in COMMON_FIELDS:
            return COMMON_FIELDS[name]
        return self.kinds[rule.kind][name]

    def schema(self, kind: str) -> dict[str, FieldType]:
        """Field types of a kind, including fields only some rules declare."""
        out = dict(self.kinds.get(kind, {}))
        for engine in self.engines.values():
            for rule in engine.rules:
                if rule.kind == kind:
                    for name, typ in rule.types.items():
                        out.setdefault(name, typ)
        return out

    def has_extra(self, kind: str) -> bool:
        """Whether a kind's table has the `extra` column (some stats rule types it)."""
        return any(r.kind == kind for e in self.engines.values() for r in e.stats_rules)
