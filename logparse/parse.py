"""Turn one line of text into exactly one event (a dict), using a compiled grammar.

The parser is total: whatever the line holds, it returns an event, `unparsed` when no rule
understood it. Only I/O errors, raised elsewhere, stop a parse.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import re

import regex

from logparse.grammar import REGEX_FLAGS, EngineGrammar, FieldType, Grammar, Rule, Wrapper, fast_matcher

# ESC-introduced sequences; caret notation (^[[...m) as pasted from terminals; and the bare
# "[1;36m" that remains when a tool strips only the ESC byte (vLLM's process prefix colour).
ANSI_RE = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\^\[\[[0-9;]*[A-Za-z]"
    r"|\[(?:[01];)?(?:3[0-7]|9[0-7]|0|1|0;0)m",
    re.ASCII,
)
PROCESS_PREFIX_RE = re.compile(
    r"\((?P<rank>[A-Za-z_][^()\n]*?) pid=(?P<pid>[0-9]+)(?:, ip=[0-9a-fA-F.:]+)?\)", re.ASCII
)
# Ray deduplicates repeated lines across a cluster and says so at the end of the line.
RAY_REPEAT_RE = re.compile(r"\s*\[repeated [0-9]+x across cluster\]\s*$", re.ASCII)
MAX_WRAPPERS = 12
# Lines longer than this are only matched on their first part: no engine line is this long, and
# with every regex checked against 100 KB pathological lines (logparse.check) it bounds the time
# spent on hostile input. The event keeps the whole raw line.
MATCH_LIMIT = 256 * 1024
UNPARSED = "unparsed"
_TRUE = {"true", "yes", "1", "on", "enabled"}
_FALSE = {"false", "no", "0", "off", "disabled", "none"}
_NUMBER_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|nan|inf", re.ASCII)


def strip_ansi(text: str) -> str:
    """Remove terminal colour and control sequences."""
    if "\x1b" not in text and "m" not in text:
        return text
    return ANSI_RE.sub("", text)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def int64(value: int) -> int | None:
    """`value` if an Int64 column can hold it, else None (a 30-digit "count" is not a count)."""
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def convert(value: str, typ: FieldType) -> Any:
    """Convert a captured string to its field type; None when it cannot be read as that type."""
    text = value.strip()
    try:
        if typ == "str":
            return value
        if typ == "int":
            cleaned = text.replace(",", "").replace("_", "")
            return int64(int(cleaned) if "." not in cleaned else int(float(cleaned)))
        if typ == "float":
            return float(text.replace(",", "").replace("_", "").rstrip("%"))
        if typ == "bool":
            low = text.lower()
            return True if low in _TRUE else False if low in _FALSE else None
        if typ == "floats":
            return [float(x) for x in _NUMBER_RE.findall(text)]
    except (ValueError, OverflowError):
        return None
    return None


_DURATION_RE = re.compile(r"(?:([0-9]+):)?([0-9]+):([0-9]+(?:\.[0-9]+)?)", re.ASCII)


def derive(function: str, text: str) -> Any:
    """Apply a `derive` function of a rule to a captured string (None if it cannot)."""
    if function == "count":
        return len(_NUMBER_RE.findall(text))
    if function == "duration":
        m = _DURATION_RE.fullmatch(text.strip())
        if m is None:
            return None
        hours = int(m[1]) if m[1] else 0
        return hours * 3600 + int(m[2]) * 60 + float(m[3])
    return None


_TEMPLATE_FIELD = re.compile(r"\{(\w+)\}")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@dataclass(frozen=True)
class LineFrame:
    """What the wrapper and envelope layers found around a body."""

    envelope: str
    body: str
    untyped: bool
    ts: str | None
    level: str | None
    rank: str | None
    pid: int | None


class LineParser:
    """Parses lines of one engine's log. Build once, call `parse` per line."""

    def __init__(self, grammar: Grammar, engine: str) -> None:
        self.grammar = grammar
        self.engine_name = engine
        self.engine: EngineGrammar = grammar.engines[engine]
        self._types: dict[str, dict[str, FieldType]] = {
            rule.name: {f: grammar.field_type(rule, f) for f in rule.field_names()} for rule in self.engine.rules
        }
        self._regular = [r for r in self.engine.rules if not r.fallback]
        self._fallback = [r for r in self.engine.rules if r.fallback]
        # First anchor -> positions of the regular rules that need it, so a line only tries the
        # rules whose anchor it contains (file order is kept).
        by_anchor: dict[str, list[int]] = {}
        self._unanchored: list[int] = []
        for i, rule in enumerate(self._regular):
            if rule.anchors:
                by_anchor.setdefault(rule.anchors[0], []).append(i)
            else:
                self._unanchored.append(i)
        self._anchor_index = [(anchor, tuple(ids)) for anchor, ids in by_anchor.items()]

    # -- layers ------------------------------------------------------------------------------
    def envelope(self, line: str) -> LineFrame:
        """Strip colour and wrappers, then match the engine's envelopes (first match wins)."""
        text = strip_ansi(line[:MATCH_LIMIT])
        text, wrapper_ts, rank, pid = self._peel(text)
        if "\r" in text:
            # tqdm redraws: the last non-blank segment is what a terminal would show.
            segments = [s for s in text.split("\r") if s.strip()]
            text = segments[-1] if segments else ""
            text, wts2, rank2, pid2 = self._peel(text)
            wrapper_ts = wrapper_ts or wts2
            if rank2 is not None:
                rank, pid = rank2, pid2
        if "across cluster]" in text:
            text = RAY_REPEAT_RE.sub("", text)
        for env in self.engine.envelopes:
            m = env.matcher.match(text)
            if m is None:
                continue
            groups = m.groupdict()
            pre = groups.get("pre")
            if pre:
                found = list(PROCESS_PREFIX_RE.finditer(pre))
                if found:
                    rank, pid = found[-1]["rank"], int64(int(found[-1]["pid"]))
            if groups.get("rank") is not None:
                rank = groups["rank"]
            if groups.get("pid") is not None:
                pid = int64(int(groups["pid"]))
            ts = groups.get("ts") or groups.get("wrapper_ts") or wrapper_ts
            return LineFrame(env.name, groups["body"] or "", env.untyped, ts, groups.get("level"), rank, pid)
        return LineFrame("", text, False, wrapper_ts, None, rank, pid)

    def _peel(self, text: str) -> tuple[str, str | None, str | None, int | None]:
        peeled = peel(self.grammar.wrappers, text)
        return peeled.rest, peeled.wrapper_ts, peeled.rank, peeled.pid

    def match_rules(self, env: LineFrame) -> tuple[Rule, dict[str, Any]] | None:
        """The first rule whose regex matches the whole body, with its converted fields."""
        if env.untyped:
            return None
        body = env.body
        positions = [i for anchor, ids in self._anchor_index if anchor in body for i in ids]
        if self._unanchored:
            positions.extend(self._unanchored)
        if len(positions) > 1:
            positions.sort()
        regular = self._regular
        for i in positions:
            fields = self.try_rule(regular[i], env)
            if fields is not None:
                return regular[i], fields
        for rule in self._fallback:
            fields = self.try_rule(rule, env)
            if fields is not None:
                return rule, fields
        return None

    def try_rule(self, rule: Rule, env: LineFrame) -> dict[str, Any] | None:
        """Fields of `rule` on this body, or None when the rule does not apply."""
        if rule.envelopes is not None and env.envelope not in rule.envelopes:
            return None
        if rule.levels is not None and (env.level or "") not in rule.levels:
            return None
        body = env.body
        for anchor in rule.anchors:
            if anchor not in body:
                return None
        m = rule.matcher.fullmatch(body)
        if m is None:
            return None
        types = self._types[rule.name]
        fields: dict[str, Any] = dict(rule.constants)
        for name, value in m.groupdict().items():
            if value is None or name not in types:
                continue
            fields[name] = convert(value, types[name])
        for name, template in rule.templates.items():
            fields[name] = _TEMPLATE_FIELD.sub(lambda t: _text(fields.get(t[1])), template).rstrip(": ")
        for name, (function, source) in rule.derive.items():
            captured = m.group(source)
            if captured is not None:
                value = derive(function, captured)
                fields[name] = None if value is None else convert(str(value), types[name])
        return fields

    # -- whole line --------------------------------------------------------------------------
    def parse(self, line_no: int, line: str) -> dict[str, Any]:
        """Exactly one event for this line: a typed kind, or `unparsed` with the raw text."""
        env = self.envelope(line)
        found = self.match_rules(env)
        event: dict[str, Any] = {
            "kind": UNPARSED, "line_no": line_no, "ts": env.ts, "engine": self.engine_name,
            "rank": env.rank, "pid": env.pid, "level": env.level, "rule": None,
        }
        if found is None:
            event["raw"] = line
            return event
        rule, fields = found
        event["kind"] = rule.kind
        event["rule"] = rule.name
        event.update(fields)
        return event

    def iter_events(self, lines: Iterable[tuple[int, str]]) -> Iterator[dict[str, Any]]:
        """One event per (line_no, text) pair, in order."""
        parse = self.parse
        for line_no, text in lines:
            yield parse(line_no, text)


@dataclass(frozen=True)
class Peeled:
    """A line with its wrappers removed, and what the wrappers said."""

    rest: str
    wrapper_ts: str | None
    rank: str | None
    pid: int | None
    used: tuple[str, ...]


class WrapperSet:
    """All wrappers as one alternation, so peeling costs one regex call per layer.

    Branches keep file order, so the first wrapper that matches still wins. Each branch's groups
    are renamed `_w<i>_<name>`; the branch group `_w<i>` tells which wrapper matched.
    """

    def __init__(self, wrappers: Sequence[Wrapper]) -> None:
        self.wrappers = tuple(wrappers)
        branches = []
        for i, wrapper in enumerate(self.wrappers):
            source = _GROUP_NAME.sub(lambda m, i=i: f"{m[1]}_w{i}_{m[2]}", wrapper.regex.pattern)
            branches.append(f"(?P<_w{i}>{source})")
        combined = "|".join(branches) or "(?!)"
        self.pattern = fast_matcher(regex.compile(combined, REGEX_FLAGS))
        self._groups = [
            [(f"_w{i}_{name}", name) for name in w.regex.groupindex] for i, w in enumerate(self.wrappers)
        ]

    def match(self, text: str, pos: int) -> tuple[int, str, dict[str, str | None]] | None:
        """(wrapper index, end, its groups) of the first wrapper matching at `pos`."""
        m = self.pattern.match(text, pos)
        if m is None or m.end() <= pos:
            return None
        branch = m.lastgroup or ""
        index = int(branch[2:]) if branch.startswith("_w") and branch[2:].isdigit() else -1
        groups = {short: m.group(full) for full, short in self._groups[index]}
        return index, m.end(), groups


_GROUP_NAME = regex.compile(r"(\(\?P<|\(\?P=)(\w+)")
_WRAPPER_SETS: dict[int, WrapperSet] = {}


def wrapper_set(wrappers: Sequence[Wrapper]) -> WrapperSet:
    """The (cached) combined matcher of a grammar's wrappers."""
    key = id(wrappers)
    found = _WRAPPER_SETS.get(key)
    if found is None or found.wrappers != tuple(wrappers):
        found = _WRAPPER_SETS[key] = WrapperSet(wrappers)
    return found


def peel(wrappers: Sequence[Wrapper], text: str) -> Peeled:
    """Remove wrapper prefixes from the start of `text`, repeatedly; the innermost rank wins."""
    matcher = wrapper_set(wrappers)
    wrapper_ts: str | None = None
    rank: str | None = None
    pid: int | None = None
    used: list[str] = []
    pos = 0
    for _ in range(MAX_WRAPPERS):
        found = matcher.match(text, pos)
        if found is None:
            break
        index, pos, groups = found
        if groups.get("wrapper_ts") and wrapper_ts is None:
            wrapper_ts = groups["wrapper_ts"]
        if groups.get("rank") is not None:
            rank = groups["rank"]
            pid = int64(int(groups["pid"])) if groups.get("pid") else None
        used.append(matcher.wrappers[index].name)
    return Peeled(text[pos:], wrapper_ts, rank, pid, tuple(used))




def event_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """The kind-specific fields of an event (everything but the common columns)."""
    common = {"kind", "line_no", "ts", "engine", "rank", "pid", "level", "rule"}
    return {k: v for k, v in event.items() if k not in common}
