"""Compile an engine's grammar into fast-path rules: one anchored Rust pattern per (envelope, rule).

For each `[[fast_envelope]]` of the engine (in file order) and each rule that may apply to that
envelope (in the reference order: regular rules in file order, then fallbacks), a rule of a fast
kind becomes a `RulePlan`: the envelope prefix and the rule regex composed into
`^PREFIX(?:RULE)$`, with named groups for the envelope fields and the rule's fields. A line the
composed pattern matches is read by the reference as that envelope plus a body the rule fully
matches, with the same captures (see `translate` for why the engines agree).

The reference takes the *first* rule that applies. The fast path evaluates its rules in the same
order; a rule that stays on the reference path (not of a fast kind, or not translatable) but comes
earlier can still take a line, so lines holding its anchor are sent to the reference path
(`exclude_anchors`), and lines at the levels of an earlier unanchored one (`blocked_levels`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import regex

from logparse.grammar import ENVELOPE_GROUPS, FastEnvelope, FieldType, Grammar, Rule
from logparse.parse import int64
from logparse.fastpath.translate import Translation, Untranslatable, implied, rename_duplicates, translate

# Kinds that fill most lines of a long log: always read vectorised when their rule translates.
FAST_KINDS: frozenset[str] = frozenset(
    {"engine_stats", "spec_decode", "prefill_batch", "decode_batch", "request", "prefix_cache"})
ENVELOPE_FIELDS = ("ts", "wrapper_ts", "level", "rank", "pid", "wrapper_rank", "wrapper_pid")
_TEMPLATE = re.compile(r"\{(\w+)\}")
MATCHED = "m__"  # an empty group at the start of every composed pattern: "" when the line matched
BODY_NODES = 1 << 16  # ids of the rule's optional parts follow those of the envelope's


@dataclass(frozen=True)
class FieldPlan:
    """One field of a rule: its type and the Rust groups that capture it (pattern order)."""

    name: str
    typ: FieldType
    groups: tuple[str, ...]


@dataclass(frozen=True)
class RulePlan:
    """A rule composed with a fast envelope."""

    rule: Rule
    pattern: str
    anchors: tuple[str, ...]
    exclude_anchors: tuple[str, ...]
    exclude_by_level: tuple[tuple[frozenset[str], tuple[str, ...]], ...]
    blocked_levels: frozenset[str]
    fields: tuple[FieldPlan, ...]
    constants: Mapping[str, Any]
    templates: Mapping[str, tuple[tuple[str, str | None], ...]]  # (literal, field or None) parts
    derive: Mapping[str, tuple[str, str, FieldType]]  # field -> (function, rust group, type)
    envelope_groups: tuple[str, ...]
    prefix: Translation | None = None
    body: Translation | None = None
    nodes: tuple[tuple[int, str], ...] = ()  # optional parts: (id, literal); body ids from BODY_NODES
    _patterns: dict[frozenset[int], str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.rule.name

    def pattern_for(self, skip: frozenset[int]) -> str:
        """The composed pattern without the optional parts in `skip` (see `Translation.nodes`)."""
        found = self._patterns.get(skip)
        if found is None:
            if not skip or self.prefix is None or self.body is None:
                found = self.pattern
            else:
                prefix, _ = self.prefix.emit(frozenset(i for i in skip if i < BODY_NODES))
                body, _ = self.body.emit(frozenset(i - BODY_NODES for i in skip if i >= BODY_NODES))
                found = f"^(?P<{MATCHED}>){prefix}(?:{body})$"
            if len(self._patterns) < 64:
                self._patterns[skip] = found
        return found

    @property
    def kind(self) -> str:
        return self.rule.kind


@dataclass(frozen=True)
class EnvelopePlan:
    """A fast envelope and the rules composed with it, in reference order."""

    fast: FastEnvelope
    prefix: str  # ^PREFIX, no captures: which lines belong to this envelope
    excludes: tuple[tuple[str, bool], ...]  # (pattern, is a plain literal)
    rules: tuple[RulePlan, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (rule, why it stays on the reference path)

    @property
    def strip(self) -> bool:
        return self.fast.strip


@dataclass(frozen=True)
class EnginePlan:
    """Everything the fast path runs for one engine."""

    engine: str
    envelopes: tuple[EnvelopePlan, ...]
    fast_rules: frozenset[str] = field(default_factory=frozenset)

    @property
    def rule_names(self) -> list[str]:
        return [r.name for e in self.envelopes for r in e.rules]


def _is_literal(pattern: str) -> bool:
    return re.escape(pattern).replace("\\ ", " ") == pattern or not re.search(r"[\\.^$*+?{}\[\]|()]", pattern)


def _literal_text(pattern: str) -> str | None:
    """The text a metacharacter-free pattern (or one using `[ ]` for spaces) stands for."""
    simple = pattern.replace("[ ]", " ")
    if re.search(r"[\\.^$*+?{}\[\]|()]", simple):
        return None
    return simple


def _prefix_translation(fast: FastEnvelope, keep: Any) -> Any:
    return translate(fast.regex.pattern, keep=keep)


def compile_rule(grammar: Grammar, fast: FastEnvelope, rule: Rule, *,
                 exclude_anchors: Iterable[str], exclude_by_level: Iterable[tuple[frozenset[str], tuple[str, ...]]],
                 blocked_levels: frozenset[str]) -> RulePlan:
    """Compose `rule` with `fast` (raises `Untranslatable` when the fast path cannot run it)."""
    types = {name: grammar.field_type(rule, name) for name in rule.field_names()}
    source, aliases = rename_duplicates(rule.regex.pattern)
    original = {alias: name for name, names in aliases.items() for alias in names}
    captured = {name for name in rule.regex.groupindex if name in types}
    derive_sources = {source_group for _, source_group in rule.derive.values()}
    template_refs: set[str] = set()
    templates: dict[str, tuple[tuple[str, str | None], ...]] = {}
    for name, template in rule.templates.items():
        parts: list[tuple[str, str | None]] = []
        pos = 0
        for m in _TEMPLATE.finditer(template):
            parts.append((template[pos:m.start()], None))
            ref = m[1]
            if ref in rule.templates or ref not in captured or types.get(ref) != "str":
                raise Untranslatable(f"template {name} refers to {ref!r}, not a captured text field")
            parts.append(("", ref))
            template_refs.add(ref)
            pos = m.end()
        parts.append((template[pos:], None))
        templates[name] = tuple(parts)
    for name, (function, _) in rule.derive.items():
        if function != "count":
            raise Untranslatable(f"derive function {function!r}")
        if types[name] not in ("int", "float", "str"):
            raise Untranslatable(f"derive count into a {types[name]} field")
    wanted = captured | derive_sources

    def keep(alias: str) -> str | None:
        name = original.get(alias, alias)
        if name in ENVELOPE_GROUPS or name not in wanted:
            return None
        return "r_" + alias

    body = translate(source, keep=keep)
    if body.can_start_blank:
        raise Untranslatable("the rule may match a body that starts with a blank (or an empty one)")
    for anchor in rule.anchors:
        if not implied(anchor, body.literals):
            raise Untranslatable(f"anchor {anchor!r} is not a literal every match holds")
    prefix = _prefix_translation(fast, lambda name: "e_" + name)
    pattern = f"^(?P<{MATCHED}>){prefix.pattern}(?:{body.pattern})$"
    fields = []
    for name in types:
        if name not in captured:
            continue
        groups = tuple("r_" + alias for alias in aliases.get(name, [name]) if ("r_" + alias) in body.groups.values())
        fields.append(FieldPlan(name=name, typ=types[name], groups=groups))
    derive = {}
    for name, (function, source_group) in rule.derive.items():
        rust = "r_" + aliases.get(source_group, [source_group])[-1]
        if len(aliases.get(source_group, [source_group])) > 1:
            raise Untranslatable(f"derive source {source_group!r} is captured by several groups")
        derive[name] = (function, rust, types[name])
    return RulePlan(
        rule=rule, pattern=pattern, anchors=tuple(rule.anchors),
        exclude_anchors=tuple(dict.fromkeys(exclude_anchors)),
        exclude_by_level=tuple(exclude_by_level), blocked_levels=blocked_levels,
        fields=tuple(fields), constants=dict(rule.constants), templates=templates, derive=derive,
        envelope_groups=tuple(prefix.groups), prefix=prefix, body=body,
        nodes=tuple(prefix.nodes) + tuple((BODY_NODES + i, key) for i, key in body.nodes),
    )


def _ordered_rules(rules: Iterable[Rule]) -> list[Rule]:
    rules = list(rules)
    return [r for r in rules if not r.fallback] + [r for r in rules if r.fallback]


def build_plan(grammar: Grammar, engine: str, *, kinds: Iterable[str] = FAST_KINDS,
               extra_rules: Iterable[str] = ()) -> EnginePlan:
    """The fast-path plan of `engine`: rules of `kinds` (and the rules named in `extra_rules`)."""
    kinds = frozenset(kinds)
    extra = frozenset(extra_rules)
    eg = grammar.engines[engine]
    envelopes = []
    fast_names: set[str] = set()
    for fast in eg.fast_envelopes:
        try:
            prefix = _prefix_translation(fast, lambda name: None)
        except Untranslatable:
            continue
        excludes = []
        for pattern in fast.exclude:
            text = _literal_text(pattern)
            excludes.append((text, True) if text is not None else (translate(pattern).pattern, False))
        plans: list[RulePlan] = []
        skipped: list[tuple[str, str]] = []
        ref_anchors: list[str] = []  # first anchors of earlier reference-only rules, any level
        ref_by_level: dict[frozenset[str], list[str]] = {}
        blocked: set[str] = set()
        all_blocked = False
        for rule in _ordered_rules(eg.rules):
            if rule.envelopes is not None and fast.envelope not in rule.envelopes:
                continue  # the reference never tries it on these lines
            plan = None
            if not all_blocked and (rule.kind in kinds or rule.name in extra):
                try:
                    plan = compile_rule(
                        grammar, fast, rule, exclude_anchors=ref_anchors,
                        exclude_by_level=[(lv, tuple(dict.fromkeys(a))) for lv, a in ref_by_level.items()],
                        blocked_levels=frozenset(blocked))
                except Untranslatable as exc:
                    skipped.append((rule.name, str(exc)))
            if plan is not None:
                plans.append(plan)
                fast_names.add(rule.name)
                continue
            if rule.anchors:
                if rule.levels is None:
                    ref_anchors.append(rule.anchors[0])
                else:
                    ref_by_level.setdefault(frozenset(rule.levels), []).append(rule.anchors[0])
            elif rule.levels is None:
                all_blocked = True  # an unanchored rule may take any line: nothing after it is fast
            else:
                blocked.update(rule.levels)
        envelopes.append(EnvelopePlan(fast=fast, prefix="^" + prefix.pattern, excludes=tuple(excludes),
                                      rules=tuple(plans), skipped=tuple(skipped)))
    return EnginePlan(engine=engine, envelopes=tuple(envelopes), fast_rules=frozenset(fast_names))


_PLANS: dict[tuple[int, str, frozenset[str], frozenset[str]], tuple[Grammar, EnginePlan]] = {}


def plan_for(grammar: Grammar, engine: str, *, kinds: Iterable[str] = FAST_KINDS,
             extra_rules: Iterable[str] = ()) -> EnginePlan:
    """`build_plan`, cached per grammar object."""
    key = (id(grammar), engine, frozenset(kinds), frozenset(extra_rules))
    found = _PLANS.get(key)
    if found is None or found[0] is not grammar:
        if len(_PLANS) > 256:
            _PLANS.clear()
        found = _PLANS[key] = (grammar, build_plan(grammar, engine, kinds=kinds, extra_rules=extra_rules))
    return found[1]


def fast_envelope_frame(fast: FastEnvelope, line: str) -> tuple[str, str | None, str | None, str | None,
                                                                  int | None, str] | None:
    """(envelope, ts, level, rank, pid, body) as the fast path reads `line`, or None."""
    m = fast.regex.match(line)
    if m is None:
        return None
    if any(regex.search(pattern, line, flags=regex.ASCII | regex.V0) for pattern in fast.exclude):
        return None
    g = m.groupdict()
    body = line[m.end():]
    if fast.strip:
        body = body.rstrip(" \t")
    ts = g.get("ts") or g.get("wrapper_ts")
    rank = g.get("rank") if g.get("rank") is not None else g.get("wrapper_rank")
    pid_text = g.get("pid") if g.get("pid") is not None else g.get("wrapper_pid")
    return fast.envelope, ts, g.get("level"), rank, int64(int(pid_text)) if pid_text else None, body


__all__ = ["FAST_KINDS", "EnginePlan", "EnvelopePlan", "FieldPlan", "RulePlan", "build_plan",
           "compile_rule", "fast_envelope_frame", "plan_for"]
