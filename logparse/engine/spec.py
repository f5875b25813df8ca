"""The grammar of one engine as the compiled core reads it: plain data (JSON), every regex in the
Rust `regex` crate's syntax (`logparse.grammar.regex_ir.to_rust`), the kinds' columns, derived
columns and column metadata.

A rule the core cannot run (a regex that does not translate) is listed in `untranslatable`; the
core refuses such a grammar (`logparse.engine.compiled`) and `patterns check` names the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from logparse.grammar import Grammar, Rule, StatsRule
from logparse.grammar.regex_ir import Translation, Untranslatable, flag_bits, leading_flags, to_rust
from logparse.store.describe import column_metadata
from logparse.store.schema import core_columns

SPEC_VERSION = 1
# Lines longer than this are only read on their first part: no engine line is this long, and it
# bounds the time spent on hostile input. The event keeps the whole raw line.
MATCH_LIMIT = 256 * 1024
# A message found by searching a line starts it or follows a character that cannot end a word,
# and ends the line.
SEARCH_HEAD = r"(?:^|[^A-Za-z0-9_])(?P<__msg>"
SEARCH_TAIL = r")\Z"
# The completeness of an epoch stamp (the core ranks a line's stamps by it: an epoch number is
# the most complete; then a zone, a year, a month and day, a time alone, 4 to 1).
EPOCH_ONLY = 5


@dataclass
class Spec:
    """The core's grammar for one engine, and the rules it cannot run."""

    data: dict[str, Any]
    untranslatable: dict[str, str] = field(default_factory=dict)  # rule name -> why


def _rust(source: str, where: str, problems: dict[str, str], *, mode: str = "raw") -> dict[str, Any] | None:
    letters, inner = leading_flags(source)
    flags = flag_bits(letters)
    wrapped = {
        "raw": inner,
        "full": r"\A(?:" + inner + r")\Z",
        "match": r"\A(?:" + inner + ")",
        "search": SEARCH_HEAD + inner + SEARCH_TAIL,
    }[mode]
    try:
        t: Translation = to_rust(wrapped, flags=flags)
    except Untranslatable as exc:
        problems[where] = str(exc)
        return None
    return {"pattern": t.pattern, "groups": t.groups}


def _reasons(problems: dict[str, str]) -> str:
    """What keeps a rule out of the core: each reason once, with the first part that has it."""
    first: dict[str, str] = {}
    for where, why in problems.items():
        first.setdefault(why, where)
    return "; ".join(f"{where}: {why}" for why, where in first.items())


def _compiled(
    pattern: regex.Pattern[str], where: str, problems: dict[str, str], mode: str
) -> dict[str, Any] | None:
    return _rust(pattern.pattern, where, problems, mode=mode)


def build_spec(grammar: Grammar, engine: str) -> Spec:
    """The core's grammar for `engine`."""
    problems: dict[str, str] = {}
    env = grammar.envelope
    tokens = []
    for token in env.tokens:
        compiled = _compiled(token.regex, f"token {token.name}", problems, "match")
        if compiled is not None:
            tokens.append({"name": token.name, **compiled, "partial": token.partial_group})
    stamps = []
    for stamp in env.stamps:
        compiled = _compiled(stamp.regex, f"stamp {stamp.name}", problems, "full")
        if compiled is not None:
            stamps.append({"name": stamp.name, **compiled})
    eng = grammar.engines[engine]
    rules = []
    untranslatable: dict[str, str] = {}
    for rule in eng.rules:
        local: dict[str, str] = {}
        item = (
            _stats_spec(grammar, rule, local)
            if isinstance(rule, StatsRule)
            else _rule_spec(grammar, rule, local)
        )
        if local:
            untranslatable[rule.name] = _reasons(local)
            continue
        rules.append(item)
    envelope_problems = {k: v for k, v in problems.items()}
    kinds = sorted({r.kind for r in eng.rules} | {"unparsed"})
    data = {
        "version": SPEC_VERSION,
        "engine": engine,
        "match_limit": MATCH_LIMIT,
        "untyped_levels": sorted(eng.untyped_levels),
        "levels": dict(env.levels),
        "months": dict(env.months),
        "container": {
            "message": list(env.container.message),
            "time": list(env.container.time),
            "level": list(env.container.level),
            "pid": list(env.container.pid),
            "rank": list(env.container.rank),
        },
        "tokens": tokens,
        "stamps": stamps,
        "epoch_completeness": EPOCH_ONLY,
        "rules": rules,
        "kinds": {kind: [[name, typ] for name, typ in core_columns(grammar, kind)] for kind in kinds},
        "derived": {
            kind: [[d.name, [[source, factor] for source, factor in d.sources]] for d in derived]
            for kind, derived in grammar.derived.items()
            if kind in kinds
        },
        "metadata": {kind: _metadata(grammar, kind) for kind in kinds if kind in grammar.kinds},
    }
    if envelope_problems:
        raise Untranslatable(
            "the envelope cannot run in the core: "
            + "; ".join(f"{k}: {v}" for k, v in envelope_problems.items())
        )
    return Spec(data=data, untranslatable=untranslatable)


def _metadata(grammar: Grammar, kind: str) -> dict[str, dict[str, str]]:
    return {
        column: {key.decode(): value.decode() for key, value in meta.items()}
        for column, meta in column_metadata(grammar, kind).items()
    }


def _types(grammar: Grammar, rule: Rule | StatsRule) -> dict[str, str]:
    return {name: grammar.field_type(rule, name) for name in rule.field_names()}


def _rule_spec(grammar: Grammar, rule: Rule, problems: dict[str, str]) -> dict[str, Any]:
    finds = [
        f for f in (_compiled(p, f"find {i + 1}", problems, "raw") for i, p in enumerate(rule.find)) if f
    ]
    return {
        "name": rule.name,
        "kind": rule.kind,
        "type": "regex",
        "fallback": rule.fallback,
        "levels": None if rule.levels is None else sorted(rule.levels),
        "anchors": list(rule.anchors),
        "unless": list(rule.unless),
        "full": _compiled(rule.regex, "regex", problems, "full"),
        "search": _compiled(rule.regex, "regex (search)", problems, "search"),
        "find": finds,
        "constants": dict(rule.constants),
        "templates": rule.templates,
        "derive": {name: list(spec) for name, spec in rule.derive.items()},
        "types": _types(grammar, rule),
    }


def _stats_spec(grammar: Grammar, rule: StatsRule, problems: dict[str, str]) -> dict[str, Any]:
    def entry(e: Any, where: str) -> dict[str, Any]:
        return {
            "key": e.key,
            "field": e.field,
            "units": list(e.units),
            "value": None if e.value is None else _compiled(e.value, f"{where} value", problems, "full"),
            "pattern": None
            if e.pattern is None
            else _compiled(e.pattern, f"{where} pattern", problems, "full"),
        }

    return {
        "name": rule.name,
        "kind": rule.kind,
        "type": "stats",
        "fallback": False,
        "levels": None if rule.levels is None else sorted(rule.levels),
        "title": _compiled(rule.title_regex, "title", problems, "full"),
        "search_title": _rust(rule.title, "title (search)", problems, mode="search"),
        "first": list(rule.first),
        "require": list(rule.require),
        "unless": list(rule.unless),
        "keys": [entry(e, f"key {e.key!r}") for e in rule.keys.values()],
        "key_patterns": [entry(e, f"key pattern {i + 1}") for i, e in enumerate(rule.key_patterns)],
        "constants": dict(rule.constants),
        "types": _types(grammar, rule),
    }


def write_specs(folder: Path) -> list[Path]:
    """Write the built-in grammar's spec of every engine to `folder/spec-<engine>.json`, and its
    rules' real samples with the values they must yield to `folder/samples-<engine>.json` (the
    core's own tests and benches read them)."""
    from logparse.grammar import load_grammar

    grammar = load_grammar()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for engine in sorted(grammar.engines):
        path = folder / f"spec-{engine}.json"
        path.write_text(json.dumps(build_spec(grammar, engine).data), encoding="utf-8")
        samples = [
            {"rule": rule.name, "kind": rule.kind, "line": sample.line, "expect": dict(sample.expect)}
            for rule in grammar.engines[engine].rules
            for sample in rule.samples
        ]
        tests = folder / f"samples-{engine}.json"
        tests.write_text(json.dumps(samples, default=str), encoding="utf-8")
        written += [path, tests]
    return written


if __name__ == "__main__":
    import sys

    for written in write_specs(Path(sys.argv[1] if len(sys.argv) > 1 else "core/target/bench")):
        print(written)
