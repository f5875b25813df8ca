"""Turn mined templates into ready-to-edit grammar rules (`logparse unknown --rule`).

Each template becomes a `[[rule]]` of a new kind declared in the same file: constant tokens are
literal, each masked value a named group typed from what it held, tokens that differ between
lines a `\\S+` group, and the template's first line is the sample with every extracted value in
`expect`. Before a rule is printed it is checked the way `logparse patterns check` will check it:
its sample must parse as this rule, it must not read any other rule's sample, and it must stay
fast on pathological lines. A template that cannot give such a rule is printed as a comment.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from logparse.engine import compiled, convert, core_text
from logparse.escape import for_terminal
from logparse.grammar import COMMON_FIELDS, REGEX_FLAGS, FieldType, Grammar
from logparse.grammar.check import TIME_BUDGET_S, pathological_inputs
from logparse.grammar.model import TOKEN_GROUPS as ENVELOPE_GROUPS
from logparse.mining.drain import MINE_LIMIT, Cluster
from logparse.mining.masking import Masked, token_key

RESERVED = frozenset({*ENVELOPE_GROUPS, *COMMON_FIELDS, "kind", "raw", "time"})
_WORD = regex.compile(r"[A-Za-z][A-Za-z0-9]*", regex.ASCII)
_SAFE_REGEX_CHARS = frozenset(
    'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-:,;=/@%#!~`<>&"'
)
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "on",
        "at",
        "to",
        "for",
        "of",
        "in",
        "is",
        "by",
        "from",
        "with",
        "and",
        "or",
        "as",
        "be",
        "are",
        "was",
        "took",
        "s",
    }
)
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


@dataclass
class Suggestion:
    """A rule for one template, or the reason there is none."""

    cluster: Cluster
    name: str = ""
    kind: str = ""
    anchor: str = ""
    regex: str = ""
    types: dict[str, FieldType] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    strict: bool = False  # wildcards were replaced by the example's text to keep rules disjoint


# -- text for TOML and regex ---------------------------------------------------------------------
def toml_string(text: str) -> str:
    """A TOML basic string holding `text` exactly, with every control or format character escaped."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif code < 0x20 or 0x7F <= code <= 0x9F or (not ch.isprintable() and ch != " "):
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    """A TOML literal for an extracted value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return toml_string(str(value))


def regex_literal(text: str) -> str:
    """`text` as a regex matching exactly it, in printable ASCII (no quote of any kind left bare)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _SAFE_REGEX_CHARS:
            out.append(ch)
        elif code < 0x80 and ch.isprintable():
            out.append("\\" + ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def _space(text: str, same: bool, *, edge: bool) -> str:
    if same:
        return regex_literal(text)
    return r"\s*" if edge else r"\s+"


# -- one rule ------------------------------------------------------------------------------------
def _field_name(context: str, fallback: str, used: set[str]) -> str:
    words = [w.lower() for w in _WORD.findall(context)]
    words = ([w for w in words if w not in _STOPWORDS] or words)[-2:]
    base = "_".join(words)[:40].strip("_") or fallback
    if not base[0].isalpha():
        base = f"f_{base}"
    name, n = base, 1
    while name in used or name in RESERVED:
        n += 1
        name = f"{base}_{n}"
    used.add(name)
    return name


def _build(cluster: Cluster, *, strict: bool) -> tuple[str, dict[str, FieldType], str] | str:
    """Regex source, field types and anchor for a cluster; or why there is none."""
    ex = cluster.example.masked
    parts: list[str] = []
    literal_runs: list[str] = []
    run = ""
    context = ""  # literal text since the last group, to name the next group
    used: set[str] = set()
    types: dict[str, FieldType] = {}
    n = len(ex.tokens)

    def end_run() -> None:
        nonlocal run
        literal_runs.append(run)
        run = ""

    for i, token in enumerate(ex.tokens):
        gap, same = ex.spaces[i], cluster.same_space[i]
        parts.append(_space(gap, same, edge=i == 0))
        if same:
            run += gap
            context += gap
        else:
            end_run()
        wild = cluster.template[i] is None and not strict
        if (
            wild
            and not any(ch.isspace() for ch in token_key(token))
            and not any(isinstance(p, Masked) and any(ch.isspace() for ch in p.text) for p in token)
        ):
            name = _field_name(context, "value", used)
            types[name] = "str"
            parts.append(f"(?P<{name}>\\S+)")
            end_run()
            context = ""
            continue
        for j, piece in enumerate(token):
            if isinstance(piece, str):
                parts.append(regex_literal(piece))
                run += piece
                context += piece
                continue
            typ = piece.field_type()
            if typ == "int" and (i, j) in cluster.floats:
                typ = "float"
            name = _field_name(context, piece.mask.lower(), used)
            types[name] = typ
            parts.append(f"(?P<{name}>{piece.capture(typ)})")
            end_run()
            context = ""
    trailing = ex.spaces[n] if n < len(ex.spaces) else ""
    parts.append(_space(trailing, cluster.same_space[n] if n < len(cluster.same_space) else True, edge=True))
    end_run()
    anchors = [r.strip() for r in literal_runs if any(ch.isalpha() for ch in r)]
    if not anchors:
        return "the template has no constant text to anchor a rule on"
    anchor = max(anchors, key=lambda a: sum(ch.isalnum() for ch in a))  # the first of the wordiest
    source = "".join(parts)
    return source, types, anchor


def _slug(text: str) -> str:
    words = [w.lower() for w in _WORD.findall(text)][:3]
    return "_".join(words)[:40] or "line"


def suggest(clusters: Sequence[Cluster], grammar: Grammar, engine: str) -> list[Suggestion]:
    """A checked rule (or the reason for none) per cluster, in the given order."""
    taken_kinds = set(grammar.kinds)
    taken_rules = {r.name for r in grammar.engines[engine].rules}
    samples = [s.line for r in grammar.engines[engine].rules for s in r.samples]
    examples = [cluster.example.raw for cluster in clusters]
    # the messages of the grammar's samples and of the examples, as the core peels them (one call)
    events = compiled(grammar, engine).parse_lines([core_text(t) for t in samples + examples], alone=True)
    bodies = [event["_frame"]["body"] for event in events]
    builtin_bodies, body_of = bodies[: len(samples)], dict(zip(examples, bodies[len(samples) :], strict=True))
    suggestions: list[Suggestion] = []
    for cluster in clusters:
        s = Suggestion(cluster)
        suggestions.append(s)
        if cluster.overflow:
            s.problem = "these lines were not clustered (too many templates)"
            continue
        if len(cluster.example.body) > MINE_LIMIT:
            s.problem = f"the example body is longer than {MINE_LIMIT:,} characters"
            continue
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in cluster.example.raw):
            s.problem = "the example line holds characters TOML cannot store"
            continue
        slug = _slug(cluster.literal_text())
        s.kind = _unique(f"new_{slug}", taken_kinds)
        s.name = _unique(f"{s.kind}_v1", taken_rules)
        _fill(s, body_of[cluster.example.raw], strict=False)
    # Rules must be disjoint: no suggested rule may read another rule's sample.
    for s in suggestions:
        if s.problem:
            continue
        others = [
            body_of[o.cluster.example.raw] for o in suggestions if o is not s and not o.problem
        ] + builtin_bodies
        body = body_of[s.cluster.example.raw]
        if _reads_any(s, others) and _fill(s, body, strict=True) and _reads_any(s, others):
            s.problem = "a rule for this template would also read other rules' samples"
    for s in suggestions:
        if not s.problem and not _fast(s.regex, s.anchor):
            s.problem = "the suggested regex is too slow on pathological lines"
    return suggestions


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def _fill(s: Suggestion, body: str, *, strict: bool) -> bool:
    """Build the rule and its expected values from the example (whose message is `body`); False
    (with a problem) on failure."""
    built = _build(s.cluster, strict=strict)
    if isinstance(built, str):
        s.problem = built
        return False
    s.regex, s.types, s.anchor = built
    s.strict = strict
    try:
        pattern = regex.compile(s.regex, REGEX_FLAGS)
    except regex.error as exc:  # pragma: no cover - the builder escapes every literal
        s.problem = f"the suggested regex does not compile: {exc}"
        return False
    m = pattern.fullmatch(body, timeout=TIME_BUDGET_S)
    if m is None:
        s.problem = "the suggested regex does not read its own example"
        return False
    s.expect = {}
    for name, value in m.groupdict().items():
        if value is None:
            continue
        converted = convert(value, s.types[name])
        if converted is None or (isinstance(converted, float) and math.isnan(converted)):
            s.types[name] = "str"
            converted = value
        s.expect[name] = converted
    return True


def _reads_any(s: Suggestion, bodies: Iterable[str]) -> bool:
    pattern = regex.compile(s.regex, REGEX_FLAGS)
    for body in bodies:
        if s.anchor not in body:
            continue
        try:
            if pattern.fullmatch(body, timeout=TIME_BUDGET_S) is not None:
                return True
        except TimeoutError:
            return True
    return False


def _fast(source: str, anchor: str) -> bool:
    pattern = regex.compile(source, REGEX_FLAGS)
    for text in pathological_inputs((anchor,)):
        start = time.perf_counter()
        try:
            pattern.fullmatch(text, timeout=TIME_BUDGET_S)
            pattern.match(text, timeout=TIME_BUDGET_S)
        except TimeoutError:
            return False
        if time.perf_counter() - start > TIME_BUDGET_S / 2:
            return False
    return True


# -- the file ------------------------------------------------------------------------------------
DRAFT_UNIT = "as printed"


def render_rules(suggestions: Sequence[Suggestion], engine: str, source: str) -> str:
    """A grammar file holding every suggested rule (and a comment for each template without one)."""
    good = [s for s in suggestions if not s.problem]
    out = [
        f"# Rules suggested by `logparse unknown --rule` for {for_terminal(source)} ({engine}).",
        "# Rename the kinds, rules and fields, tighten the regexes, then check this file with",
        "# `logparse patterns check FILE` and read logs with `--patterns FILE`.",
        f"engine = {toml_string(engine)}",
        "",
    ]
    for s in good:
        out.append(f"[kinds.{s.kind}]  # new kind; the fields are typed in each rule's `types`")
        what = for_terminal(_clip(s.cluster.text(), 120))
        out.append(f"description = {toml_string('lines like: ' + what)}  # draft: say what they are")
    for s in suggestions:
        c = s.cluster
        out.append("")
        shown = for_terminal(_clip(c.text(), 300))
        out.append(f"# {c.count:,} line(s), first at line {c.first_line}: {shown}")
        if s.problem:
            out.append(f"# no rule suggested: {s.problem}")
            continue
        if s.strict:
            out.append("# (the differing tokens are literal here, to keep this rule apart from others)")
        out.append("[[rule]]")
        out.append(f"name = {toml_string(s.name)}")
        out.append(f"kind = {toml_string(s.kind)}")
        out.append(f"anchor = {toml_string(s.anchor)}")
        if s.types:
            # drafts of the documentation `patterns check` asks for: say what each value means
            fields = (
                f"{k} = {{ type = {toml_string(v)}, unit = {toml_string(DRAFT_UNIT)}, "
                f"description = {toml_string(f'{k} as printed (draft: say what it means)')} }}"
                for k, v in s.types.items()
            )
            out.append("types = { " + ", ".join(fields) + " }")
        literal = "'''" not in s.regex and not s.regex.endswith("'")
        out.append(f"regex = '''{s.regex}'''" if literal else f"regex = {toml_string(s.regex)}")
        out.append("[[rule.sample]]")
        out.append(f"line = {toml_string(c.example.raw)}")
        out.append(
            "expect = { " + ", ".join(f"{k} = {toml_value(v)}" for k, v in s.expect.items()) + " }"
            if s.expect
            else "expect = {}"
        )
    return "\n".join(out) + "\n"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
