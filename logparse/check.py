"""Validate grammars against their own samples (`logparse patterns check`).

Checks, each a hard failure: every file loads and every regex compiles (done while loading);
every wrapper, envelope and rule has a sample; each sample is taken by its own envelope and
matched by its own rule and by no other non-fallback rule of its engine; the extracted values
equal the sample's `expect` table, which names every value the rule extracts; and every regex
stays within a time budget on pathological 100 KB lines.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from logparse.grammar import Grammar, Rule, Sample, build_grammar, builtin_files
from logparse.parse import LineParser, peel

TIME_BUDGET_S = 0.25
PATHOLOGICAL_SIZE = 100_000
CARET_CONTEXT = 60


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
        return None, [str(exc)]
    return grammar, [str(p) for p in check_grammar(grammar)]


def check_grammar(grammar: Grammar, *, timing: bool = True) -> list[Problem]:
    """Every problem found in a loaded grammar (empty when it is sound)."""
    problems: list[Problem] = []
    problems.extend(_check_wrappers(grammar))
    for engine in grammar.engines:
        parser = LineParser(grammar, engine)
        problems.extend(_check_envelopes(grammar, parser))
        problems.extend(_check_fast_envelopes(parser))
        problems.extend(_check_rules(grammar, parser))
    if timing:
        problems.extend(check_timing(grammar))
    return problems


def _check_wrappers(grammar: Grammar) -> Iterator[Problem]:
    for wrapper in grammar.wrappers:
        for sample in wrapper.samples:
            where = f'wrapper "{wrapper.name}", sample {sample.index}'
            peeled = peel(grammar.wrappers, sample.line)
            if wrapper.name not in peeled.used:
                yield Problem(wrapper.file, where, "the wrapper does not match its sample",
                              _caret(wrapper.regex, sample.line, full=False),
                              f"wrappers applied: {list(peeled.used) or 'none'}")
                continue
            got = {"wrapper_ts": peeled.wrapper_ts, "rank": peeled.rank, "pid": peeled.pid}
            yield from _compare(wrapper.file, where, sample, {k: v for k, v in got.items() if v is not None})


def _check_envelopes(grammar: Grammar, parser: LineParser) -> Iterator[Problem]:
    for env in parser.engine.envelopes:
        for sample in env.samples:
            where = f'envelope "{env.name}", sample {sample.index}'
            frame = parser.envelope(sample.line)
            if frame.envelope != env.name:
                yield Problem(env.file, where,
                              f"sample is taken by envelope {frame.envelope or 'none'!r}, not by its own",
                              _caret(env.regex, peel(grammar.wrappers, sample.line).rest, full=False),
                              "envelopes are tried in file order, fallbacks last; make this one more "
                              "specific or move it up")
                continue
            got = {"ts": frame.ts, "level": frame.level, "rank": frame.rank, "pid": frame.pid}
            yield from _compare(env.file, where, sample, {k: v for k, v in got.items() if v is not None},
                                strict=False)


def _check_fast_envelopes(parser: LineParser) -> Iterator[Problem]:
    """A fast envelope must read its samples exactly as the reference layers do, and translate."""
    from logparse.fastpath.plan import fast_envelope_frame
    from logparse.fastpath.translate import Untranslatable, translate

    for fast in parser.engine.fast_envelopes:
        try:
            translate(fast.regex.pattern)
        except Untranslatable as exc:
            yield Problem(fast.file, f'fast_envelope "{fast.name}"', f"regex does not run on the fast path: {exc}")
            continue
        for sample in fast.samples:
            where = f'fast_envelope "{fast.name}", sample {sample.index}'
            got = fast_envelope_frame(fast, sample.line)
            if got is None:
                yield Problem(fast.file, where, "the regex does not match the sample (or an exclude does)",
                              _caret(fast.regex, sample.line, full=False))
                continue
            frame = parser.envelope(sample.line)
            want = (frame.envelope, frame.ts, frame.level, frame.rank, frame.pid, frame.body)
            if got != want:
                yield Problem(fast.file, where, "the reference layers read the sample differently",
                              f"  fast     : {got}\n  reference: {want}",
                              "tighten the regex, or add an `exclude` for lines an earlier envelope takes")
                continue
            values = {"ts": got[1], "level": got[2], "rank": got[3], "pid": got[4]}
            yield from _compare(fast.file, where, sample, {k: v for k, v in values.items() if v is not None},
                                strict=False)


def _check_rules(grammar: Grammar, parser: LineParser) -> Iterator[Problem]:
    for rule in parser.engine.rules:
        for sample in rule.samples:
            where = f'rule "{rule.name}", sample {sample.index}'
            frame = parser.envelope(sample.line)
            fields = parser.try_rule(rule, frame)
            if fields is None:
                yield _no_match(rule, sample, frame.body, frame.envelope, frame.level, where)
                continue
            others = [r.name for r in parser.engine.rules
                      if r is not rule and not r.fallback and parser.try_rule(r, frame) is not None]
            if others:
                yield Problem(rule.file, where, f"sample is also matched by rule(s) {others}",
                              f"  body : {_clip(frame.body)}",
                              "make the rules disjoint: a line must have exactly one reading")
                continue
            event = parser.parse(0, sample.line)
            if event.get("rule") != rule.name:
                yield Problem(rule.file, where, f"the line parses as rule {event.get('rule')!r}")
                continue
            got = {k: v for k, v in event.items()
                   if k not in {"kind", "line_no", "engine", "rule"} and v is not None}
            yield from _check_expect_keys(grammar, rule, where, sample)
            yield from _compare(rule.file, where, sample, got, ignore=set(rule.constants),
                                optional={"ts", "level", "rank", "pid"})


def _check_expect_keys(grammar: Grammar, rule: Rule, where: str, sample: Sample) -> Iterator[Problem]:
    allowed = set(grammar.schema(rule.kind)) | set(rule.types) | {"ts", "level", "rank", "pid"}
    unknown = sorted(set(sample.expect) - allowed)
    if unknown:
        yield Problem(rule.file, where, f"expect names {unknown}, which kind {rule.kind!r} does not have")


def _no_match(rule: Rule, sample: Sample, body: str, envelope: str, level: str | None, where: str) -> Problem:
    if rule.envelopes is not None and envelope not in rule.envelopes:
        return Problem(rule.file, where, f"sample is in envelope {envelope!r}; the rule only takes "
                       f"{sorted(rule.envelopes)}", f"  body : {_clip(body)}")
    if rule.levels is not None and (level or "") not in rule.levels:
        return Problem(rule.file, where, f"sample has level {level!r}; the rule only takes {sorted(rule.levels)}")
    missing = [a for a in rule.anchors if a not in body]
    if missing:
        return Problem(rule.file, where, f"anchor(s) {missing} not in the body", f"  body : {_clip(body)}",
                       "an anchor must be a literal substring of every line the rule matches")
    return Problem(rule.file, where, "pattern does not match entire body", _caret(rule.regex, body, full=True),
                   "add an optional group for the new field, or add a new rule for this version")


def _compare(file: Path, where: str, sample: Sample, got: dict[str, Any], *, strict: bool = True,
             ignore: Iterable[str] = (), optional: Iterable[str] = ()) -> Iterator[Problem]:
    ignored = set(ignore)
    opt = set(optional)
    for key, want in sample.expect.items():
        if not _same(want, got.get(key)):
            yield Problem(file, where, f"{key} = {got.get(key)!r}, expected {want!r}")
    if strict:
        extra = sorted(k for k in got if k not in sample.expect and k not in ignored and k not in opt)
        if extra:
            shown = ", ".join(f"{k} = {got[k]!r}" for k in extra)
            yield Problem(file, where, f"extracted values the sample does not state: {shown}",
                          help="add them to the sample's expect table")


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
    shown = ("…" if start else "") + text[start:pos + CARET_CONTEXT] + ("…" if pos + CARET_CONTEXT < len(text) else "")
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


def check_timing(grammar: Grammar, *, budget_s: float = TIME_BUDGET_S) -> list[Problem]:
    """Regexes that take longer than `budget_s` on some pathological line."""
    problems: list[Problem] = []
    items: list[tuple[Path, str, regex.Pattern[str], tuple[str, ...]]] = [
        (w.file, f'wrapper "{w.name}"', w.regex, ()) for w in grammar.wrappers
    ]
    for engine in grammar.engines.values():
        items += [(e.file, f'envelope "{e.name}"', e.regex, ()) for e in engine.envelopes]
        items += [(r.file, f'rule "{r.name}"', r.regex, r.anchors) for r in engine.rules]
    for file, where, pattern, anchors in items:
        for text in pathological_inputs(anchors):
            # CPU time of this process, so a busy machine does not fail a sound regex; the
            # wall-clock timeout only stops a runaway one early.
            start = time.process_time()
            try:
                pattern.fullmatch(text, timeout=budget_s * 10)
                pattern.match(text, timeout=budget_s * 10)
            except TimeoutError:
                pass
            elapsed = time.process_time() - start
            if elapsed > budget_s:
                problems.append(Problem(file, where, f"took {elapsed:.2f} s on a {len(text):,}-character "
                                        f"pathological line (budget {budget_s} s)",
                                        f"  line : {_clip(text, 80)}",
                                        "avoid nested quantifiers and unbounded `.*` before optional parts"))
                break
    return problems
