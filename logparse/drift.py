"""Coverage per rule family, and warnings that a log looks newer than the grammars (unparsed lines
with a known message's anchor; stats keys no rule knows).

Engines reword their lines every few releases. A rule matches the *whole* body, so a line of a
new version (one more field, `,` for `.`) becomes `unparsed` rather than half-read. Such lines
still carry the anchors of the rule that used to read them (`Decode batch`,
`Avg prompt throughput`); many unparsed lines sharing a known anchor are the sign of version drift,
and the rule whose regex gets furthest along them is the one to copy and extend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from logparse.engine import compiled
from logparse.escape import for_terminal
from logparse.grammar import UNPARSED, Grammar, Rule, StatsRule, load_grammar
from logparse.grammar.check import matched_prefix
from logparse.grammar.model import literal_prefix

if TYPE_CHECKING:
    from logparse.ingest import IngestResult

MIN_LINES = 3  # unparsed lines sharing an anchor before it is called drift
MIN_MATCHED = 12  # characters the closest rule must match before a group counts as drift
EXAMPLES = 5  # bodies per anchor on which the closest rule is measured
BODY_LIMIT = 4096  # characters of a body given to `matched_prefix` (it bisects with partial matches)
CONTEXT = 40


@dataclass(frozen=True)
class DriftWarning:
    """Unparsed lines that contain a known anchor, and the rule that came closest to reading them."""

    anchor: str
    lines: int
    first_line: int
    closest_rule: str | None
    matched: int  # characters of the example body the closest rule could still match
    matched_text: str  # the end of that matched prefix
    stopped_at: str  # what follows it
    example_line: int

    @property
    def message(self) -> str:
        """One sentence for the headline (log text in it is escaped for a terminal)."""
        head = f"{self.lines:,} lines contain {self.anchor!r} but match no rule"
        if self.closest_rule is None:
            return head
        if not self.matched:
            where = "matched nothing"
        else:
            where = f"matched up to '{for_terminal(self.matched_text)}'"
            if self.stopped_at:
                where += f", stopped at '{for_terminal(self.stopped_at)}'"
        return (
            f"{head}; closest rule: {self.closest_rule} ({where}; line {self.example_line}); "
            "a newer engine version? see `logparse unknown --rule`"
        )

    def as_dict(self) -> dict[str, Any]:
        """The warning as plain data, with its message (for `--format json`)."""
        return {**asdict(self), "message": self.message}


@dataclass(frozen=True)
class FamilyCoverage:
    """Lines of one rule family (an event kind): typed per rule (era), and near misses."""

    family: str
    typed: int
    rules: dict[str, int]
    near_miss: int  # unparsed lines carrying the (first) anchor of one of the family's rules

    @property
    def coverage(self) -> float:
        """Typed lines over typed lines plus near misses."""
        total = self.typed + self.near_miss
        return self.typed / total if total else 1.0

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {**asdict(self), "coverage": self.coverage}


def _anchor(rule: Rule | StatsRule) -> str:
    """The literal that names a rule's lines: its first anchor, or a stats rule's first key."""
    if isinstance(rule, StatsRule):
        return rule.first[0] + ": "
    return rule.marks[0] if rule.marks else ""


def _anchored_rules(grammar: Grammar, engine: str) -> list[Rule | StatsRule]:
    if engine not in grammar.engines:
        return []
    return [r for r in grammar.engines[engine].rules if _anchor(r) and not r.fallback]


def _anchor_sets(unparsed: pl.DataFrame | pl.LazyFrame, anchors: Sequence[str]) -> pl.DataFrame:
    """Per distinct set of anchors found in raw lines: count, first line and a few example lines."""
    found = (
        unparsed.lazy()
        .select(
            "line_no",
            "raw",
            pl.col("raw")
            .str.extract_many(list(anchors), overlapping=True)
            .list.unique()
            .list.sort()
            .list.join("\x00")
            .alias("found"),
        )
        .filter(pl.col("found") != "")
    )
    return (
        found.sort("line_no")
        .group_by("found", maintain_order=True)
        .agg(
            pl.len().alias("lines"),
            pl.col("line_no").first().alias("first_line"),
            pl.col("line_no").head(EXAMPLES).alias("example_lines"),
            pl.col("raw").head(EXAMPLES).alias("examples"),
        )
        .collect()
    )


def _columns(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return frame.columns if isinstance(frame, pl.DataFrame) else frame.collect_schema().names()


def _is_empty(frame: pl.DataFrame | pl.LazyFrame) -> bool:
    if isinstance(frame, pl.DataFrame):
        return frame.is_empty()
    return frame.select(pl.len()).collect().item() == 0


def analyse(
    result: IngestResult, *, min_lines: int = MIN_LINES
) -> tuple[list[FamilyCoverage], list[DriftWarning]]:
    """Coverage per rule family and the drift warnings of an ingested log."""
    grammar = result.grammar or load_grammar()
    rules = _anchored_rules(grammar, result.engine)
    typed: dict[str, dict[str, int]] = {}
    if result.rule_counts:  # counted by the core while parsing
        for (kind, rule), n in sorted(result.rule_counts.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            if kind != UNPARSED and rule is not None:
                typed.setdefault(kind, {})[rule] = n
    for kind, frame in result.tables.items():  # a folder read back: DataFrames, or lazy scans
        if result.rule_counts or kind == UNPARSED or "rule" not in _columns(frame) or _is_empty(frame):
            continue
        counts = frame.lazy().group_by("rule").len().collect().sort("rule").iter_rows()
        typed[kind] = {str(rule): int(n) for rule, n in counts}
    near: dict[str, int] = {}
    groups: dict[str, dict[str, Any]] = {}
    unparsed = result.tables.get(UNPARSED)
    if rules and unparsed is not None and "raw" in _columns(unparsed) and not _is_empty(unparsed):
        # A rule's first anchor is its name-giving text ("Decode batch"); a new version may well
        # reword the others, so the first alone makes a line a near miss of the rule.
        anchors = sorted({_anchor(r) for r in rules})
        for row in _anchor_sets(unparsed, anchors).iter_rows(named=True):
            present = set(row["found"].split("\x00"))
            candidates = [r for r in rules if _anchor(r) in present]
            if not candidates:
                continue
            for kind in {r.kind for r in candidates}:
                near[kind] = near.get(kind, 0) + row["lines"]
            key = _anchor(candidates[0])
            group = groups.setdefault(
                key, {"lines": 0, "first_line": row["first_line"], "examples": [], "rules": []}
            )
            group["lines"] += row["lines"]
            group["first_line"] = min(group["first_line"], row["first_line"])
            group["examples"].extend(zip(row["example_lines"], row["examples"]))
            group["rules"].extend(r for r in candidates if r not in group["rules"])
    families = [
        FamilyCoverage(kind, sum(typed.get(kind, {}).values()), typed.get(kind, {}), near.get(kind, 0))
        for kind in sorted(set(typed) | set(near))
    ]
    drifting = {anchor: g for anchor, g in groups.items() if g["lines"] >= min_lines}
    examples = sorted({raw for g in drifting.values() for _, raw in sorted(g["examples"])[:EXAMPLES]})
    # the message of each example line, as the core peels its envelope (one call for them all)
    bodies: dict[str, str] = {}
    if examples:
        events = compiled(grammar, result.engine).parse_lines(examples, alone=True)
        bodies = {raw: event["_frame"]["body"] for raw, event in zip(examples, events, strict=True)}
    warnings = [_closest(bodies, anchor, g) for anchor, g in drifting.items()]
    # A rule that cannot even start matching these lines says nothing about a new version of them
    # (a short anchor such as "oading " also occurs in unrelated lines).
    warnings = [w for w in warnings if w.closest_rule is not None and w.matched >= MIN_MATCHED]
    warnings.sort(key=lambda w: (-w.lines, w.first_line))
    return families, warnings


def _closest(bodies: Mapping[str, str], anchor: str, group: Mapping[str, Any]) -> DriftWarning:
    best: tuple[int, Rule | StatsRule | None, str, int] = (-1, None, "", 0)
    for line_no, raw in sorted(group["examples"])[:EXAMPLES]:
        body = bodies[raw][:BODY_LIMIT]
        for rule in group["rules"]:
            if _anchor(rule) not in body or isinstance(rule, StatsRule):
                continue
            pos = matched_prefix(rule.regex, body, full=True)
            if pos > best[0]:
                best = (pos, rule, body, line_no)
    pos, rule, body, line_no = best
    if rule is None:
        return DriftWarning(anchor, group["lines"], group["first_line"], None, 0, "", "", group["first_line"])
    shown = body[max(0, pos - CONTEXT) : pos]
    return DriftWarning(
        anchor=anchor,
        lines=group["lines"],
        first_line=group["first_line"],
        closest_rule=rule.name,
        matched=pos,
        matched_text=("…" if pos > CONTEXT else "") + shown,
        stopped_at=body[pos : pos + CONTEXT // 2] + ("…" if len(body) > pos + CONTEXT // 2 else ""),
        example_line=line_no,
    )


def unknown_fields(result: IngestResult) -> list[dict[str, Any]]:
    """Keys of stats lines kept in `extra`, most frequent first: keys no vocabulary knows, and known
    keys whose value did not read (`unreadable`)."""
    grammar = result.grammar or load_grammar()
    engine = grammar.engines.get(result.engine or "")
    rules = {r.name: r for r in engine.rules} if engine else {}
    out = []
    for (name, key), lines in sorted(result.extra_keys.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = rules.get(name)
        kind = rule.kind if rule else "?"
        label = (literal_prefix(rule.title) if isinstance(rule, StatsRule) else "") or kind
        where = f"{engine.title if engine else result.engine} {label} (rule {name})"
        known = isinstance(rule, StatsRule) and (
            key in rule.keys
            or any(p.pattern is not None and p.pattern.fullmatch(key) for p in rule.key_patterns)
        )
        if known:
            message = (
                f"{where}: the value of {key!r} did not read on {lines:,} lines (kept as printed in the "
                "`extra` column)"
            )
        else:
            message = (
                f"{where}: unknown field {key!r} on {lines:,} lines (kept in the `extra` column; to type "
                f'it, add it to the rule\'s keys in a --patterns file: extends = "{name}")'
            )
        out.append(
            {"rule": name, "kind": kind, "key": key, "lines": lines, "unreadable": known, "message": message}
        )
    return out


def drift_facts(result: IngestResult) -> dict[str, Any]:
    """`coverage_by_family`, `drift` and `unknown_fields` entries for the headline."""
    families, warnings = analyse(result)
    return {
        "coverage_by_family": [f.as_dict() for f in families],
        "drift": [w.as_dict() for w in warnings],
        "unknown_fields": unknown_fields(result),
    }


def render_drift(facts: Mapping[str, Any]) -> list[str]:
    """Text lines for the coverage-by-family block and the drift warnings (escaped for a terminal)."""
    out: list[str] = []
    families = facts.get("coverage_by_family") or []
    if families:
        out += [
            "",
            "coverage by rule family (typed lines per rule; near misses: unparsed lines with "
            "a rule's anchor)",
        ]
        width = max(len(f["family"]) for f in families)
        for f in families:
            rules = ", ".join(f"{name} {n:,}" for name, n in f["rules"].items()) or "no rule matched"
            miss = f", {f['near_miss']:,} near misses" if f["near_miss"] else ""
            out.append(
                f"  {f['family']:<{width}}  {f['coverage']:>6.1%}  {f['typed']:,} typed ({rules}){miss}"
            )
    for warning in facts.get("drift") or []:
        out.append(f"warning: {warning['message']}")
    for unknown in facts.get("unknown_fields") or []:
        out.append(f"note: {unknown['message']}")
    return [for_terminal(line) for line in out]


__all__ = ["DriftWarning", "FamilyCoverage", "analyse", "drift_facts", "render_drift"]
