"""The columns of each event kind's table: the one definition the parsers, the core and the
Parquet files share."""

from __future__ import annotations

from logparse.grammar import COMMON_FIELDS, Grammar

EXTRA = "extra"  # a stats line's pairs that no key of its rule read: list of {key, value}
TIME = "time"  # `ts` (or the line's most complete stamp) as a UTC instant, added by ingest
EXTRA_TYPE = "pairs"


def core_columns(grammar: Grammar, kind: str) -> list[tuple[str, str]]:
    """(name, type) of a kind's columns as a parser gives them: the common columns (without
    `time`), the kind's fields, `extra` when a stats rule types the kind."""
    columns: list[tuple[str, str]] = [(name, typ) for name, typ in COMMON_FIELDS.items()]
    columns += [(name, typ) for name, typ in grammar.schema(kind).items()]
    if grammar.has_extra(kind):
        columns.append((EXTRA, EXTRA_TYPE))
    return columns


def table_columns(grammar: Grammar, kind: str) -> list[tuple[str, str]]:
    """(name, type) of a kind's table as stored: `time` after `ts`, the derived columns last."""
    columns = core_columns(grammar, kind)
    at = [name for name, _ in columns].index("ts") + 1
    derived = [(d.name, "float") for d in grammar.derived.get(kind, ())]
    return [*columns[:at], (TIME, "time"), *columns[at:], *derived]
