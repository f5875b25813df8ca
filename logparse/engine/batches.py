"""Events (dicts, as the reference parser gives them) into Arrow record batches, with exactly the
schema the compiled core fills (`logparse.store.schema`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from logparse.grammar import Grammar
from logparse.parse import StampParts
from logparse.store.schema import EXTRA, core_columns

PAIR = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.string())])
ARROW_TYPES: dict[str, pa.DataType] = {
    "int": pa.int64(),
    "float": pa.float64(),
    "str": pa.string(),
    "bool": pa.bool_(),
    "floats": pa.list_(pa.float64()),
    "pairs": pa.list_(PAIR),
}
STAMP_SCHEMA = pa.schema(
    [
        pa.field("completeness", pa.uint8(), nullable=False),
        *(
            pa.field(name, pa.int32())
            for name in ("year", "month", "day", "hour", "minute", "second", "micro", "zone")
        ),
        pa.field("epoch_us", pa.int64()),
    ]
)


def kind_schema(grammar: Grammar, kind: str) -> pa.Schema:
    """The Arrow schema of a kind's batches as the parsers give them (no `time` yet)."""
    return pa.schema([pa.field(name, ARROW_TYPES[typ]) for name, typ in core_columns(grammar, kind)])


def _cell(value: Any, typ: str) -> Any:
    if value is None:
        return None
    if typ == "str" and not isinstance(value, str):
        return str(value)
    if typ == "float" and isinstance(value, bool):
        return float(value)
    if typ == "int" and isinstance(value, float):
        return int(value)
    if typ == "pairs":
        return [{"key": k, "value": v} for k, v in value]
    return value


def event_batches(grammar: Grammar, events: Iterable[Mapping[str, Any]]) -> dict[str, pa.RecordBatch]:
    """One batch per kind present, rows in the events' order."""
    rows: dict[str, list[Mapping[str, Any]]] = {}
    for event in events:
        rows.setdefault(event["kind"], []).append(event)
    out: dict[str, pa.RecordBatch] = {}
    for kind, kind_rows in rows.items():
        columns = core_columns(grammar, kind)
        arrays = [
            pa.array([_cell(r.get(name), typ) for r in kind_rows], type=ARROW_TYPES[typ])
            for name, typ in columns
        ]
        out[kind] = pa.RecordBatch.from_arrays(arrays, schema=kind_schema(grammar, kind))
    return out


def stamp_batch(stamps: Iterable[StampParts | None]) -> pa.RecordBatch:
    """The stamp parts of every line, in line order (completeness 0: no stamp)."""
    cols: dict[str, list[Any]] = {f.name: [] for f in STAMP_SCHEMA}
    for parts in stamps:
        if parts is None:
            cols["completeness"].append(0)
            for name in list(cols)[1:]:
                cols[name].append(None)
            continue
        cols["completeness"].append(parts.completeness)
        for name in ("year", "month", "day", "hour", "minute", "second", "micro", "zone", "epoch_us"):
            cols[name].append(getattr(parts, name if name != "micro" else "micro"))
    return pa.RecordBatch.from_pydict(cols, schema=STAMP_SCHEMA)


__all__ = ["ARROW_TYPES", "EXTRA", "STAMP_SCHEMA", "event_batches", "kind_schema", "stamp_batch"]
