"""Validate grammars against their own samples (`logparse patterns check`).

Checks, each a hard failure: every file loads and every regex compiles (done while loading); the
compiled core runs every rule (a rule whose regex the Rust `regex` crate cannot run is refused,
with the reason and how to rewrite it); every token, stamp and rule has a sample; the core reads a
token's sample with that token and a stamp's sample as a valid time, by that stamp; the core reads
a rule's sample with that rule and no other regular rule of its engine reads it, with exactly the
values its `expect` table states; every regex stays within a time budget on pathological 100 KB
lines in a backtracking engine (lnav's PCRE2 runs the exported formats, and the diagnostics here
and in `drift` run the grammar's regexes with the `regex` module).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex

from logparse.grammar.load import build_grammar, builtin_files
from logparse.grammar.model import (
    ADDED_COLUMNS,
    COMMON_FIELDS,
    AnyRule,
    ColumnDoc,
    Grammar,
    Sample,
    StatsRule,
)

if TYPE_CHECKING:
    from logparse._core import Core, Frame, LineEvent

TIME_BUDGET_S = 0.25
PATHOLOGICAL_SIZE = 100_000
CARET_CONTEXT = 60
ENVELOPE_KEYS = ("ts", "outer_ts", "level", "rank", "pid", "task")
# A stamp's groups and the parts the core reads from them (the text groups are read otherwise:
# a fraction as microseconds, a zone as minutes, a month name by `[months]`)
STAMP_PARTS = {"Y": "year", "m": "month", "d": "day", "H": "hour", "M": "minute", "S": "second"}


@dataclass(frozen=True)
class Problem:
    """One failed check, printed lnav-style: what, where, why, help."""

    file: Path
    where: str
    error: str
    detail: str = ""
    help: str = ""

    def __str__(self) -> str:
        lines = [f"{self.file}: {self.where}", f"  error: {self.error}"]
        if self.detail:
            lines.extend(self.detail.splitlines())
        if self.help:
            lines.append(f"  help : {self.help}")
        return "\n".join(lines)


def check_files(extra: Sequence[Path] = ()) -> tuple[Grammar | None, list[str]]:
    """Load the built-in grammars plus `extra` files and check them; return problems as text."""
    from logparse.errors import PatternError

    try:
        grammar = build_grammar([*builtin_files(), *extra])
    except PatternError as exc:
        return None, exc.problems
    return grammar, [str(p) for p in check_grammar(grammar)]


def check_grammar(grammar: Grammar, *, timing: bool = True) -> list[Problem]:
    """Every problem found in a loaded grammar (empty when it is sound)."""
    problems: list[Problem] = []
    problems.extend(check_docs(grammar))
    cores: dict[str, tuple[Core, set[str]]] = {}
    for engine in sorted(grammar.engines):
        found = _core(grammar, engine, problems)
        if found is not None:
            cores[engine] = found
    if cores:
        first, _ = cores[min(cores)]
        problems.extend(_check_stamps(grammar, first))
        problems.extend(_check_tokens(grammar, first))
    for engine, (core, refused) in sorted(cores.items()):
        problems.extend(_check_rules(grammar, engine, core, refused))
    if timing:
        problems.extend(check_timing(grammar))
    return problems


def _core(grammar: Grammar, engine: str, problems: list[Problem]) -> tuple[Core, set[str]] | None:
    """The engine's core without the rules it refuses, and their names (each refusal noted in
    `problems`); None when the envelope does not run in the core."""
    from logparse.engine import REWRITE_HINT, core_of, engine_spec
    from logparse.errors import PatternError

    try:
        spec = engine_spec(grammar, engine)
    except PatternError as exc:
        problems.append(Problem(_envelope_file(grammar), "envelope", f"the compiled core refuses it: {exc}"))
        return None
    rules = {rule.name: rule for rule in grammar.engines[engine].rules}
    for name, why in spec.untranslatable.items():
        problems.append(
            Problem(
                rules[name].file,
                f'rule "{name}"',
                f"the compiled core refuses this rule: {why}",
                help=REWRITE_HINT,
            )
        )
    return core_of(spec), set(spec.untranslatable)


def _envelope_file(grammar: Grammar) -> Path:
    files = {t.file for t in grammar.envelope.tokens} | {s.file for s in grammar.envelope.stamps}
    return min(files) if files else Path("envelope.toml")


def check_docs(grammar: Grammar) -> Iterator[Problem]:
    """Every kind has a description, every column (common, printed, derived) a unit and a
    description: `logparse schema`, the Parquet metadata and the README are made of them."""
    fallback = grammar.files[0] if grammar.files else Path("kinds.toml")
    help_ = "document it as NAME = { type = ..., unit = ..., description = ... } (see kinds.toml)"
    for name in (*COMMON_FIELDS, *ADDED_COLUMNS):
        yield from _missing_doc(grammar.common_docs.get(name), fallback, f"common column {name!r}", help_)
    for kind in sorted(grammar.kinds):
        docs = grammar.column_docs.get(kind, {})
        if not grammar.kind_docs.get(kind):
            doc = next(iter(docs.values()), None)
            rule = next((r for e in grammar.engines.values() for r in e.rules if r.kind == kind), None)
            yield Problem(
                file=doc.file if doc and doc.file else (rule.file if rule else fallback),
                where=f"kind {kind!r}",
                error="the kind has no description",
                help=f'add description = "..." to [kinds.{kind}]',
            )
        columns = [*grammar.schema(kind), *(d.name for d in grammar.derived.get(kind, ()))]
        for name in columns:
            yield from _missing_doc(docs.get(name), fallback, f"kind {kind!r}, column {name!r}", help_)


def _missing_doc(doc: ColumnDoc | None, fallback: Path, where: str, help_: str) -> Iterator[Problem]:
    missing = [part for part in ("unit", "description") if not doc or not getattr(doc, part)]
    if missing:
        yield Problem(
            file=doc.file if doc and doc.file else fallback,
            where=where,
            error=f"no {' and no '.join(missing)}",
            help=help_,
        )


def _check_stamps(grammar: Grammar, core: Core) -> Iterator[Problem]:
    for stamp in grammar.envelope.stamps:
        for sample in stamp.samples:
            where = f'stamp "{stamp.name}", sample {sample.index}'
            first = next((s for s in grammar.envelope.stamps if s.regex.fullmatch(sample.line)), None)
            if first is not stamp:
                yield Problem(
                    stamp.file,
                    where,
                    f"the sample is read by stamp {first.name if first else None!r}, not by its own",
                    help="stamps are tried in file order",
                )
                continue
            m = stamp.regex.fullmatch(sample.line)
            assert m is not None
            got = {
                k: (int(v) if k not in ("f", "tz", "mon", "epoch") else v)
                for k, v in m.groupdict().items()
                if v is not None
            }
            yield from _compare(stamp.file, where, sample, got)
            parts = core.read_stamp(sample.line)
            if parts is None:
                yield Problem(stamp.file, where, "the compiled core does not read the sample as a valid time")
                continue
            values: dict[str, object] = dict(parts)
            for part, name in STAMP_PARTS.items():
                value = values[name]
                if part in got and value != got[part]:
                    yield Problem(
                        stamp.file,
                        where,
                        f"the compiled core reads {part} = {value!r}, expected {got[part]!r}",
                    )


def _envelope_values(event: LineEvent) -> dict[str, Any]:
    return {k: event[k] for k in ENVELOPE_KEYS if event.get(k) is not None}


def _check_tokens(grammar: Grammar, core: Core) -> Iterator[Problem]:
    samples = [(token, sample) for token in grammar.envelope.tokens for sample in token.samples]
    events = core.parse_lines([sample.line for _, sample in samples], alone=True)
    for (token, sample), event in zip(samples, events, strict=True):
        where = f'token "{token.name}", sample {sample.index}'
        frame: Frame = event["_frame"]
        used = [n["source"] for n in frame["notes"]]
        if token.name not in used:
            yield Problem(
                token.file,
                where,
                "the token does not take its part of the sample",
                _caret(token.regex, sample.line, full=False),
                f"tokens taken: {used or 'none'}",
            )
            continue
        yield from _compare(token.file, where, sample, _envelope_values(event), strict=False)
    container = grammar.envelope.container
    events = core.parse_lines([sample.line for sample in container.samples], alone=True)
    for sample, event in zip(container.samples, events, strict=True):
        where = f"container, sample {sample.index}"
        yield from _compare(Path("envelope.toml"), where, sample, _envelope_values(event), strict=False)


def _check_rules(grammar: Grammar, engine: str, core: Core, refused: set[str]) -> Iterator[Problem]:
    """The samples of the rules the core runs (`refused`: those it does not), read by the core."""
    rules = [rule for rule in grammar.engines[engine].rules if rule.name not in refused]
    regular = {rule.name for rule in rules if not rule.fallback}
    samples = [(rule, sample) for rule in rules for sample in rule.samples]
    events = core.parse_lines([sample.line for _, sample in samples], alone=True)
    for (rule, sample), event in zip(samples, events, strict=True):
        where = f'rule "{rule.name}", sample {sample.index}'
        body = event["_frame"]["body"]
        if event.get("rule") != rule.name:
            yield _no_match(rule, sample, body, event.get("rule"), where)
            continue
        others = [
            name
            for name in core.rules_reading(body, event.get("level"))
            if name in regular and name != rule.name
        ]
        if others:
            yield Problem(
                rule.file,
                where,
                f"sample is also matched by rule(s) {others}",
                f"  body : {_clip(body)}",
                "make the rules disjoint: a line must have exactly one reading",
            )
            continue
        if event.get("extra"):
            keys = [k for k, _ in event["extra"]]
            yield Problem(
                rule.file,
                where,
                f"sample has keys the rule does not know: {keys}",
                help="add them to the rule's keys (a sample shows what the rule reads)",
            )
            continue
        got = {
            k: v
            for k, v in event.items()
            if k not in {"kind", "engine", "rule", "raw", "extra"} and not k.startswith("_") and v is not None
        }
        yield from _check_expect_keys(grammar, rule, where, sample)
        yield from _compare(
            rule.file,
            where,
            sample,
            got,
            ignore=set(rule.constants),
            optional=set(ENVELOPE_KEYS) | {"prefix"},
        )


def _check_expect_keys(grammar: Grammar, rule: AnyRule, where: str, sample: Sample) -> Iterator[Problem]:
    allowed = set(grammar.schema(rule.kind)) | set(rule.types) | set(ENVELOPE_KEYS) | {"prefix"}
    unknown = sorted(set(sample.expect) - allowed)
    if unknown:
        yield Problem(rule.file, where, f"expect names {unknown}, which kind {rule.kind!r} does not have")


def _no_match(rule: AnyRule, sample: Sample, body: str, taken_by: str | None, where: str) -> Problem:
    if isinstance(rule, StatsRule):
        return Problem(
            rule.file,
            where,
            f"the line parses as rule {taken_by!r}",
            f"  body : {_clip(body)}",
            "its pairs must begin with one of `first` and hold `require`",
        )
    if taken_by is not None:
        return Problem(
            rule.file,
            where,
            f"the line parses as rule {taken_by!r}",
            f"  body : {_clip(body)}",
            "rules are tried in file order; make the earlier one more specific",
        )
    missing = [a for a in rule.anchors if a not in body]
    if missing:
        return Problem(
            rule.file,
            where,
            f"anchor(s) {missing} not in the message",
            f"  body : {_clip(body)}",
            "an anchor must be a literal substring of every line the rule matches",
        )
    return Problem(
        rule.file,
        where,
        "pattern does not match the whole message",
        _caret(rule.regex, body, full=True),
        "add an optional group for the new field, or add a new rule for this version",
    )


def _compare(
    file: Path,
    where: str,
    sample: Sample,
    got: dict[str, Any],
    *,
    strict: bool = True,
    ignore: Iterable[str] = (),
    optional: Iterable[str] = (),
) -> Iterator[Problem]:
    ignored = set(ignore)
    opt = set(optional)
    for key, want in sample.expect.items():
        if not _same(want, got.get(key)):
            yield Problem(file, where, f"{key} = {got.get(key)!r}, expected {want!r}")
    if strict:
        extra = sorted(k for k in got if k not in sample.expect and k not in ignored and k not in opt)
        if extra:
            shown = ", ".join(f"{k} = {got[k]!r}" for k in extra)
            yield Problem(
                file,
                where,
                f"extracted values the sample does not state: {shown}",
                help="add them to the sample's expect table",
            )


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got or want == got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(float(want), float(got), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_same(a, b) for a, b in zip(want, got))
    return bool(want == got)


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def matched_prefix(pattern: regex.Pattern[str], text: str, *, full: bool) -> int:
    """Length of the longest prefix of `text` that could still begin a match of `pattern`."""

    def could_continue(k: int) -> bool:
        try:
            method = pattern.fullmatch if full else pattern.match
            return method(text[:k], partial=True, timeout=TIME_BUDGET_S) is not None
        except TimeoutError:
            return False

    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if could_continue(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _caret(pattern: regex.Pattern[str], text: str, *, full: bool) -> str:
    pos = matched_prefix(pattern, text, full=full)
    start = max(0, pos - CARET_CONTEXT)
    shown = (
        ("…" if start else "")
        + text[start : pos + CARET_CONTEXT]
        + ("…" if pos + CARET_CONTEXT < len(text) else "")
    )
    offset = pos - start + (1 if start else 0)
    return f"  body : {shown}\n         {' ' * offset}^ matched up to here"


def pathological_inputs(anchors: Sequence[str]) -> list[str]:
    """Hostile lines: long digit runs, nested brackets, repeated separators, near-misses."""
    head = " ".join(anchors)
    n = PATHOLOGICAL_SIZE
    return [
        f"{head}: " + "9" * n + "!",
        f"{head}: " + "1," * (n // 2) + "x",
        f"{head} " + "(" * (n // 2) + ")" * (n // 2),
        f"{head} " + "[" * (n // 2) + "x",
        f"{head} " + "a " * (n // 2),
        "INFO 01-01 00:00:00 [x.py:1] " + f"{head} " + "{'a': " * (n // 8) + "}",
        f"[2025-01-01 00:00:00 TP0] {head} " + "#x: 1, " * (n // 7),
        " " * n + head,
    ]


def _regexes(grammar: Grammar) -> Iterator[tuple[Path, str, regex.Pattern[str], tuple[str, ...]]]:
    for t in grammar.envelope.tokens:
        yield t.file, f'token "{t.name}"', t.regex, ()
    for st in grammar.envelope.stamps:
        yield st.file, f'stamp "{st.name}"', st.regex, ()
    for engine in grammar.engines.values():
        for r in engine.rules:
            if isinstance(r, StatsRule):
                yield r.file, f'rule "{r.name}" title', r.title_regex, r.first
                for entry in (*r.keys.values(), *r.key_patterns):
                    for compiled in (entry.value, entry.pattern):
                        if compiled is not None:
                            yield r.file, f'rule "{r.name}" key {entry.key!r}', compiled, ()
            else:
                yield r.file, f'rule "{r.name}"', r.regex, r.anchors
                for pattern in r.find:
                    yield r.file, f'rule "{r.name}" find', pattern, r.anchors


def check_timing(grammar: Grammar, *, budget_s: float = TIME_BUDGET_S) -> list[Problem]:
    """Regexes that take longer than `budget_s` on some pathological line in a backtracking engine
    (the `regex` module; PCRE2 backtracks alike). The compiled core's engine is linear: this guards
    the exported lnav formats and the diagnostics that run the grammar's regexes in Python."""
    problems: list[Problem] = []
    for file, where, pattern, anchors in _regexes(grammar):
        for text in pathological_inputs(anchors):
            start = time.process_time()
            try:
                pattern.fullmatch(text, timeout=budget_s * 10)
                pattern.match(text, timeout=budget_s * 10)
            except TimeoutError:
                pass
            elapsed = time.process_time() - start
            if elapsed > budget_s:
                problems.append(
                    Problem(
                        file,
                        where,
                        f"took {elapsed:.2f} s on a {len(text):,}-character "
                        f"pathological line (budget {budget_s} s)",
                        f"  line : {_clip(text, 80)}",
                        "avoid nested quantifiers and unbounded `.*` before optional parts",
                    )
                )
                break
    return problems
