"""Derived columns: one idea in one unit on every engine, the printed column kept.

vLLM prints KV usage as a percent (`gpu_kv_pct` 37.2), SGLang as a fraction (`token_usage` 0.37);
`kv_usage_frac` and `kv_usage_pct` carry both on either engine. The rules are data, declared with
their columns in `kinds.toml` (`kv_usage_frac = { type = "float", from = { gpu_kv_pct = 0.01 } }`):
per derived column, source columns and factors, the first source set in a row giving the value.
The compiled core applies them as it finishes each block (`core/src/derive.rs`, sent the rules by
`logparse.engine.spec`); this module names them for the schema and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from logparse.grammar import Grammar


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
