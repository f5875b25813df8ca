"""Read grammar files (TOML) into a `Grammar`, collecting every problem before failing.

Unknown keys are errors at every level (a misspelt `fallbak = true` must not pass silently), and
every regex is compiled here, with `{{NAME}}` replaced by a `[defs]` entry (defs of files without
`engine = ...` are visible in every later file).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import regex

from logparse.errors import PatternError
from logparse.grammar.model import (
    ADDED_COLUMNS,
    COMMON_FIELDS,
    DERIVE_FUNCTIONS,
    FIELD_TYPES,
    REGEX_FLAGS,
    STAMP_GROUPS,
    TOKEN_GROUPS,
    AnyRule,
    ColumnDoc,
    Container,
    Derived,
    EngineGrammar,
    Envelope,
    FieldType,
    Grammar,
    Rule,
    Sample,
    Stamp,
    StatsKey,
    StatsRule,
    Token,
    is_field_type,
)

PATTERNS_ENV = "LOGPARSE_PATTERNS"
FILE_KEYS = frozenset(
    {
        "engine",
        "title",
        "common",
        "defs",
        "detect",
        "kinds",
        "rule",
        "token",
        "stamp",
        "container",
        "levels",
        "months",
        "untyped_levels",
        "description",
        "source",
    }
)
RULE_KEYS = frozenset(
    {
        "name",
        "kind",
        "anchor",
        "unless",
        "find",
        "regex",
        "levels",
        "fallback",
        "set",
        "types",
        "derive",
        "source",
        "description",
        "sample",
    }
)
STATS_KEYS = frozenset(
    {
        "name",
        "kind",
        "title",
        "first",
        "require",
        "unless",
        "keys",
        "key",
        "levels",
        "set",
        "types",
        "source",
        "description",
        "sample",
    }
)
EXTENSION_KEYS = frozenset({"extends", "keys", "key", "types", "source", "description", "sample"})
STATS_KEY_KEYS = frozenset({"field", "unit", "value"})
STATS_PATTERN_KEYS = STATS_KEY_KEYS | {"pattern"}
TOKEN_KEYS = frozenset({"name", "regex", "partial", "source", "description", "sample"})
STAMP_KEYS = frozenset({"name", "regex", "source", "description", "sample"})
CONTAINER_KEYS = frozenset({"message", "time", "level", "pid", "rank", "sample"})
DETECT_KEYS = frozenset({"markers", "signatures"})
SAMPLE_KEYS = frozenset({"line", "expect", "source"})
FIELD_SPEC_KEYS = frozenset({"type", "unit", "description", "from"})
COMMON_DOC_KEYS = frozenset({"unit", "description"})
KIND_DESCRIPTION = "description"  # the one key of a [kinds.NAME] table that is not a field
# Every table the loader reads and the keys it accepts there: the JSON Schema
# (patterns/grammar.schema.json) must allow exactly these (tests/grammar/test_schema.py).
ALLOWED_KEYS: Mapping[str, frozenset[str]] = {
    "file": FILE_KEYS,
    "detect": DETECT_KEYS,
    "container": CONTAINER_KEYS,
    "stamp": STAMP_KEYS,
    "token": TOKEN_KEYS,
    "rule": RULE_KEYS,
    "stats_rule": STATS_KEYS,
    "extension": EXTENSION_KEYS,
    "stats_key": STATS_KEY_KEYS,
    "stats_key_pattern": STATS_PATTERN_KEYS,
    "sample": SAMPLE_KEYS,
    "kind_field": FIELD_SPEC_KEYS,
    "common_column": COMMON_DOC_KEYS,
}
_DEF_RE = regex.compile(r"\{\{(\w+)\}\}")


def patterns_dir() -> Path:
    """The folder of the built-in grammar files (inside the installed package)."""
    return Path(str(resources.files("logparse") / "patterns"))


def builtin_files() -> list[Path]:
    """The built-in grammar files: kinds, envelope, then engines in name order."""
    folder = patterns_dir()
    names = sorted(p.name for p in folder.glob("*.toml"))
    head = [n for n in ("kinds.toml", "envelope.toml") if n in names]
    return [folder / n for n in head + [n for n in names if n not in head]]


def user_pattern_files(explicit: Sequence[str | Path] = ()) -> list[Path]:
    """User grammar files from `--patterns` and the `LOGPARSE_PATTERNS` path list."""
    env = [p for p in os.environ.get(PATTERNS_ENV, "").split(os.pathsep) if p.strip()]
    return [Path(p) for p in (*env, *explicit)]


@functools.cache
def _cached_grammar(files: tuple[Path, ...], stamps: tuple[float, ...]) -> Grammar:
    return build_grammar(files)


def load_grammar(extra: Sequence[str | Path] = ()) -> Grammar:
    """The built-in grammars plus user files (`extra`, `LOGPARSE_PATTERNS`); cached per file set."""
    files = tuple(builtin_files()) + tuple(p.resolve() for p in user_pattern_files(extra))
    return _cached_grammar(files, tuple(_mtime(p) for p in files))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def build_grammar(files: Iterable[Path]) -> Grammar:
    """Read and compile grammar files; raise `PatternError` listing every problem found."""
    loader = _Loader()
    paths = tuple(files)
    for path in paths:
        loader.load_file(path)
    return loader.finish(paths)


@dataclasses.dataclass(frozen=True)
class Extension:
    """Keys (and samples) a later file adds to a stats rule (`extends = "decode_batch"`)."""

    target: str
    file: Path
    where: str
    keys: Mapping[str, StatsKey]
    key_patterns: tuple[StatsKey, ...]
    types: Mapping[str, FieldType]
    type_docs: Mapping[str, Mapping[str, Any]]
    samples: tuple[Sample, ...]


class _Loader:
    """Accumulates declarations from several files, collecting every problem before failing."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.kinds: dict[str, dict[str, FieldType]] = {}
        self.kind_docs: dict[str, str] = {}
        self.column_docs: dict[str, dict[str, ColumnDoc]] = {}
        self.common_docs: dict[str, ColumnDoc] = {}
        # kind -> name -> (file, where, sources): checked once every file's kinds are known
        self.derived: dict[str, dict[str, tuple[Path, str, tuple[tuple[str, float], ...]]]] = {}
        self.tokens: list[Token] = []
        self.stamps: list[Stamp] = []
        self.container: dict[str, list[str]] = {k: [] for k in ("message", "time", "level", "pid", "rank")}
        self.container_samples: list[Sample] = []
        self.levels: dict[str, str] = {}
        self.months: dict[str, int] = {}
        self.rules: dict[str, list[AnyRule]] = {}
        self.titles: dict[str, str] = {}
        self.markers: dict[str, list[str]] = {}
        self.signatures: dict[str, list[regex.Pattern[str]]] = {}
        self.untyped: dict[str, set[str]] = {}
        self.engine_files: dict[str, list[Path]] = {}
        self.defs: dict[str, str] = {}
        self.extensions: dict[str, list[Extension]] = {}

    def problem(self, path: Path, where: str, message: str) -> None:
        self.problems.append(f"{path}: {where}\n  error: {message}")

    def unknown_keys(self, path: Path, where: str, item: Mapping[str, Any], allowed: frozenset[str]) -> None:
        for key in sorted(set(item) - allowed):
            self.problem(path, where, f"unknown key {key!r} (expected one of {sorted(allowed)})")

    # -- files ---------------------------------------------------------------------------------
    def load_file(self, path: Path) -> None:
        data = self._read(path)
        if data is None:
            return
        self.unknown_keys(path, "file", data, FILE_KEYS)
        defs = {**self.defs, **{str(k): str(v) for k, v in data.get("defs", {}).items()}}
        engine = data.get("engine")
        if engine is None:
            self.defs.update(defs)  # shared defs are visible to every later file
        self._load_common(path, data.get("common", {}))
        for kind, fields in data.get("kinds", {}).items():
            self._load_kind(path, kind, fields)
        self._load_envelope_parts(path, data, defs)
        if engine is None:
            if data.get("rule") or data.get("untyped_levels"):
                self.problem(path, "file", 'rules need `engine = "..."` at the top')
            return
        self._load_engine(path, str(engine), data, defs)

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            return tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.problem(path, "file", "no such grammar file")
        except (OSError, UnicodeDecodeError) as exc:
            self.problem(path, "file", f"cannot read: {exc}")
        except tomllib.TOMLDecodeError as exc:
            self.problem(path, "file", f"not valid TOML: {exc}")
        return None

    def _load_envelope_parts(self, path: Path, data: Mapping[str, Any], defs: Mapping[str, str]) -> None:
        for i, item in enumerate(data.get("stamp", [])):
            stamp = self._load_stamp(path, i, item, defs)
            if stamp:
                self.stamps.append(stamp)
        for i, item in enumerate(data.get("token", [])):
            token = self._load_token(path, i, item, defs)
            if token:
                self.tokens.append(token)
        container = data.get("container")
        if container is not None:
            self.unknown_keys(path, "container", container, CONTAINER_KEYS)
            for key in self.container:
                self.container[key].extend(str(k) for k in container.get(key, []))
            self.container_samples.extend(
                self._samples(path, "container", container.get("sample"), need=False)
            )
        for printed, level in data.get("levels", {}).items():
            self.levels[str(printed).upper()] = str(level)
        for name, number in data.get("months", {}).items():
            if not isinstance(number, int) or not 1 <= number <= 12:
                self.problem(path, f"month {name!r}", "a month is a number from 1 to 12")
                continue
            self.months[str(name).lower()] = number

    def _load_engine(self, path: Path, engine: str, data: Mapping[str, Any], defs: Mapping[str, str]) -> None:
        self.engine_files.setdefault(engine, []).append(path)
        if "title" in data:
            self.titles[engine] = str(data["title"])
        detect = data.get("detect", {})
        self.unknown_keys(path, "detect", detect, DETECT_KEYS)
        self.markers.setdefault(engine, []).extend(str(m) for m in detect.get("markers", []))
        for j, source in enumerate(detect.get("signatures", [])):
            compiled = self.compile(path, f"detect signature {j + 1}", source, defs)
            if compiled is not None:
                self.signatures.setdefault(engine, []).append(compiled[1])
        self.untyped.setdefault(engine, set()).update(str(x).upper() for x in data.get("untyped_levels", []))
        for i, item in enumerate(data.get("rule", [])):
            if "extends" in item:
                extension = self._load_extension(path, i, item, defs)
                if extension:
                    self.extensions.setdefault(engine, []).append(extension)
                continue
            rule = self._load_any_rule(path, engine, i, item, defs)
            if rule:
                self.rules.setdefault(engine, []).append(rule)

    def _load_common(self, path: Path, docs: Any) -> None:
        """`[common.NAME]`: unit and description of a column every table has (types are fixed)."""
        if not isinstance(docs, dict):
            self.problem(path, "common", "must be a table of column = { unit, description }")
            return
        known = {**COMMON_FIELDS, **ADDED_COLUMNS}
        for name, spec in docs.items():
            where = f"common column {name!r}"
            if name not in known:
                self.problem(path, where, f"not a common column (common columns: {', '.join(known)})")
                continue
            if not isinstance(spec, dict):
                self.problem(path, where, "expected a table { unit = ..., description = ... }")
                continue
            self.unknown_keys(path, where, spec, COMMON_DOC_KEYS)
            self._document(path, where, self.common_docs, name, spec)

    def _document(
        self, path: Path, where: str, docs: dict[str, ColumnDoc], name: str, spec: Mapping[str, Any]
    ) -> None:
        """Record a column's unit and description: one unit per column, descriptions of several
        files (each says its engine) joined in file order."""
        unit, text = str(spec.get("unit", "")).strip(), str(spec.get("description", "")).strip()
        old = docs.get(name)
        if old is None:
            docs[name] = ColumnDoc(unit=unit, description=text, file=path)
            return
        if unit and old.unit and unit != old.unit:
            self.problem(
                path, where, f"unit {unit!r}, but {old.file} gives {old.unit!r}; a column has one unit"
            )
            return
        joined = old.description if text in old.description else f"{old.description} {text}".strip()
        docs[name] = ColumnDoc(unit=old.unit or unit, description=joined, file=old.file)

    def _field_spec(self, path: Path, where: str, spec: Any) -> tuple[Any, dict[str, Any] | None]:
        """A field's type and, for the table form `{ type, unit, description }`, the table."""
        if isinstance(spec, dict):
            self.unknown_keys(path, where, spec, FIELD_SPEC_KEYS)
            return spec.get("type"), spec
        return spec, None

    def _load_kind(self, path: Path, kind: str, fields: Any) -> None:
        if not isinstance(fields, dict):
            self.problem(path, f"kind {kind!r}", 'must be a table of field = "type"')
            return
        target = self.kinds.setdefault(kind, {})
        docs = self.column_docs.setdefault(kind, {})
        for name, spec in fields.items():
            if name == KIND_DESCRIPTION:
                if not isinstance(spec, str):
                    self.problem(path, f"kind {kind!r}", "`description` is the kind's one-line description")
                elif spec.strip() and not self.kind_docs.get(kind):
                    self.kind_docs[kind] = spec.strip()
                continue
            where = f"kind {kind!r}, field {name!r}"
            typ, table = self._field_spec(path, where, spec)
            if typ not in FIELD_TYPES:
                self.problem(
                    path,
                    f"kind {kind!r}",
                    f"field {name!r} has unknown type {typ!r} (expected one of {sorted(FIELD_TYPES)})",
                )
                continue
            if name in COMMON_FIELDS or name in ADDED_COLUMNS:
                self.problem(path, f"kind {kind!r}", f"field {name!r} is a common column")
                continue
            if table is not None and "from" in table:
                self._load_derived(path, where, kind, name, typ, table["from"])
            elif target.get(name, typ) != typ:
                self.problem(
                    path,
                    f"kind {kind!r}",
                    f"field {name!r} is declared {target[name]!r} elsewhere; "
                    f"a field has one type across all grammars",
                )
                continue
            else:
                target[name] = typ
            self._document(path, where, docs, name, table or {})

    def _load_derived(self, path: Path, where: str, kind: str, name: str, typ: str, sources: Any) -> None:
        """`from = { column = factor, ... }`: a column ingest computes from printed ones."""
        if typ != "float":
            self.problem(path, where, f"a derived column is a float, not {typ!r}")
            return
        if not isinstance(sources, dict) or not sources:
            self.problem(path, where, "`from` is a table { source_column = factor, ... }")
            return
        pairs = []
        for source, factor in sources.items():
            if isinstance(factor, bool) or not isinstance(factor, int | float):
                self.problem(path, where, f"factor of {source!r} must be a number, not {factor!r}")
                return
            pairs.append((str(source), float(factor)))
        self.derived.setdefault(kind, {})[name] = (path, where, tuple(pairs))

    # -- regexes and samples -------------------------------------------------------------------
    def compile(
        self, path: Path, where: str, source: Any, defs: Mapping[str, str], *, allow_empty: bool = False
    ) -> tuple[str, regex.Pattern[str]] | None:
        if not isinstance(source, str) or (not source.strip() and not allow_empty):
            self.problem(path, where, "missing `regex`")
            return None
        expanded = source
        for _ in range(8):  # defs may use other defs
            new = _DEF_RE.sub(lambda m: defs.get(m[1], m[0]), expanded)
            if new == expanded:
                break
            expanded = new
        unknown = _DEF_RE.findall(expanded)
        if unknown:
            self.problem(path, where, f"unknown definition(s) {sorted(set(unknown))} in regex")
            return None
        try:
            return expanded, regex.compile(expanded, REGEX_FLAGS)
        except regex.error as exc:
            self.problem(path, where, f"regex does not compile: {exc}")
            return None

    def _samples(self, path: Path, where: str, items: Any, *, need: bool = True) -> tuple[Sample, ...]:
        samples = []
        for i, item in enumerate(items or []):
            if not isinstance(item, dict) or not isinstance(item.get("line"), str):
                self.problem(path, f"{where}, sample {i + 1}", "a sample needs `line = '...'`")
                continue
            self.unknown_keys(path, f"{where}, sample {i + 1}", item, SAMPLE_KEYS)
            samples.append(
                Sample(
                    line=item["line"],
                    expect=dict(item.get("expect", {})),
                    index=i + 1,
                    source=str(item.get("source", "")),
                )
            )
        if need and not samples:
            self.problem(path, where, "has no sample line; add a real line it matches as [[...sample]]")
        return tuple(samples)

    def _load_stamp(self, path: Path, i: int, item: dict[str, Any], defs: Mapping[str, str]) -> Stamp | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'stamp "{name}"'
        self.unknown_keys(path, where, item, STAMP_KEYS)
        compiled = self.compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        if compiled is None:
            return None
        bad = sorted(set(compiled[1].groupindex) - STAMP_GROUPS)
        if bad:
            self.problem(path, where, f"unknown group(s) {bad} (a stamp captures {sorted(STAMP_GROUPS)})")
            return None
        return Stamp(
            name=name,
            pattern=compiled[0],
            regex=compiled[1],
            samples=samples,
            file=path,
            source=str(item.get("source", "")),
        )

    def _load_token(self, path: Path, i: int, item: dict[str, Any], defs: Mapping[str, str]) -> Token | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'token "{name}"'
        self.unknown_keys(path, where, item, TOKEN_KEYS)
        compiled = self.compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        if compiled is None:
            return None
        partial = item.get("partial")
        groups = set(compiled[1].groupindex)
        bad = sorted(g for g in groups - TOKEN_GROUPS if not g.startswith("_"))
        if bad:
            self.problem(
                path,
                where,
                f"unknown group(s) {bad} (a token captures {sorted(TOKEN_GROUPS)}; "
                "name a group `_x` to capture it without keeping it)",
            )
            return None
        if partial is not None and partial not in groups:
            self.problem(path, where, f"partial = {partial!r} is not a group of the regex")
            return None
        if compiled[1].match("") is not None:
            self.problem(path, where, "the regex matches the empty string: a token must take something off")
            return None
        return Token(
            name=name,
            pattern=compiled[0],
            regex=compiled[1],
            samples=samples,
            file=path,
            source=str(item.get("source", "")),
            partial_group=partial,
        )

    # -- rules ---------------------------------------------------------------------------------
    def _load_any_rule(
        self, path: Path, engine: str, i: int, item: dict[str, Any], defs: Mapping[str, str]
    ) -> AnyRule | None:
        if "keys" in item or "title" in item:
            return self._load_stats(path, engine, i, item, defs)
        return self._load_rule(path, engine, i, item, defs)

    def _common(self, path: Path, where: str, item: Mapping[str, Any]) -> dict[str, Any] | None:
        kind = item.get("kind")
        if not isinstance(kind, str):
            self.problem(path, where, "missing `kind`")
            return None
        types, docs = self._rule_types(path, where, item.get("types", {}))
        for fname, table in docs.items():
            self._document(path, where, self.column_docs.setdefault(kind, {}), fname, table)
        levels = item.get("levels")
        return {
            "kind": kind,
            "types": types,
            "constants": dict(item.get("set", {})),
            "levels": frozenset(str(x).upper() for x in levels) if levels is not None else None,
            "source": str(item.get("source", "")),
            "description": str(item.get("description", "")),
        }

    def _rule_types(
        self, path: Path, where: str, types: Any
    ) -> tuple[dict[str, FieldType], dict[str, Mapping[str, Any]]]:
        """A rule's `types` (`field = "type"` or `field = { type, unit, description }`): the types,
        and the tables of the fields documented there."""
        out: dict[str, FieldType] = {}
        docs: dict[str, Mapping[str, Any]] = {}
        for fname, spec in dict(types).items():
            typ, table = self._field_spec(path, f"{where}, types {fname!r}", spec)
            if not is_field_type(typ):
                self.problem(path, where, f"field {fname!r} has unknown type {typ!r}")
                continue
            if table is not None and "from" in table:
                self.problem(path, where, f"field {fname!r}: a derived column is declared under [kinds.NAME]")
                continue
            out[str(fname)] = typ
            docs[str(fname)] = table or {}
        return out, docs

    def _load_rule(
        self, path: Path, engine: str, i: int, item: dict[str, Any], defs: Mapping[str, str]
    ) -> Rule | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'rule "{name}"'
        self.unknown_keys(path, where, item, RULE_KEYS)
        common = self._common(path, where, item)
        compiled = self.compile(path, where, item.get("regex"), defs)
        samples = self._samples(path, where, item.get("sample"))
        if compiled is None or common is None:
            return None
        derive: dict[str, tuple[str, str]] = {}
        for fname, spec in dict(item.get("derive", {})).items():
            func, _, source = str(spec).partition(":")
            if func not in DERIVE_FUNCTIONS or source not in compiled[1].groupindex:
                self.problem(
                    path,
                    where,
                    f"derive {fname} = {spec!r}: expected '<function>:<group>' with a "
                    f"function in {sorted(DERIVE_FUNCTIONS)} and a named group of the regex",
                )
                continue
            derive[fname] = (func, source)
        anchors = item.get("anchor", ())
        anchors = (anchors,) if isinstance(anchors, str) else tuple(str(a) for a in anchors)
        finds = []
        for j, source in enumerate(_strings(item.get("find", ()))):
            found = self.compile(path, f"{where}, find {j + 1}", source, defs)
            if found is not None:
                finds.append(found[1])
        return Rule(
            find=tuple(finds),
            name=name,
            engine=engine,
            pattern=compiled[0],
            regex=compiled[1],
            samples=samples,
            file=path,
            anchors=anchors,
            unless=_strings(item.get("unless", ())),
            fallback=bool(item.get("fallback", False)),
            derive=derive,
            **common,
        )

    def _load_stats(
        self, path: Path, engine: str, i: int, item: dict[str, Any], defs: Mapping[str, str]
    ) -> StatsRule | None:
        name = str(item.get("name", f"#{i + 1}"))
        where = f'rule "{name}"'
        self.unknown_keys(path, where, item, STATS_KEYS)
        common = self._common(path, where, item)
        title = self.compile(path, f"{where}, title", item.get("title", ""), defs, allow_empty=True)
        samples = self._samples(path, where, item.get("sample"))
        first = _strings(item.get("first", ()))
        require = _strings(item.get("require", ()))
        if not first:
            self.problem(path, where, "a stats rule needs `first`: the key(s) its pairs begin with")
        keys: dict[str, StatsKey] = {}
        for key, spec in dict(item.get("keys", {})).items():
            entry = self._stats_entry(path, f"{where}, key {key!r}", str(key), spec, defs, pattern=False)
            if entry:
                keys[str(key)] = entry
        patterns = []
        for j, spec in enumerate(item.get("key", [])):
            entry = self._stats_entry(path, f"{where}, key pattern {j + 1}", "", spec, defs, pattern=True)
            if entry:
                patterns.append(entry)
        if title is None or common is None or not first:
            return None
        return StatsRule(
            name=name,
            engine=engine,
            title=title[0],
            title_regex=title[1],
            first=first,
            require=require,
            unless=_strings(item.get("unless", ())),
            keys=keys,
            key_patterns=tuple(patterns),
            samples=samples,
            file=path,
            **common,
        )

    def _load_extension(
        self, path: Path, i: int, item: dict[str, Any], defs: Mapping[str, str]
    ) -> Extension | None:
        """`extends = "<stats rule>"`: more keys (and samples) for a stats rule of an earlier file."""
        target = str(item["extends"])
        where = f'rule {i + 1} (extends "{target}")'
        self.unknown_keys(path, where, item, EXTENSION_KEYS)
        keys: dict[str, StatsKey] = {}
        for key, spec in dict(item.get("keys", {})).items():
            entry = self._stats_entry(path, f"{where}, key {key!r}", str(key), spec, defs, pattern=False)
            if entry:
                keys[str(key)] = entry
        patterns = []
        for j, spec in enumerate(item.get("key", [])):
            entry = self._stats_entry(path, f"{where}, key pattern {j + 1}", "", spec, defs, pattern=True)
            if entry:
                patterns.append(entry)
        types, type_docs = self._rule_types(path, where, item.get("types", {}))
        if not keys and not patterns:
            self.problem(path, where, "an extension adds `keys` or `[[rule.key]]` patterns to the rule")
        samples = self._samples(path, where, item.get("sample"))
        return Extension(
            target=target,
            file=path,
            where=where,
            keys=keys,
            key_patterns=tuple(patterns),
            types=types,
            type_docs=type_docs,
            samples=samples,
        )

    def _extend(self, engine: str, rules: list[AnyRule]) -> list[AnyRule]:
        """The rules with every extension of `engine` merged into the stats rule it names."""
        by_name = {r.name: i for i, r in enumerate(rules)}
        for ext in self.extensions.get(engine, []):
            at = by_name.get(ext.target)
            rule = rules[at] if at is not None else None
            if not isinstance(rule, StatsRule):
                known = sorted(r.name for r in rules if isinstance(r, StatsRule))
                self.problem(
                    ext.file,
                    ext.where,
                    f"{ext.target!r} is not a stats rule of {engine} (stats rules: {', '.join(known)})",
                )
                continue
            clash = sorted(k for k in ext.keys if k in rule.keys)
            if clash:
                self.problem(ext.file, ext.where, f"key(s) {clash} are already in rule {rule.name!r}")
                continue
            docs = self.column_docs.setdefault(rule.kind, {})
            for fname, table in ext.type_docs.items():
                self._document(ext.file, ext.where, docs, fname, table)
            offset = len(rule.samples)
            samples = tuple(
                dataclasses.replace(s, index=offset + s.index, source=s.source or f"extension in {ext.file}")
                for s in ext.samples
            )
            assert at is not None
            rules[at] = dataclasses.replace(
                rule,
                keys={**rule.keys, **ext.keys},
                key_patterns=(*rule.key_patterns, *ext.key_patterns),
                types={**rule.types, **ext.types},
                samples=(*rule.samples, *samples),
            )
        return rules

    def _stats_entry(
        self, path: Path, where: str, key: str, spec: Any, defs: Mapping[str, str], *, pattern: bool
    ) -> StatsKey | None:
        if isinstance(spec, str) and not pattern:
            return StatsKey(key=key, field=spec)
        if not isinstance(spec, dict):
            self.problem(path, where, "expected a field name or a table {field, unit, value}")
            return None
        self.unknown_keys(path, where, spec, STATS_PATTERN_KEYS if pattern else STATS_KEY_KEYS)
        value = key_re = None
        value_source = key_source = ""
        if "value" in spec:
            compiled = self.compile(path, f"{where}, value", spec["value"], defs)
            if compiled is None:
                return None
            value_source, value = compiled
        if pattern:
            compiled = self.compile(path, f"{where}, pattern", spec.get("pattern"), defs)
            if compiled is None:
                return None
            key_source, key_re = compiled
        field = spec.get("field")
        if field is None and value is None:
            self.problem(path, where, "a key needs `field` or `value`")
            return None
        return StatsKey(
            key=key or key_source,
            field=None if field is None else str(field),
            units=_strings(spec.get("unit", ())),
            value=value,
            value_pattern=value_source,
            pattern=key_re,
            key_pattern=key_source,
        )

    # -- the whole grammar ---------------------------------------------------------------------
    def finish(self, paths: tuple[Path, ...]) -> Grammar:
        engines: dict[str, EngineGrammar] = {}
        for engine in sorted(self.engine_files):
            rules = self._extend(engine, list(self.rules.get(engine, [])))
            self._check_rule_fields(rules)
            self._check_unique(engine, rules)
            ordered = [r for r in rules if not r.fallback] + [r for r in rules if r.fallback]
            engines[engine] = EngineGrammar(
                name=engine,
                title=self.titles.get(engine, engine),
                files=tuple(self.engine_files[engine]),
                rules=tuple(ordered),
                markers=tuple(dict.fromkeys(self.markers.get(engine, []))),
                signatures=tuple(self.signatures.get(engine, [])),
                untyped_levels=frozenset(self.untyped.get(engine, set())),
            )
        derived = self._check_derived()
        self._check_unique_names("token", [t.name for t in self.tokens])
        self._check_unique_names("stamp", [s.name for s in self.stamps])
        if self.problems:
            raise PatternError("\n".join(self.problems), list(self.problems))
        container = Container(
            **{k: tuple(dict.fromkeys(v)) for k, v in self.container.items()},
            samples=tuple(self.container_samples),
        )
        envelope = Envelope(
            tokens=tuple(self.tokens),
            stamps=tuple(self.stamps),
            container=container,
            levels=dict(self.levels),
            months=dict(self.months),
        )
        return Grammar(
            kinds=self.kinds,
            envelope=envelope,
            engines=engines,
            files=paths,
            kind_docs=dict(self.kind_docs),
            column_docs={kind: dict(docs) for kind, docs in self.column_docs.items()},
            common_docs=dict(self.common_docs),
            derived=derived,
        )

    def _check_derived(self) -> dict[str, tuple[Derived, ...]]:
        """Derived columns whose sources are numeric fields of their kind and whose names are new."""
        out: dict[str, tuple[Derived, ...]] = {}
        for kind, columns in self.derived.items():
            fields = self.kinds.get(kind, {})
            found = []
            for name, (path, where, sources) in columns.items():
                if name in fields:
                    self.problem(
                        path, where, f"{name!r} is a printed field of {kind!r}; a derived column is new"
                    )
                    continue
                bad = [s for s, _ in sources if fields.get(s) not in ("int", "float")]
                if bad:
                    self.problem(path, where, f"source(s) {bad} are not int or float fields of kind {kind!r}")
                    continue
                found.append(Derived(name=name, sources=sources))
            out[kind] = tuple(found)
        return out

    def _check_rule_fields(self, rules: list[AnyRule]) -> None:
        for rule in rules:
            where = f'rule "{rule.name}"'
            if rule.kind not in self.kinds:
                self.problem(
                    rule.file,
                    where,
                    f"kind {rule.kind!r} is not declared in kinds.toml "
                    "(or in a [kinds.NAME] table of this file)",
                )
                continue
            schema = self.kinds[rule.kind]
            if isinstance(rule, Rule):
                for name, template in rule.templates.items():
                    missing = [
                        f for f in regex.findall(r"\{(\w+)\}", template) if f not in rule.regex.groupindex
                    ]
                    if missing:
                        self.problem(
                            rule.file,
                            where,
                            f"set {name} = {template!r} names {missing}, "
                            "which are not named groups of the regex",
                        )
            for fname in rule.field_names():
                if fname not in schema and fname not in rule.types:
                    self.problem(
                        rule.file,
                        where,
                        f"field {fname!r} is not a field of kind {rule.kind!r}; "
                        f"declare it under [kinds.{rule.kind}] or in the rule's `types`",
                    )

    def _check_unique(self, engine: str, rules: list[AnyRule]) -> None:
        seen: set[str] = set()
        for rule in rules:
            if rule.name in seen:
                self.problem(
                    rule.file, f'rule "{rule.name}"', f"rule name is used twice in engine {engine!r}"
                )
            seen.add(rule.name)

    def _check_unique_names(self, label: str, names: list[str]) -> None:
        seen: set[str] = set()
        for name in names:
            if name in seen:
                self.problem(Path("envelope"), f'{label} "{name}"', f"{label} name is used twice")
            seen.add(name)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value or ())
