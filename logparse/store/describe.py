"""The documented schema of the event tables, from the loaded grammar (`kinds.toml`, the engine
files, user grammars): what `logparse schema` prints, what the README appendix holds and what the
table writer puts in each Parquet column's metadata (`description`, `unit`)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from logparse.errors import InputError
from logparse.grammar import ADDED_COLUMNS, COMMON_FIELDS, ColumnDoc, Grammar
from logparse.store.schema import EXTRA, TIME

FORMATS = ("text", "json", "markdown")
# logparse type -> the Parquet / Arrow type a DuckDB or polars user sees
STORED_TYPES: dict[str, str] = {
    "int": "int64",
    "float": "double",
    "str": "string",
    "bool": "boolean",
    "floats": "list<double>",
    "time": "timestamp[us, tz=UTC]",
    "pairs": "list<struct<key: string, value: string>>",
}
DERIVED_NOTE = (
    "Derived columns are not printed by the engines: ingest computes them from the printed column "
    "(value x factor, rounded to 10 decimals) so that one idea has one unit on every engine; the "
    "printed column is kept. They are in the Parquet tables, the Python API and "
    "`ingest --format jsonl` (like every field, left out of a JSON line when null)."
)
TEXT_WIDTH = 100
MIN_DESCRIPTION_WIDTH = 30
APPENDIX_TITLE = "Event kinds and columns"
REGENERATE = "python -m logparse schema --format markdown"


@dataclass(frozen=True)
class ColumnInfo:
    """One column of a table: its name, type, unit and meaning; `origin` is `common` (every
    table), `printed` (read from the line) or `derived` (computed by ingest)."""

    name: str
    type: str
    stored_type: str
    unit: str
    description: str
    origin: str


@dataclass(frozen=True)
class KindInfo:
    """One event kind: its table's own columns (after the common ones) and whether it has `extra`."""

    name: str
    description: str
    columns: tuple[ColumnInfo, ...]
    has_extra: bool


@dataclass(frozen=True)
class SchemaInfo:
    """The common columns, documented once, and the kinds."""

    common: tuple[ColumnInfo, ...]
    kinds: tuple[KindInfo, ...]


def describe(grammar: Grammar, kind: str | None = None) -> SchemaInfo:
    """The documented schema of every kind (or of `kind` only); `InputError` for an unknown kind."""
    if kind is not None and kind not in grammar.kinds:
        raise InputError(f"unknown kind {kind!r}; kinds: {', '.join(sorted(grammar.kinds))}")
    common_types = {**COMMON_FIELDS, **ADDED_COLUMNS}
    order = [*COMMON_FIELDS]
    order.insert(order.index("ts") + 1, TIME)
    order.append(EXTRA)
    common = tuple(_column(grammar.common_docs, name, common_types[name], "common") for name in order)
    names = [kind] if kind is not None else sorted(grammar.kinds)
    return SchemaInfo(common=common, kinds=tuple(_kind(grammar, name) for name in names))


def _kind(grammar: Grammar, kind: str) -> KindInfo:
    docs = grammar.column_docs.get(kind, {})
    columns = [_column(docs, name, typ, "printed") for name, typ in grammar.schema(kind).items()]
    columns += [_column(docs, d.name, "float", "derived") for d in grammar.derived.get(kind, ())]
    return KindInfo(
        name=kind,
        description=grammar.kind_docs.get(kind, ""),
        columns=tuple(columns),
        has_extra=grammar.has_extra(kind),
    )


def _column(docs: Mapping[str, ColumnDoc], name: str, typ: str, origin: str) -> ColumnInfo:
    doc = docs.get(name, ColumnDoc())
    return ColumnInfo(
        name=name,
        type=typ,
        stored_type=STORED_TYPES.get(typ, typ),
        unit=doc.unit,
        description=doc.description,
        origin=origin,
    )


def column_metadata(grammar: Grammar, kind: str) -> dict[str, dict[bytes, bytes]]:
    """Parquet field metadata of a kind's columns: `description` and `unit` (plus `derived` on
    derived columns), the common columns included."""
    info = describe(grammar, kind)
    out: dict[str, dict[bytes, bytes]] = {}
    for column in (*info.common, *info.kinds[0].columns):
        meta = {b"description": column.description.encode(), b"unit": column.unit.encode()}
        if column.origin == "derived":
            meta[b"derived"] = b"true"
        out[column.name] = meta
    return out


# -- rendering ------------------------------------------------------------------------------------
def render(info: SchemaInfo, fmt: str) -> str:
    """The schema as `text` (terminal), `json` or `markdown` (the README appendix)."""
    if fmt == "json":
        return render_json(info)
    if fmt == "markdown":
        return render_markdown(info)
    if fmt == "text":
        return render_text(info)
    raise InputError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")


def render_json(info: SchemaInfo) -> str:
    """One JSON document: types, notes, common columns, kinds."""
    doc = {
        "stored_types": STORED_TYPES,
        "derived_columns": DERIVED_NOTE,
        "common": [asdict(c) for c in info.common],
        "kinds": [
            {
                "name": k.name,
                "description": k.description,
                "has_extra": k.has_extra,
                "columns": [asdict(c) for c in k.columns],
            }
            for k in info.kinds
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_text(info: SchemaInfo, width: int = TEXT_WIDTH) -> str:
    """Aligned name, type and unit per column, the description wrapped beside them."""
    lines = _wrap("Common columns (every table; `extra` only on the kinds marked so):", width)
    lines += _text_rows(info.common, width)
    for kind in info.kinds:
        lines.append("")
        lines += _wrap(f"{kind.name}{' (has extra)' if kind.has_extra else ''}: {kind.description}", width)
        lines += _text_rows(kind.columns, width)
    lines.append("")
    lines += _wrap(DERIVED_NOTE, width)
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent]


def _text_rows(columns: tuple[ColumnInfo, ...], width: int) -> list[str]:
    types = [c.type + (" (derived)" if c.origin == "derived" else "") for c in columns]
    widths = [
        max((len(x) for x in xs), default=0)
        for xs in ([c.name for c in columns], types, [c.unit for c in columns])
    ]
    lines = []
    for c, typ in zip(columns, types, strict=True):
        head = f"  {c.name:<{widths[0]}}  {typ:<{widths[1]}}  {c.unit:<{widths[2]}}  "
        if width - len(head) < MIN_DESCRIPTION_WIDTH:  # a narrow terminal: the meaning goes below
            lines.append(head.rstrip())
            lines += _wrap(c.description, width, " " * 6)
            continue
        body = _wrap(c.description, width - len(head))
        lines.append(head + body[0])
        lines += [" " * len(head) + rest for rest in body[1:]]
    return lines


def render_markdown(info: SchemaInfo) -> str:
    """The README appendix: a section with a table per kind."""
    lines = [
        f"## {APPENDIX_TITLE}",
        "",
        f"<!-- generated by `{REGENERATE}` from logparse/patterns/*.toml: edit those, then regenerate -->",
        "",
        "Every input line is one event of one kind; `ingest --out DIR` writes one Parquet table per kind, "
        "each column with its `description` and `unit` in the Parquet field metadata. Types as stored: "
        + ", ".join(f"`{k}` = {v}" for k, v in STORED_TYPES.items())
        + ".",
        "",
        DERIVED_NOTE,
        "",
        "### Common columns",
        "",
        "Every table starts with these (`extra` only on kinds read by `key: value` stats rules).",
        "",
    ]
    lines += _markdown_table(info.common)
    for kind in info.kinds:
        extra = " Has `extra`." if kind.has_extra else ""
        lines += ["", f"### {kind.name}", "", f"{kind.description}{extra}", ""]
        lines += _markdown_table(kind.columns)
    return "\n".join(lines) + "\n"


def _markdown_table(columns: tuple[ColumnInfo, ...]) -> list[str]:
    rows = ["| column | type | unit | meaning |", "|---|---|---|---|"]
    for c in columns:
        typ = f"{c.type}, derived" if c.origin == "derived" else c.type
        rows.append(f"| `{c.name}` | {typ} | {_cell(c.unit)} | {_cell(c.description)} |")
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
