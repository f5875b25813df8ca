"""Load the grammar files in `patterns/` into compiled, immutable objects.

A grammar has three layers, all data:

* `kinds.toml`: the event kinds and the type of each field.
* `common.toml`: *wrappers*, prefixes that any engine's lines may carry (docker `--timestamps`,
  docker-compose `name | `, journald, Ray / multiprocess `(Name pid=N)`, indentation). They are
  peeled off the start of a line, repeatedly.
* `<engine>.toml`: *envelopes* (the engine's own line prefix; the first that matches gives `ts`,
  `level`, `rank` and the `body`) and *rules* (one regex per line shape, matched against the whole
  body; named groups are field names).

Every wrapper, envelope and rule carries sample lines with the values they must yield;
`logparse.check` verifies them.
"""
from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import regex

from logparse.errors import PatternError

FieldType = Literal["int", "float", "str", "bool", "floats"]
FIELD_TYPES: frozenset[str] = frozenset({"int", "float", "str", "bool", "floats"})
COMMON_FIELDS: dict[str, FieldType] = {
    "line_no": "int",
    "ts": "str",
    "engine": "str",
    "rank": "str",
    "pid": "int",
    "level": "str",
    "rule": "str",
}
# Named groups with a meaning for the parser itself rather than a field of the kind.
ENVELOPE_GROUPS = frozenset({"ts", "level", "rank", "pid", "body", "pre", "wrapper_ts"})
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Functions a rule's `derive` table may apply to a captured group ("count:sizes").
DERIVE_FUNCTIONS = frozenset({"count", "duration"})
REGEX_FLAGS = regex.ASCII | regex.V0
AnyPattern = re.Pattern[str] | regex.Pattern[str]
PATTERNS_ENV = "LOGPARSE_PATTERNS"


@dataclass(frozen=True)
class Sample:
    """A real line, and the values its rule must extract from it."""

    line: str
    expect: Mapping[str, Any]
    index: int


class _Matchable:
    """Gives a grammar item with a `regex` the faster `matcher` used while parsing."""

    regex: regex.Pattern[str]

    @functools.cached_property
    def matcher(self) -> AnyPattern:
        """The pattern used while parsing (stdlib `re` when possible)."""
        return fast_matcher(self.regex)


@dataclass(frozen=True)
class Wrapper(_Matchable):
    """A prefix added around engine lines by a container runtime, journald, Ray, etc."""

    name: str
    source: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path


@dataclass(frozen=True)
class Envelope(_Matchable):
    """An engine's own line prefix. `fallback` envelopes (e.g. bare text) are tried last."""

    name: str
    engine: str
    source: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path
    fallback: bool = False
    distinctive: bool = False
    untyped: bool = False


@dataclass(frozen=True)
class FastEnvelope(_Matchable):
    """The prefix of an engine's high-volume lines, as the fast path reads them (data, not code).

    On a line that `regex` matches at its start and that no `exclude` pattern matches anywhere,
    the reference layers (wrappers peeled, envelopes tried in order) must take envelope
    `envelope` and give exactly these groups, with the rest of the line as the body (trailing
    blanks removed when `strip`). Groups: `ts`, `wrapper_ts`, `level`, `rank`, `pid`,
    `wrapper_rank`, `wrapper_pid`. `logparse patterns check` verifies this on the samples.
    """

    name: str
    engine: str
    envelope: str
    source: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path
    strip: bool = False
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule(_Matchable):
    """One line shape of one event kind, matched against the whole body of a line."""

    name: str
    engine: str
    kind: str
    source: str
    regex: regex.Pattern[str]
    samples: tuple[Sample, ...]
    file: Path
    anchors: tuple[str, ...] = ()
    envelopes: frozenset[str] | None = None
    levels: frozenset[str] | None = None
    fallback: bool = False
    constants: Mapping[str, Any] = field(default_factory=dict)
    types: Mapping[str, FieldType] = field(default_factory=dict)
    derive: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @functools.cached_property
    def templates(self) -> dict[str, str]:
        """Constants that name captured fields, e.g. `what = "compile_graph: {shape}"`."""
        return {k: v for k, v in self.constants.items() if isinstance(v, str) and _PLACEHOLDER.search(v)}

    def field_names(self) -> tuple[str, ...]:
        """Fields this rule can produce: named groups (not `_private` ones), constants, derived."""
        groups = tuple(g for g in self.regex.groupindex if g not in ENVELOPE_GROUPS and not g.startswith("_"))
        return tuple(dict.fromkeys((*groups, *self.constants, *self.derive)))


@dataclass(frozen=True)
class EngineGrammar:
    """Everything one engine's grammar file declares."""

    name: str
    title: str
    files: tuple[Path, ...]
    envelopes: tuple[Envelope, ...]
    rules: tuple[Rule, ...]
    markers: tuple[str, ...] = ()
    fast_envelopes: tuple[FastEnvelope, ...] = ()


@dataclass(frozen=True)
class Grammar:
    """All grammars: kind schemas, wrappers and one `EngineGrammar` per engine."""

    kinds: Mapping[str, Mapping[str, FieldType]]
    wrappers: tuple[Wrapper, ...]
    engines: Mapping[str, EngineGrammar]
    files: tuple[Path, ...]

    def field_type(self, rule: Rule, name: str) -> FieldType:
        """Type of field `name` as produced by `rule` (rule-declared types win)."""
        if name in rule.types:
            return rule.types[name]
        if name in COMMON_FIELDS:
            return COMMON_FIELDS[name]
        return self.kinds[rule.kind][name]

    def schema(self, kind: str) -> dict[str, FieldType]:
        """Field types of a kind, including fields only some rules declare."""
        out = dict(self.kinds.get(kind, {}))
        for engine in self.engines.values():
            for rule in engine.rules:
                if rule.kind == kind:
                    for name, typ in rule.types.items():
                        out.setdefault(name, typ)
        return out


def fast_matcher(pattern: regex.Pattern[str]) -> AnyPattern:
    """The same pattern compiled with the stdlib `re` (3x faster) when it accepts it.

    Patterns using what only `regex` offers (duplicate group names, `\\p{L}`) stay as they are.
    """
    try:
        return re.compile(pattern.pattern, re.ASCII)
    except (re.error, ValueError):
        return pattern


def patterns_dir() -> Path:
    """The directory holding the built-in grammar files (wheel or source checkout)."""
    packaged = resources.files("logparse") / "patterns"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[1] / "patterns"


def builtin_files() -> list[Path]:
    """The built-in grammar files: kinds, common, then engines in name order."""
    folder = patterns_dir()
    names = sorted(p.name for p in folder.glob("*.toml"))
    head = [n for n in ("kinds.toml", "common.toml") if n in names]
    return [folder / n for n in head + [n for n in names if n not in head]]


def user_pattern_files(explicit: Sequence[str | Path] = ()) -> list[Path]:
    """User grammar files from `--patterns` and the `LOGPARSE_PATTERNS` path list."""
    env = [p for p in os.environ.get(PATTERNS_ENV, "").split(os.pathsep) if p.strip()]
    return [Path(p) for p in (*env, *explicit)]


@functools.cache
def _cached_grammar(files: tuple[Path, ...]) -> Grammar:
    return build_grammar(files)


def load_grammar(extra: Sequence[str | Path] = ()) -> Grammar:
    """Load the built-in grammars plus user files (`extra`, `LOGPARSE_PATTERNS`). Cached."""
    files = tuple(builtin_files()) + tuple(p.resolve() for p in user_pattern_files(extra))
    return _cached_grammar(files)


def build_grammar(files: Iterable[Path]) -> Grammar:
    """Read and compile grammar files; raise `PatternError` listing every problem found."""
    loader = _Loader()
    paths = tuple(files)
    for path in paths:
        loader.load_file(path)
    return loader.finish(paths)


class _Loader:
    """Accumulates declarations from several files, collecting every problem before failing."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.kinds: dict[str, dict[str, FieldType]] = {}
        self.wrappers: list[Wrapper] = []
        self.envelopes: dict[str, list[Envelope]] = {}
        self.rules: dict[str, list[Rule]] = {}
        self.fast_envelopes: dict[str, list[FastEnvelope]] = {}
        self.titles: dict[str, str] = {}
        self.markers: dict[str, list[str]] = {}
        self.engine_files: dict[str, list[Path]] = {}
        self.defs: dict[str, str] = {}

    def problem(self, path: Path, where: str, message: str) -> None:
        self.problems.append(f"{path}: {where}\n  error: {message}")

    def load_file(self, path: Path) -> None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.problem(path, "file", "no such grammar file")
            return
        except (OSError, UnicodeDecodeError) as exc:
            self.problem(path, "file", f"cannot read: {exc}")
            return
        except tomllib.TOMLDecodeError as exc:
            self.problem(path, "file", f"not valid TOML: {exc}")
            return
        known = {"engine", "title", "defs", "detect", "kinds", "wrapper", "envelope", "rule", "fast_envelope"}
        for key in sorted(set(data) - known):
            self.problem(path, "file", f"unknown top-level key {key!r} (expected one of {sorted(known)})")
        defs = {**self.defs, **{str(k): str(v) for k, v in data.get("defs", {}).items()}}
        if "engine" not in data:
            self.defs.update(defs)  # common defs are visible to every later file
        for kind, fields in data.get("kinds", {}).items():
            self._load_kind(path, kind, fields)
        for i, item in enumerate(data.get("wrapper", [])):
            wrapper = self._load_wrapper(path, i, item, defs)
            if wrapper:
                self.wrappers.append(wrapper)
        engine = data.get("engine")
        if engine is None:
            if data.get("envelope") or data.get("rule"):
                self.problem(path, "file", "envelopes and rules need `engine = \"...\"` at the top")
            return
        engine = str(engine)
        self.engine_files.setdefault(engine, []).append(path)
        if "title" in data:
            self.titles[engine] = str(data["title"])
        self.markers.setdefault(engine, []).extend(str(m) for m in data.get("detect", {}).get("markers", []))
        for i, item in enumerate(data.get("envelope", [])):
            envelope = self._load_envelope(path, engine, i, item, defs)
            if envelope:
                self.envelopes.setdefault(engine, []).append(envelope)
        for i, item in enumerate(data.get("rule", [])):
            rule = self._load_rule(path, engine, i, item, defs)
            if rule:
                self.rules.setdefault(engine, []).append(rule)
        for i, item in enumerate(data.get("fast_envelope", [])):
            fast = self._load_fast_envelope(path, engine, i, item, defs)
            if fast:
                self.fast_envelopes.setdefault(engine, []).append(fast)

    def _load_kind(self, path: Path, kind: str, fields: Any) -> None:
        if not isinstance(fields, dict):
            self.problem(path, f"kind {kind!r}", "must be a table of field = \"type\"")
            return
        target = self.kinds.setdefault(kind, {})
        for name, typ in fields.items():
            if typ not in FIELD_TYPES:
                self.problem(path, f"kind {kind!r}", f"field {name!r} has unknown type {typ!r} "
                             f"(expected one of {sorted(FIELD_TYPES)})")
                continue
            if name in COMMON_FIELDS:
                self.problem(path, f"kind {kind!r}", f"field {name!r} is a common column")
                continue
            if target.get(name, typ) != typ:
                self.problem(path, f"kind {kind!r}", f"field {name!r} is declared {target[name]!r} elsewhere; "
                             f"a field has one type across all grammars")
                continue
            target[name] = typ

    def _compile(self, path: Path, where: str, source: Any, defs: Mapping[str, str]) -> regex.Pattern[str] | None:
        if not isinstance(source, str) or not source.strip():
            self.problem(path, where, "missing `regex`")
            return None
        expanded = source
        for _ in range(8):  # defs may use other defs
            new = regex.sub(r"\{\{(\w+)\}\}", lambda m: defs.get(m[1], m[0]), expanded)
            if new == expanded:
                break
            expanded = new
        unknown = regex.findall(r"\{\{(\w+)\}\}", expanded)
        if unknown:
            self.problem(path, where, f"unknown definition(s) {sorted(set(unknown))} in regex")
            return None
        try:
            return regex.compile(expanded, REGEX_FLAGS)
        except regex.error as exc:
            self.problem(path, where, f"regex does not compile: {exc}")
            return None

    def _samples(self, path: Path, where: str, items: Any) -> tuple[Sample, ...]:
        samples = []
        for i, item in enumerate(items or []):
            if not isinstance(item, dict) or not isinstance(item.get("line"), str):
                self.problem(path, f"{where}, sample {i + 1}", "a sample needs `line = '...'`")
                continue
            samples.append(Sample(line=item["line"], expect=dict(item.get("expect", {})), index=i + 1))
        if not samples:
            self.problem(path, where, "has no sample line; add a real line it matches as [[...sample]]")
        return tuple(samples)

    def _load_wrapper(self, path: Path, i: int, item: dict[str, Any], defs: Mapping[str, str]) -> Wrapper | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'wrapper "{name}"'
        compiled = self._compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        if compiled is None:
            return None
        return Wrapper(name=name, source=item["regex"], regex=compiled, samples=samples, file=path)

    def _load_envelope(self, path: Path, engine: str, i: int, item: dict[str, Any],
                       defs: Mapping[str, str]) -> Envelope | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'envelope "{name}"'
        compiled = self._compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        if compiled is None:
            return None
        if "body" not in compiled.groupindex:
            self.problem(path, where, "an envelope regex needs a (?P<body>...) group")
            return None
        return Envelope(name=name, engine=engine, source=item["regex"], regex=compiled, samples=samples,
                        file=path, fallback=bool(item.get("fallback", False)),
                        distinctive=bool(item.get("distinctive", False)),
                        untyped=bool(item.get("untyped", False)))

    def _load_fast_envelope(self, path: Path, engine: str, i: int, item: dict[str, Any],
                            defs: Mapping[str, str]) -> FastEnvelope | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'fast_envelope "{name}"'
        compiled = self._compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        envelope = item.get("envelope")
        if not isinstance(envelope, str):
            self.problem(path, where, "missing `envelope` (the name of the envelope it reads the lines of)")
            return None
        exclude = item.get("exclude", [])
        exclude = [exclude] if isinstance(exclude, str) else list(exclude)
        expanded = []
        for j, pattern in enumerate(exclude):
            compiled_ex = self._compile(path, f"{where}, exclude {j + 1}", pattern, defs)
            if compiled_ex is not None:
                expanded.append(compiled_ex.pattern)
        if compiled is None or len(expanded) != len(exclude):
            return None
        unknown = set(compiled.groupindex) - {"ts", "wrapper_ts", "level", "rank", "pid", "wrapper_rank", "wrapper_pid"}
        if unknown:
            self.problem(path, where, f"unknown group(s) {sorted(unknown)}")
            return None
        return FastEnvelope(name=name, engine=engine, envelope=envelope, source=item["regex"], regex=compiled,
                            samples=samples, file=path, strip=bool(item.get("strip", False)),
                            exclude=tuple(expanded))

    def _load_rule(self, path: Path, engine: str, i: int, item: dict[str, Any],
                   defs: Mapping[str, str]) -> Rule | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'rule "{name}"'
        kind = item.get("kind")
        if not isinstance(kind, str):
            self.problem(path, where, "missing `kind`")
            return None
        compiled = self._compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        types = dict(item.get("types", {}))
        for fname, typ in types.items():
            if typ not in FIELD_TYPES:
                self.problem(path, where, f"field {fname!r} has unknown type {typ!r}")
        if compiled is None:
            return None
        derive: dict[str, tuple[str, str]] = {}
        for fname, spec in dict(item.get("derive", {})).items():
            func, _, source = str(spec).partition(":")
            if func not in DERIVE_FUNCTIONS or source not in compiled.groupindex:
                self.problem(path, where, f"derive {fname} = {spec!r}: expected '<function>:<group>' with a "
                             f"function in {sorted(DERIVE_FUNCTIONS)} and a named group of the regex")
                continue
            derive[fname] = (func, source)
        anchors = item.get("anchor", ())
        anchors = (anchors,) if isinstance(anchors, str) else tuple(str(a) for a in anchors)
        envs = item.get("envelopes")
        levels = item.get("levels")
        return Rule(
            name=name, engine=engine, kind=kind, source=item["regex"], regex=compiled, samples=samples,
            file=path, anchors=anchors,
            envelopes=frozenset(envs) if envs is not None else None,
            levels=frozenset(levels) if levels is not None else None,
            fallback=bool(item.get("fallback", False)),
            constants=dict(item.get("set", {})), types=types, derive=derive,
        )

    def finish(self, paths: tuple[Path, ...]) -> Grammar:
        engines: dict[str, EngineGrammar] = {}
        for engine in sorted(self.engine_files):
            envelopes = self.envelopes.get(engine, [])
            rules = self.rules.get(engine, [])
            self._check_rule_fields(rules)
            self._check_unique(engine, envelopes, rules)
            envelope_names = {e.name for e in envelopes}
            for rule in rules:
                if rule.envelopes and not rule.envelopes <= envelope_names:
                    self.problem(rule.file, f'rule "{rule.name}"',
                                 f"names unknown envelope(s) {sorted(rule.envelopes - envelope_names)}")
            ordered_env = [e for e in envelopes if not e.fallback] + [e for e in envelopes if e.fallback]
            fast = self.fast_envelopes.get(engine, [])
            for item in fast:
                if item.envelope not in envelope_names:
                    self.problem(item.file, f'fast_envelope "{item.name}"',
                                 f"names unknown envelope {item.envelope!r}")
            ordered_rules = [r for r in rules if not r.fallback] + [r for r in rules if r.fallback]
            engines[engine] = EngineGrammar(
                name=engine, title=self.titles.get(engine, engine), files=tuple(self.engine_files[engine]),
                envelopes=tuple(ordered_env), rules=tuple(ordered_rules),
                markers=tuple(dict.fromkeys(self.markers.get(engine, []))),
                fast_envelopes=tuple(fast),
            )
        if self.problems:
            raise PatternError("\n".join(self.problems))
        return Grammar(kinds=self.kinds, wrappers=tuple(self.wrappers), engines=engines, files=paths)

    def _check_rule_fields(self, rules: list[Rule]) -> None:
        for rule in rules:
            where = f'rule "{rule.name}"'
            if rule.kind not in self.kinds:
                self.problem(rule.file, where, f"kind {rule.kind!r} is not declared in kinds.toml "
                             "(or in a [kinds.NAME] table of this file)")
                continue
            schema = self.kinds[rule.kind]
            for name, template in rule.templates.items():
                missing = [f for f in _PLACEHOLDER.findall(template) if f not in rule.regex.groupindex]
                if missing:
                    self.problem(rule.file, where, f"set {name} = {template!r} names {missing}, "
                                 "which are not named groups of the regex")
            for fname in rule.field_names():
                if fname not in schema and fname not in rule.types:
                    self.problem(rule.file, where, f"field {fname!r} is not a field of kind {rule.kind!r}; "
                                 f"declare it under [kinds.{rule.kind}] or in the rule's `types`")

    def _check_unique(self, engine: str, envelopes: list[Envelope], rules: list[Rule]) -> None:
        for label, names in (("envelope", [e.name for e in envelopes]), ("rule", [r.name for r in rules])):
            seen: set[str] = set()
            for name in names:
                if name in seen:
                    self.problem(self.engine_files[engine][0], f'{label} "{name}"',
                                 f"{label} name is used twice in engine {engine!r}")
                seen.add(name)
