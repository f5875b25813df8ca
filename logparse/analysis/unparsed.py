"""Evidence that was seen but not typed: unparsed lines that carry a known line family's anchors.

A line the grammar could not read is kept as `unparsed` with its raw text. When it holds every
anchor (the literal text) of a rule of a kind the post-mortem reports on (`Decode batch`,
`Avg prompt throughput`, `out of memory`, ...), the log *has* that evidence, in a form no rule
read: a newer engine version, a fork, a line cut short. The post-mortem then must not say the
evidence is absent; it says how many such lines there are, shows one, and points at
`logparse unknown --rule`. The anchors are the grammar's own (`Rule.marks`), per kind.

>>> from logparse.grammar import load_grammar                      # doctest: +SKIP
>>> unparsed_families(result.tables, load_grammar(), "sglang")     # doctest: +SKIP
[UnparsedFamily(kind='decode_batch', lines=12, first_line=3, example='[2025-...] Decode batch, ...')]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from logparse.grammar import AnyRule, Grammar

UNPARSED = "unparsed"
# The kinds whose figures the post-mortem reports (config, warnings and requests are context).
REPORTED_KINDS = (
    "engine_stats",
    "decode_batch",
    "prefill_batch",
    "spec_decode",
    "kv_pool",
    "memory",
    "weight_load",
    "cuda_graph",
    "jit_compile",
    "engine_init",
    "oom",
    "preemption",
)
# The kinds that carry decode throughput: without them no phase can be measured.
DECODE_STATS_KINDS = ("engine_stats", "decode_batch")
# Anchors shorter than this in all are common words ("model", "oading "), not a line family's mark.
MIN_ANCHOR_CHARS = 10
EXAMPLE_CHARS = 160
LABELS = {
    "engine_stats": "vLLM stats (`Avg prompt throughput`)",
    "decode_batch": "`Decode batch`",
    "prefill_batch": "`Prefill batch`",
    "spec_decode": "speculative-decoding metrics",
    "kv_pool": "KV pool",
    "memory": "memory",
    "weight_load": "weight loading",
    "cuda_graph": "CUDA graph",
    "jit_compile": "JIT compile",
    "engine_init": "engine start-up",
    "oom": "out-of-memory",
    "preemption": "preemption / retraction",
}


@dataclass(frozen=True)
class UnparsedFamily:
    """Unparsed lines that look like lines of `kind`: how many, the first, and its text."""

    kind: str
    lines: int
    first_line: int
    example: str

    @property
    def message(self) -> str:
        """One sentence for a warning (log text in it is not yet escaped for a terminal)."""
        example = self.example if len(self.example) <= EXAMPLE_CHARS else self.example[:EXAMPLE_CHARS] + "…"
        return (
            f"{self.lines:,} line(s) look like {LABELS.get(self.kind, self.kind)} lines ({self.kind}) "
            f"but no rule typed them, so their figures are missing here; first at line "
            f"{self.first_line}: '{example.strip()}'; draft a rule with `logparse unknown LOG --rule`"
        )

    @property
    def code(self) -> str:
        """The diagnostic code: ``unparsed_<kind>``."""
        return f"unparsed_{self.kind}"


def family_rules(grammar: Grammar, engine: str) -> list[AnyRule]:
    """The rules of `engine` whose anchors mark a reported line family (long enough to tell)."""
    if engine not in grammar.engines:
        return []
    return [
        r
        for r in grammar.engines[engine].rules
        if r.kind in REPORTED_KINDS and not r.fallback and sum(len(a) for a in r.marks) >= MIN_ANCHOR_CHARS
    ]


def unparsed_families(
    tables: Mapping[str, pl.DataFrame | pl.LazyFrame], grammar: Grammar, engine: str
) -> list[UnparsedFamily]:
    """The reported line families seen among the `unparsed` lines but not typed, most lines first.

    A line is of the family of the rule whose anchors it all holds, the rule with the most
    anchor text winning when several do. Works on DataFrames and on lazy scans (a streamed
    log's tables).
    """
    rules = family_rules(grammar, engine)
    frame = tables.get(UNPARSED)
    if not rules or frame is None or "raw" not in frame.lazy().collect_schema().names():
        return []
    anchors = sorted({a for r in rules for a in r.marks})
    columns = frame.lazy().collect_schema().names()
    level = pl.col("level").fill_null("") if "level" in columns else pl.lit("")
    # DEBUG records are left untyped by design (an `untyped` envelope): not missed evidence.
    candidates = (
        frame.lazy()
        .filter(level != "DEBUG")
        .select("line_no", "raw")
        .filter(pl.col("raw").str.contains_any(anchors))
        .collect()
    )
    if candidates.is_empty():
        return []
    ranked = sorted(rules, key=lambda r: -sum(len(a) for a in r.marks))
    kind = pl.lit(None, dtype=pl.String)
    for rule in reversed(ranked):  # the first `when` that holds wins: longest anchors first
        holds = pl.all_horizontal(pl.col("raw").str.contains(a, literal=True) for a in rule.marks)
        kind = pl.when(holds).then(pl.lit(rule.kind)).otherwise(kind)
    seen = candidates.with_columns(kind.alias("kind")).filter(pl.col("kind").is_not_null()).sort("line_no")
    groups = seen.group_by("kind").agg(
        pl.len().alias("lines"),
        pl.col("line_no").first().alias("first_line"),
        pl.col("raw").first().alias("example"),
    )
    out = [
        UnparsedFamily(
            kind=r["kind"], lines=int(r["lines"]), first_line=int(r["first_line"]), example=str(r["example"])
        )
        for r in groups.iter_rows(named=True)
    ]
    return sorted(out, key=lambda f: (-f.lines, f.first_line))


def unparsed_decode_stats(families: list[UnparsedFamily]) -> UnparsedFamily | None:
    """The family of decode-stats lines among `families` (the one that holds throughput), or None."""
    return next((f for f in families if f.kind in DECODE_STATS_KINDS), None)


__all__ = [
    "DECODE_STATS_KINDS",
    "REPORTED_KINDS",
    "UnparsedFamily",
    "family_rules",
    "unparsed_decode_stats",
    "unparsed_families",
]
