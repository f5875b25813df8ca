"""Derived columns: one idea in one unit on every engine, the printed column kept.

vLLM prints KV usage as a percent (`gpu_kv_pct` 37.2), SGLang as a fraction (`token_usage` 0.37);
`kv_usage_frac` and `kv_usage_pct` carry both on either engine. The rules are data, declared with
their columns in `kinds.toml` (`kv_usage_frac = { type = "float", from = { gpu_kv_pct = 0.01 } }`):
per derived column, source columns and factors, the first source set in a row giving the value.
They are applied in Python on each Arrow batch as ingest finishes it, so the compiled core and the
reference parser keep giving the printed columns only, and identical ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from logparse.grammar import Grammar

# A printed value has at most 4 decimals; x * 0.01 in binary floating point leaves noise in the 17th
# digit (37.2 * 0.01 = 0.37200000000000005): rounded off, the derived value is the printed one moved.
ROUND_DECIMALS = 10


@dataclass(frozen=True)
class Derivation:
    """`target = source x factor` on a kind's table (several for one target: the first set wins)."""

    kind: str
    target: str
    source: str
    factor: float


def derivations(grammar: Grammar) -> list[Derivation]:
    """Every derivation rule of the grammar, in declaration order."""
    return [
        Derivation(kind=kind, target=d.name, source=source, factor=factor)
        for kind, derived in grammar.derived.items()
        for d in derived
        for source, factor in d.sources
    ]


def derived_fields(grammar: Grammar, kind: str) -> list[pa.Field]:
    """The Arrow fields ingest appends to a kind's table (float64, nullable)."""
    return [pa.field(d.name, pa.float64()) for d in grammar.derived.get(kind, ())]


def add_derived(grammar: Grammar, kind: str, batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with the kind's derived columns appended (null where no source is set)."""
    derived = grammar.derived.get(kind, ())
    if not derived:
        return batch
    columns = list(batch.columns)
    fields = list(batch.schema)
    for d in derived:
        values = [_scaled(batch, source, factor) for source, factor in d.sources]
        columns.append(values[0] if len(values) == 1 else pc.coalesce(*values))
        fields.append(pa.field(d.name, pa.float64()))
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=batch.schema.metadata))


def _scaled(batch: pa.RecordBatch, source: str, factor: float) -> pa.Array:
    if source not in batch.schema.names:
        return pa.nulls(batch.num_rows, pa.float64())
    values = pc.cast(batch.column(source), pa.float64())
    if factor != 1.0:
        # round(x * 10^d) / 10^d: a division by an exact power of ten lands on the double nearest
        # the decimal (Arrow's round(ndigits=d) multiplies by 10^-d and can miss it by one ulp)
        scale = 10.0**ROUND_DECIMALS
        values = pc.divide(pc.round(pc.multiply(pc.multiply(values, factor), scale)), scale)
    return values
