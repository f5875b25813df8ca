"""An engine's message rules as lnav search tables, so `;SELECT` reads their fields.

lnav types a line with the format's regexes only (here: the envelope shapes), so the fields of a
message live in *search tables*: a regex searched in every message of the format, one row per
match, one column per named group (plus the format's own columns: `log_time`, `log_level`,
`rank`, `pid`, ...). Each rule gets one table, `<engine>_<rule>`:

* a message rule: its regex, found where it ends a line (trailing blanks aside) after a non-word
  character, as logparse searches a line (`engine.spec.SEARCH_HEAD`); its `anchor` strings must
  be on the line and its `unless` strings must not; its `find` regexes are optional look-aheads,
  so their fields fill columns too. When the rule's own samples show that searching from the
  start of the line reads a field otherwise than logparse (a message regex that can begin inside
  the envelope, such as `(?P<message>.*)`), the search begins after the envelope tokens instead
  (each taken atomically, in grammar order, as the peeler takes them);
* a stats rule: its title, then `key: value` pairs in any order, each read by the rule's
  vocabulary (a number with one of its units, a value regex, a key pattern) and any other key
  skipped; `require` and `unless` keys are look-aheads.

Lines whose envelope prints a level the engine leaves untyped (vLLM's DEBUG) are not matched; a
rule's `levels` become the table's `level` when they are one lnav level.

What a table cannot hold: constants (`set`), templates and derived fields, the `extra` pairs, and
numbers printed with thousands separators (their column is NULL). A field captured in several
places of one regex has a column per place (`x`, `x__2`, ...): lnav needs every group of a search
table to have its own number. lnav types a column by what its group can match (integer, float,
text), so `bool` and `floats` fields are text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence

import regex

from logparse.engine import convert
from logparse.export.lnav_levels import lnav_level
from logparse.grammar import EngineGrammar, FieldType, Grammar, Rule, StatsKey, StatsRule, Token
from logparse.grammar.model import TOKEN_GROUPS
from logparse.grammar.regex_ir import Inexpressible, NestedGroup, Pattern, leading_flags, to_pcre

_NAMED = re.compile(r"\(\?P<\w+>")
_WORD = "A-Za-z0-9_"
# A stats key: text up to ": " holding no ", " (as the core splits a stats line, core/src/stats.rs)
_KEY = r"(?:(?!, |: ).)+"
_NEXT = rf", {_KEY}: "
_END = rf"(?={_NEXT}|[ \t,.]*$)"
_VALUE = rf"(?:(?!{_NEXT}).)*?"
# What logparse takes off the end of a message (`clean_tail` in core/src/text.rs): Ray's repeat
# note, a terminal border, blanks
_TAIL = "(?:[ \\t]*\\[repeated [0-9]{1,12}x across cluster\\])?[ \\t]*(?:\u2502[ \\t]*)?$"
_INT = r"-?[0-9]+"
_FLOAT = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|-?nan|-?inf"
# What lnav's type guess tries a search-table group on (lnav's sql_util.cc, TYPE_TEST_VALUE)
_GUESSES = (("text", "foobar"), ("integer", "123"), ("float", "123.0"), ("text", "127.0.0.1"))


@dataclasses.dataclass(frozen=True)
class Table:
    """One rule as a search table."""

    name: str
    rule: str
    kind: str
    source: str  # the pattern in Python syntax (before the translation)
    pattern: Pattern
    level: str | None
    rule_fields: tuple[str, ...]  # the fields the rule gives (`extra` for a stats rule)
    types: Mapping[str, FieldType] = dataclasses.field(default_factory=dict)  # field -> logparse type
    columns: Mapping[str, str] = dataclasses.field(default_factory=dict)  # column -> lnav type

    @property
    def left_out(self) -> tuple[str, ...]:
        """The rule's fields no column holds."""
        held = set(self.pattern.fields.values())
        return tuple(f for f in self.rule_fields if f not in held)

    def entry(self) -> dict[str, str]:
        """The table's lnav `search-table` entry."""
        out = {"pattern": self.pattern.pattern}
        if self.level:
            out["level"] = self.level
        return out


def table_name(engine: str, rule: str) -> str:
    """The SQL name of a rule's table."""
    return re.sub(r"\W", "_", f"{engine}_{rule}")


def rule_tables(
    grammar: Grammar, engine: str, envelope: Sequence[Token] = ()
) -> tuple[list[Table], list[str]]:
    """The tables of an engine's rules, and a note per rule that has none (and why). `envelope`:
    the tokens a message may follow, for rules that must be searched after them."""
    engine_grammar = grammar.engines[engine]
    tables: list[Table] = []
    notes: list[str] = []
    for rule in engine_grammar.rules:
        if rule.fallback:
            notes.append(
                f"{rule.name}: a fallback rule (any other {'/'.join(sorted(rule.levels or ()))} line)"
            )
            continue
        try:
            table = rule_table(grammar, engine_grammar, rule)
            if isinstance(rule, Rule) and envelope and sample_problems(grammar, rule, table):
                after = rule_table(grammar, engine_grammar, rule, envelope)
                if len(sample_problems(grammar, rule, after)) < len(sample_problems(grammar, rule, table)):
                    table = after
        except Inexpressible as exc:
            notes.append(f"{rule.name}: {exc}")
            continue
        tables.append(table)
    return _exclusive(grammar, engine_grammar, tables), notes


def _exclusive(grammar: Grammar, engine: EngineGrammar, tables: list[Table]) -> list[Table]:
    """Each table with the lines of other rules left out where its search finds their samples
    (logparse gives a line to one rule; a search anywhere in the line can find another's
    message in it, e.g. a title-less stats rule inside a titled one's line)."""
    rules = {rule.name: rule for rule in engine.rules}
    compiled = {table.rule: regex.compile(table.pattern.pattern, regex.V0) for table in tables}
    out = []
    for table in tables:
        others = [
            other
            for other in tables
            if other.rule != table.rule
            and any(compiled[table.rule].search(sample.line) for sample in rules[other.rule].samples)
        ]
        if others:
            excluded = _with_source(
                table,
                "^" + "".join(f"(?!{_NAMED.sub('(?:', o.source[1:])})" for o in others) + table.source[1:],
            )
            if len(sample_problems(grammar, rules[table.rule], excluded)) <= len(
                sample_problems(grammar, rules[table.rule], table)
            ):
                table = excluded
        out.append(table)
    return out


def rule_table(
    grammar: Grammar, engine: EngineGrammar, rule: Rule | StatsRule, envelope: Sequence[Token] = ()
) -> Table:
    """The search table of one rule, searched after `envelope` tokens when given (raises
    `Inexpressible`)."""
    if isinstance(rule, StatsRule):
        source = _stats_source(grammar, engine, rule)
    else:
        source = _message_source(engine, rule, envelope)
    table = Table(
        name=table_name(engine.name, rule.name),
        rule=rule.name,
        kind=rule.kind,
        source=source,
        pattern=Pattern(""),
        level=_level(rule.levels),
        rule_fields=(*rule.field_names(), *("extra",) * isinstance(rule, StatsRule)),
        types={f: grammar.field_type(rule, f) for f in rule.field_names()},
    )
    return _with_source(table, source)


def _with_source(table: Table, source: str) -> Table:
    """`table` with its pattern and columns made from `source` (Python syntax). A field whose
    group holds others inside a repetition has no column (its inner fields have)."""
    rename: dict[str, str | None] = dict.fromkeys(TOKEN_GROUPS)
    while True:
        try:
            pattern = to_pcre(source, branch_reset=False, rename=rename)
            break
        except NestedGroup as exc:
            if exc.field in rename:
                raise
            rename[exc.field] = None
    misread = {
        pattern.fields[name]
        for name, text in pattern.captures.items()
        if _misread(table.types.get(pattern.fields[name], "str"), text)
    }
    if misread:
        pattern = to_pcre(source, branch_reset=False, rename=rename, as_text=misread)
    pattern = Pattern("(?m)" + pattern.pattern, pattern.fields, pattern.captures)
    columns = {name: guess_type(text) for name, text in pattern.captures.items()}
    return dataclasses.replace(table, source=source, pattern=pattern, columns=columns)


def _misread(field_type: FieldType, capture: str) -> bool:
    """Whether lnav would read a column's values wrong as the number its group's text makes it:
    a text field (a `floats` list "1, 2, 4" read as 1) or a number that may hold thousands
    separators ("2,687,776" read as 2). Such a column is kept as text."""
    if column_type(field_type) == "text":
        return guess_type(capture) != "text"
    compiled = regex.compile(capture, regex.V0)
    return any(compiled.fullmatch(text) for text in ("1,234", "1_234", "1,234.5"))


def guess_type(capture: str) -> str:
    """The type lnav gives a search-table column from its group's text: the test values the
    group's first match reads whole (one number kind: that kind; both: float; else text)."""
    compiled = regex.compile(capture, regex.V0)
    matched = []
    for kind, value in _GUESSES:
        m = compiled.match(value)
        if m is not None and m.end() == len(value):
            matched.append(kind)
    if matched in (["integer"], ["float"]):
        return matched[0]
    return "float" if matched == ["integer", "float"] else "text"


def column_type(field_type: FieldType) -> str:
    """The lnav type a logparse field type should have."""
    return {"int": "integer", "float": "float"}.get(field_type, "text")


# -- patterns -------------------------------------------------------------------------------------
def _message_source(engine: EngineGrammar, rule: Rule, envelope: Sequence[Token]) -> str:
    flags, inner = _split_flags(rule.pattern)
    checks = "".join(f"(?!.*?{re.escape(u)})" for u in rule.unless)
    checks += "".join(f"(?=.*?{re.escape(a)})" for a in rule.anchors)
    checks += "".join(f"(?=(?:.*?(?:{_inline(f.pattern)}))?)" for f in rule.find)
    skip = ""
    if envelope:
        tokens = "|".join(f"(?:{_inline(token.pattern)})" for token in envelope)
        skip = f"(?>(?:[ \\t]*(?>{tokens}))*)[ \\t]*"
    return f"^{checks}{skip}{_prefix(engine)}(?<![{_WORD}])(?{flags}:{inner})(?<![ \\t]){_TAIL}"


def _stats_source(grammar: Grammar, engine: EngineGrammar, rule: StatsRule) -> str:
    flags, title = _split_flags(rule.title)
    first = _keys(rule.first)
    checks = "".join(f"(?=(?:.*?, )?{_keys([k])}: )" for k in rule.require)
    checks += "".join(f"(?!(?:.*?, )?{_keys([k])}: )" for k in rule.unless)
    pair = "(?:" + "|".join([*_pair_alternatives(grammar, rule), f"{_KEY}: {_VALUE}{_END}"]) + ")"
    return (
        f"^{_prefix(engine)}(?<![{_WORD}])(?{flags}:{title})(?={first}: ){checks}"
        f"(?:(?:, )?{pair})+[ \\t,.]*{_TAIL}"
    )


def _pair_alternatives(grammar: Grammar, rule: StatsRule) -> list[str]:
    """One alternative per way of reading a pair: exact keys read alike share one."""
    by_reading: dict[tuple[object, ...], list[str]] = {}
    for key, entry in rule.keys.items():
        reading = (entry.field, entry.units, entry.value_pattern)
        by_reading.setdefault(reading, []).append(key)
    out = []
    for keys in by_reading.values():
        entry = rule.keys[keys[0]]
        out.append(f"{_keys(keys)}: {_value(grammar, rule, entry)}")
    for entry in rule.key_patterns:
        out.append(f"(?={_KEY}: )(?:{_inline(entry.key_pattern)}): {_value(grammar, rule, entry)}")
    return out


def _value(grammar: Grammar, rule: StatsRule, entry: StatsKey) -> str:
    parts = []
    if entry.value is not None:
        whole = f"(?:{_inline(entry.value_pattern)}){_END}"
        parts.append(whole if entry.field is None else f"(?={whole})")
    if entry.field is not None:
        typ = grammar.field_type(rule, entry.field)
        units = "".join(f"(?:{_keys(entry.units)})?") if entry.units else ""
        if typ == "int":
            parts.append(rf"(?P<{entry.field}>{_INT})(?:\.[0-9]+)?[ ]*{units}{_END}")
        elif typ == "float":
            parts.append(rf"(?P<{entry.field}>{_FLOAT})[ ]*{units}{_END}")
        else:
            parts.append(f"(?P<{entry.field}>{_VALUE}){_END}")
    return "".join(parts)


def _prefix(engine: EngineGrammar) -> str:
    """What may come before a message: anything but a level word the engine leaves untyped."""
    if not engine.untyped_levels:
        return ".*?"
    words = "|".join(re.escape(w) for w in sorted(engine.untyped_levels))
    return f"(?:(?!(?<![{_WORD}])(?i:{words})(?![{_WORD}])).)*?"


def _keys(keys: Iterable[str]) -> str:
    ordered = sorted(keys, key=lambda k: (-len(k), k))
    return "(?:" + "|".join(re.escape(k) for k in ordered) + ")"


def _split_flags(pattern: str) -> tuple[str, str]:
    """A pattern's leading inline flags (those a scoped group takes) and the rest."""
    letters, rest = leading_flags(pattern)
    return "".join(ch for ch in letters if ch in "imsx"), rest


def _inline(pattern: str) -> str:
    """A pattern with its leading flags made scoped, to embed in another."""
    flags, inner = _split_flags(pattern)
    return f"(?{flags}:{inner})" if flags else inner


def _level(levels: frozenset[str] | None) -> str | None:
    if not levels:
        return None
    mapped = {lnav_level(level) for level in levels}
    if len(mapped) == 1 and None not in mapped:
        return next(iter(mapped))
    return None


def type_notes(tables: Sequence[Table]) -> list[str]:
    """Columns lnav types otherwise than logparse types their field."""
    notes = []
    for table in tables:
        for column, lnav_type in table.columns.items():
            wanted = column_type(table.types[table.pattern.fields[column]])
            if wanted != lnav_type:
                why = " (the number may hold thousands separators)" if lnav_type == "text" else ""
                notes.append(f"{table.name}.{column}: a {lnav_type} column, logparse's is {wanted}{why}")
    return notes


def sample_problems(grammar: Grammar, rule: Rule | StatsRule, table: Table) -> list[str]:
    """The rule's samples the table does not find, or finds with other values than `expect` (the
    table run with the `regex` module, which reads its patterns as PCRE2 does)."""
    compiled = regex.compile(table.pattern.pattern, regex.V0)
    held = set(table.pattern.fields.values())
    problems = []
    for sample in rule.samples:
        m = compiled.search(sample.line)
        if m is None:
            problems.append(f"sample {sample.index}: not found")
            continue
        got: dict[str, object] = {}
        for name, text in m.groupdict().items():
            field = table.pattern.fields[name]
            if text is not None and field not in got:
                got[field] = convert(text, grammar.field_type(rule, field))
        for field, want in sample.expect.items():
            if field in held and not _same(got.get(field), want):
                problems.append(f"sample {sample.index}: {field} = {got.get(field)!r}, expected {want!r}")
    return problems


def _same(got: object, want: object) -> bool:
    if isinstance(got, float) and isinstance(want, float) and got != got and want != want:
        return True  # nan
    return got == want
