"""Every event of a log as one JSON line, from the streamed tables (`logparse ingest --format jsonl`).

The reference path prints the event dicts of `LineParser`: `json_line(event, ensure_ascii=False,
default=json_default)`, keys `kind, line_no, ts, engine, rank, pid, level, rule`, then the rule's
fields in the order `LineParser.try_rule` sets them (its `set` constants, the named groups that
took part, the derived fields), or `raw` for an unparsed line. `JsonlSink` writes the same bytes
from the frames `stream_log` hands over, a block at a time, vectorised:

* the rows of a block's frames are merged by `line_no` (`end_block` says when a block is whole);
* `time` is not printed (an event has none: it is derived from `ts` afterwards), `kind` is;
* a field the rule only sets as a constant is printed as the grammar spells it (`1` stays `1`);
* a field from a group is printed when its value is not null, or when the block's `nulls` say the
  event holds it as None (captured text that did not convert); else the event lacks that key;
* values are rendered as `json.dumps` renders them: polars casts where both agree (integers,
  strings without characters to escape, floats in [1e-4, 1e16)), Python's encoder for the rest.

That holds as long as a table column can give back each field as the event held it: each field's
type in its rule is its column's type, and no field takes the name of a common key (`unfaithful`
lists the rules that break this; the built-in grammars have none, and the CLI prints the events of
a grammar that has some with the reference path). Memory stays bounded by a block.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

import polars as pl

from logparse.escape import _JSON_TABLE, json_default, json_line
from logparse.fastpath.profile import stage
from logparse.grammar import Grammar, Rule
from logparse.tables import POLARS_TYPES, kind_schema

COMMON_KEYS = ("line_no", "ts", "engine", "rank", "pid", "level", "rule")  # after "kind"
RESERVED = frozenset({"kind", "time", *COMMON_KEYS})
# Characters `json.dumps(ensure_ascii=False)` escapes (", \\, C0) or `json_line` writes as \\uXXXX
# (DEL, C1, bidi and other format characters; surrogates cannot occur in a polars string).
_SPECIAL_CODES = sorted({*range(0x20), ord('"'), ord("\\"),
                         *(c for c in _JSON_TABLE if not 0xD800 <= c <= 0xDFFF)})
SPECIAL = "[" + "".join(f"\\x{{{c:X}}}" for c in _SPECIAL_CODES) + "]"
FLOAT_PLAIN_MIN, FLOAT_PLAIN_MAX = 1e-4, 1e16  # where polars' float text is Python's repr
PYTHON_ROWS = 256  # a frame with fewer rows is written row by row (less overhead than a query)
LINE, RULE, JSON = "\x00line_no", "\x00rule", "\x00json"


def dumps(value: Any) -> str:
    """One value as the reference path writes it inside an event."""
    return json_line(value, ensure_ascii=False, default=json_default)


# -- values ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def encoding(name: str, dtype: pl.DataType) -> pl.Expr:
    """The JSON text of each value of column `name` (null: "null"), as `dumps` writes it, or null
    where Python's encoder must write it (`encode` does)."""
    col = pl.col(name)
    null = pl.lit("null")
    if dtype.is_integer():
        return col.cast(pl.String).fill_null(null)
    if dtype == pl.Float64:
        size = col.abs()
        odd = ~col.is_finite() | ((size < FLOAT_PLAIN_MIN) & (size != 0)) | (size >= FLOAT_PLAIN_MAX)
        return pl.when(col.is_null()).then(null).when(odd).then(pl.lit(None, dtype=pl.String)) \
            .otherwise(col.cast(pl.String))
    if dtype == pl.String:
        return pl.when(col.is_null()).then(null).when(col.str.contains(SPECIAL)) \
            .then(pl.lit(None, dtype=pl.String)).otherwise(pl.concat_str([pl.lit('"'), col, pl.lit('"')]))
    if dtype == pl.Boolean:
        return pl.when(col.is_null()).then(null).when(col).then(pl.lit("true")).otherwise(pl.lit("false"))
    return pl.lit(None, dtype=pl.String)  # lists of floats, any type a grammar may add: Python


def encode(frame: pl.DataFrame, names: list[str], extra: tuple[pl.Expr, ...] = ()) -> pl.DataFrame:
    """Columns `names` of `frame` as JSON texts (see `encoding`), and the expressions `extra`."""
    schema = frame.schema
    out = frame.select(*(encoding(name, schema[name]).alias(name) for name in names), *extra)
    for name in names:
        texts = out.get_column(name)
        if texts.null_count():
            idx = texts.is_null().arg_true()
            fixed = [dumps(v) for v in frame.get_column(name).gather(idx).to_list()]
            out = out.with_columns(texts.scatter(idx, fixed))
    return out


# -- the keys of an event -------------------------------------------------------------------------
CONST, ALWAYS, WHEN = "const", "always", "when"


@dataclass(frozen=True)
class Shape:
    """The keys of the events of one rule, in order: `(key, mode, text)`.

    `const`: always there, `text` is the whole `"key": value`; `always`: always there, the value
    is the column's; `when`: there when the column is not null or the event holds it as None.
    """

    keys: tuple[tuple[str, str, str], ...]
    constants: Mapping[str, Any] = field(default_factory=dict)  # the values of the `const` keys


UNPARSED_SHAPE = Shape((("raw", ALWAYS, dumps("raw") + ": "),))  # LineParser.parse: no rule, the line


def rule_shape(grammar: Grammar, rule: Rule) -> Shape:
    """The keys `LineParser.try_rule` gives an event of `rule` (after the common ones)."""
    types = {name: grammar.field_type(rule, name) for name in rule.field_names()}
    groups = [name for name in rule.matcher.groupindex if name in types]  # groupdict() order
    order = list(dict.fromkeys([*rule.constants, *groups, *rule.derive]))
    keys = []
    constants: dict[str, Any] = {}
    for name in order:
        label = dumps(name) + ": "
        if name not in rule.constants:
            keys.append((name, WHEN, label))
        elif name not in rule.templates and name not in groups and name not in rule.derive:
            keys.append((name, CONST, label + dumps(rule.constants[name])))
            constants[name] = rule.constants[name]
        else:
            keys.append((name, ALWAYS, label))  # a template, or a constant a group or derive may replace
    return Shape(tuple(keys), constants)


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (float,), "str": (str,),
                                              "bool": (bool,)}


def unfaithful(grammar: Grammar) -> list[str]:
    """Rules whose events a table cannot give back as `LineParser` made them, and why."""
    found = []
    for engine in grammar.engines.values():
        for rule in engine.rules:
            why = _unfaithful_rule(grammar, rule)
            if why:
                found.append(f"{engine.name} rule {rule.name}: {why}")
    return found


def _unfaithful_rule(grammar: Grammar, rule: Rule) -> str | None:
    schema = kind_schema(grammar, rule.kind)
    groups = set(rule.matcher.groupindex)
    for name in rule.field_names():
        typ = grammar.field_type(rule, name)
        if name in RESERVED:
            return f"field {name!r} has the name of a common column"
        if schema.get(name) != POLARS_TYPES[typ]:
            return f"field {name!r} is {typ} in the rule but {schema.get(name)} in the table"
        if name in rule.templates:
            if typ != "str":
                return f"template {name!r} fills a {typ} field"
        elif name in rule.constants and (name in groups or name in rule.derive):
            value = rule.constants[name]
            if type(value) not in _PYTHON_TYPES.get(typ, ()):
                return f"constant {name!r} = {value!r} is not a {typ} value"
    return None


# -- the sink -------------------------------------------------------------------------------------
@dataclass
class JsonlOutput:
    """Where one log's JSON lines go. It outlives the sinks of a run: after a restart (the year
    learnt late), the lines already written are not written again (they do not depend on `time`)."""

    grammar: Grammar
    out: TextIO
    through: int = 0  # the last line number written

    def __post_init__(self) -> None:
        self._shapes: dict[tuple[str, str | None], Shape] = {}
        self._rules: dict[str, dict[str, Rule]] = {}
        self._exprs: dict[tuple[str, int], pl.Expr] = {}

    def sink(self) -> JsonlSink:
        return JsonlSink(self)

    def line_expr(self, kind: str, shape: Shape, by_key: Mapping[str, list[int]]) -> pl.Expr:
        """The JSON line of an event of `shape`, over the columns `encode` gives (and `LINE`).

        `by_key`: the lines whose event holds the field as None, per field."""
        nulls = {name: by_key[name] for name, mode, _ in shape.keys if mode == WHEN and name in by_key}
        cached = self._exprs.get((kind, id(shape))) if not nulls else None
        if cached is not None:
            return cached
        pieces = [pl.lit(dumps(name) + ": ") + pl.col(name) for name in COMMON_KEYS]
        for name, mode, text in shape.keys:
            if mode == CONST:
                pieces.append(pl.lit(text))
                continue
            piece = pl.lit(text) + pl.col(name)
            if mode == WHEN:
                present = pl.col(name) != "null"
                if name in nulls:
                    present = present | pl.col(LINE).is_in(nulls[name])
                piece = pl.when(present).then(piece)
            pieces.append(piece)
        head = pl.lit("{" + dumps("kind") + ": " + dumps(kind) + ", ")
        expr = pl.concat_str([head, pl.concat_str(pieces, separator=", ", ignore_nulls=True), pl.lit("}")])
        if not nulls:
            self._exprs[(kind, id(shape))] = expr  # shapes live as long as this output
        return expr

    def shape(self, engine: str, rule: str | None) -> Shape:
        key = (engine, rule)
        found = self._shapes.get(key)
        if found is None:
            if rule is None:
                found = UNPARSED_SHAPE
            else:
                rules = self._rules.get(engine)
                if rules is None:
                    rules = self._rules[engine] = {r.name: r for r in self.grammar.engines[engine].rules}
                found = rule_shape(self.grammar, rules[rule])
            self._shapes[key] = found
        return found


class JsonlSink:
    """Writes the events of the frames of each block as JSON lines, in line order (see module doc)."""

    def __init__(self, output: JsonlOutput) -> None:
        self.output = output
        self.pending: list[tuple[str, pl.DataFrame]] = []
        self.kinds: set[str] = set()

    def add(self, kind: str, frame: pl.DataFrame) -> None:
        self.pending.append((kind, frame))
        self.kinds.add(kind)

    def end_block(self, nulls: Mapping[int, tuple[str, ...]]) -> None:
        with stage("JSON lines"):
            self._write(nulls)

    def _write(self, nulls: Mapping[int, tuple[str, ...]]) -> None:
        pending, self.pending = self.pending, []
        by_key: dict[str, list[int]] = {}
        for line, names in nulls.items():
            for name in names:
                by_key.setdefault(name, []).append(line)
        parts = [part for kind, frame in pending if frame.height
                 for part in self._render(kind, frame, by_key)]
        if not parts:
            return
        lines = parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical").sort(LINE)
        through = self.output.through
        if through and lines.item(0, LINE) <= through:
            lines = lines.filter(pl.col(LINE) > through)  # written before a restart
            if lines.height == 0:
                return
        text = lines.get_column(JSON).str.join("\n").item()
        out = self.output.out
        out.write(text)
        out.write("\n")
        self.output.through = lines.item(-1, LINE)

    def _render(self, kind: str, frame: pl.DataFrame, by_key: Mapping[str, list[int]]) -> list[pl.DataFrame]:
        """`(line_no, json)` of the rows of `frame`, one frame per rule."""
        if frame.height < PYTHON_ROWS:
            return [self._render_rows(kind, frame, by_key)]
        engine = frame.item(0, "engine")
        rules = frame.get_column("rule").unique(maintain_order=True).to_list()
        shapes = {rule: self.output.shape(engine, rule) for rule in rules}
        names = list(dict.fromkeys([*COMMON_KEYS, *(name for shape in shapes.values()
                                                     for name, mode, _ in shape.keys if mode != CONST)]))
        missing = [name for name in names if name not in frame.columns]
        if missing:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(name) for name in missing)
        texts = encode(frame, names, (pl.col("line_no").alias(LINE), pl.col("rule").alias(RULE)))
        parts = []
        for rule, shape in shapes.items():
            rows = texts
            if len(rules) > 1:
                rows = texts.filter(pl.col(RULE).is_null() if rule is None else pl.col(RULE) == rule)
            parts.append(rows.select(pl.col(LINE), self.output.line_expr(kind, shape, by_key).alias(JSON)))
        return parts

    def _render_rows(self, kind: str, frame: pl.DataFrame, by_key: Mapping[str, list[int]]) -> pl.DataFrame:
        """The same, row by row with Python's encoder: cheaper for a few rows."""
        lines: list[int] = []
        texts: list[str] = []
        engine = frame.item(0, "engine")
        index = {name: i for i, name in enumerate(frame.columns)}
        line_at, rule_at = index["line_no"], index["rule"]
        common = [(name, index[name]) for name in COMMON_KEYS]
        nulls = {name: set(numbers) for name, numbers in by_key.items()}
        for row in frame.iter_rows():
            event = {"kind": kind}
            for name, i in common:
                event[name] = row[i]
            line = row[line_at]
            shape = self.output.shape(engine, row[rule_at])
            for name, mode, _ in shape.keys:
                if mode == CONST:
                    event[name] = shape.constants[name]
                    continue
                got = row[index[name]] if name in index else None
                if mode == ALWAYS or got is not None or line in nulls.get(name, ()):
                    event[name] = got
            lines.append(line)
            texts.append(dumps(event))
        return pl.DataFrame({LINE: lines, JSON: texts}, schema={LINE: pl.Int64, JSON: pl.String})

    def close(self) -> list[str]:
        if self.pending:
            self.end_block({})
        return sorted(self.kinds)

    def abort(self) -> None:
        self.pending = []


def jsonl_sinks(grammar: Grammar, out: TextIO) -> Callable[[], JsonlSink]:
    """A sink factory for `stream_log`: every sink writes one log's JSON lines to `out`."""
    return JsonlOutput(grammar, out).sink


__all__ = ["JsonlOutput", "JsonlSink", "Shape", "dumps", "encode", "jsonl_sinks", "rule_shape", "unfaithful"]
