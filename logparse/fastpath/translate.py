"""Translate a grammar regex (Python `re`/`regex` syntax, ASCII flag) into Rust `regex` syntax.

The fast path runs grammar regexes inside polars, whose string kernels use the Rust `regex` crate.
Both engines use leftmost-first (backtracking-order) semantics for alternations, repetitions and
captures, so a pattern that only uses constructs both support captures the same text. The
translation goes through Python's own parser (`re._parser`), so verbose mode, escapes and
character classes are read exactly as Python reads them, and emits an explicit, verbose-free
pattern: literals as `\\x{..}` escapes, `\\d`/`\\w`/`\\s` as their ASCII classes.

What does not translate raises `Untranslatable` (the rule then stays on the reference path):
lookaround, backreferences, conditionals, atomic groups, possessive repeats, `^`/`$` inside a
rule, word boundaries (their meaning at the body start depends on the envelope before it).

Only ASCII lines reach the fast path, so Rust's Unicode classes and Python's ASCII classes agree
on every input they see.
"""
from __future__ import annotations

import re
import re._constants as C  # noqa: N812 - the stdlib's own name
import re._parser as P  # noqa: N812
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

_NAME_DEF = re.compile(r"\(\?P<(\w+)>")
_MAXREPEAT = C.MAXREPEAT

_CATEGORY_IN_CLASS = {
    C.CATEGORY_DIGIT: r"0-9",
    C.CATEGORY_WORD: r"0-9A-Za-z_",
    C.CATEGORY_SPACE: r"\t\n\x0B\x0C\r\x20",
}
_CATEGORY_NEGATED = {
    C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT,
    C.CATEGORY_NOT_WORD: C.CATEGORY_WORD,
    C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
}


class Untranslatable(ValueError):
    """The regex uses something the Rust engine lacks or that the fast path cannot compose."""


def rename_duplicates(source: str) -> tuple[str, dict[str, list[str]]]:
    """Give each repeated `(?P<name>` a unique name `name__k` (k = 2, 3, ...).

    The `regex` module lets one name label several groups (one field captured by several
    alternation branches); Python `re` and Rust do not. Returns the new source and, per original
    name, its group names in pattern order (a field is then the last one that captured).
    """
    seen: dict[str, list[str]] = {}

    def new_name(m: re.Match[str]) -> str:
        name = m[1]
        names = seen.setdefault(name, [])
        alias = name if not names else f"{name}__{len(names) + 1}"
        names.append(alias)
        return f"(?P<{alias}>"

    out = _NAME_DEF.sub(new_name, source)
    return out, seen


@dataclass
class Translation:
    """A Rust pattern and what it captures.

    `nodes` are the optional parts of the pattern (an optional group, one alternative of an
    alternation) that hold a literal every match of them contains: `(node id, literal)`. A line
    without that literal cannot use the part, so `emit(skip)` may leave it out for such lines and
    still capture exactly what the whole pattern captures (what the fast path does per block).
    """

    pattern: str
    groups: dict[str, str] = field(default_factory=dict)  # python group name -> rust group name
    can_start_blank: bool = True  # the pattern may match text starting with a blank, or ""
    literals: tuple[str, ...] = ()  # literal runs every match contains
    nodes: tuple[tuple[int, str], ...] = ()
    _items: Any = None
    _flags: int = 0
    _names: Mapping[int, str] = field(default_factory=dict)
    _keep: Callable[[str], str | None] | None = None
    _ids: Mapping[int, int] = field(default_factory=dict)

    def emit(self, skip: frozenset[int] = frozenset()) -> tuple[str, dict[str, str]]:
        """The pattern without the optional parts `skip`, and the groups it still captures."""
        if not skip:
            return self.pattern, dict(self.groups)
        emitter = _Emitter(self._keep or (lambda n: n), self._names, self._flags, ids=self._ids, skip=skip)
        return emitter.seq(self._items, self._flags), dict(emitter.groups)


def _hex(code: int) -> str:
    return f"\\x{{{code:X}}}"


def _char(code: int) -> str:
    ch = chr(code)
    if ch.isascii() and ch.isalnum():
        return ch
    return _hex(code)


_NEVER = "[^\\x{0}-\\x{10FFFF}]"  # matches nothing: an alternation whose every branch was left out


class _Emitter:
    def __init__(self, keep: Callable[[str], str | None], names: Mapping[int, str], flags: int, *,
                 ids: Mapping[int, int] | None = None, skip: frozenset[int] = frozenset()) -> None:
        self.keep = keep  # python group name -> rust name (None: do not capture)
        self.names = names
        self.flags = flags
        self.groups: dict[str, str] = {}
        self.ids = ids or {}
        self.skip = skip

    def skipped(self, node: object) -> bool:
        nid = self.ids.get(id(node))
        return nid is not None and nid in self.skip

    def seq(self, items: Iterable[tuple[object, object]], flags: int) -> str:
        return "".join(self.item(op, av, flags) for op, av in items)

    def item(self, op: object, av: object, flags: int) -> str:  # noqa: C901, PLR0911, PLR0912
        if op is C.LITERAL:
            text = _char(av)  # type: ignore[arg-type]
            return f"(?i:{text})" if flags & C.SRE_FLAG_IGNORECASE and chr(av).isalpha() else text  # type: ignore[arg-type]
        if op is C.NOT_LITERAL:
            inner = f"[^{_hex(av)}]"  # type: ignore[arg-type]
            return f"(?i:{inner})" if flags & C.SRE_FLAG_IGNORECASE else inner
        if op is C.ANY:
            return "(?s:.)" if flags & C.SRE_FLAG_DOTALL else "."
        if op is C.IN:
            cls = self.charclass(av)  # type: ignore[arg-type]
            return f"(?i:{cls})" if flags & C.SRE_FLAG_IGNORECASE else cls
        if op is C.BRANCH:
            _, alternatives = av  # type: ignore[misc]
            kept = [self.seq(alt, flags) for alt in alternatives if not self.skipped(alt)]
            return "(?:" + "|".join(kept) + ")" if kept else _NEVER
        if op is C.SUBPATTERN:
            group, add, delete, sub = av  # type: ignore[misc]
            inner_flags = (flags | add) & ~delete
            body = self.seq(sub, inner_flags)
            if group is not None:
                name = self.names.get(group)
                rust = self.keep(name) if name is not None else None
                if rust is not None:
                    self.groups[name] = rust  # type: ignore[index]
                    return f"(?P<{rust}>{body})"
            return f"(?:{body})"
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av  # type: ignore[misc]
            if lo == 0 and self.skipped(av):
                return ""
            body = self.seq(sub, flags)
            if not _is_atom(sub):
                body = f"(?:{body})"
            lazy = "?" if op is C.MIN_REPEAT else ""
            if (lo, hi) == (0, _MAXREPEAT):
                q = "*"
            elif (lo, hi) == (1, _MAXREPEAT):
                q = "+"
            elif (lo, hi) == (0, 1):
                q = "?"
            elif hi == _MAXREPEAT:
                q = f"{{{lo},}}"
            elif lo == hi:
                q = f"{{{lo}}}"
            else:
                q = f"{{{lo},{hi}}}"
            if hi != _MAXREPEAT and hi > 1000:
                raise Untranslatable("counted repetition too large for a fast automaton")
            return body + q + lazy
        if op is C.AT:
            raise Untranslatable(f"anchor {av} inside a rule")
        raise Untranslatable(f"{op} has no Rust equivalent")

    def charclass(self, items: list[tuple[object, object]]) -> str:
        negate = False
        parts: list[str] = []
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                parts.append(_hex(av))  # type: ignore[arg-type]
            elif op is C.RANGE:
                lo, hi = av  # type: ignore[misc]
                parts.append(f"{_hex(lo)}-{_hex(hi)}")
            elif op is C.CATEGORY:
                if av in _CATEGORY_IN_CLASS:
                    parts.append(_CATEGORY_IN_CLASS[av])  # type: ignore[index]
                elif av in _CATEGORY_NEGATED:
                    parts.append(f"[^{_CATEGORY_IN_CLASS[_CATEGORY_NEGATED[av]]}]")  # type: ignore[index]
                else:
                    raise Untranslatable(f"category {av}")
            else:
                raise Untranslatable(f"class item {op}")
        if not parts:
            return "[^\\x{0}-\\x{10FFFF}]" if not negate else "(?s:.)"
        return ("[^" if negate else "[") + "".join(parts) + "]"


def _is_atom(sub: list[tuple[object, object]]) -> bool:
    if len(sub) != 1:
        return False
    op = sub[0][0]
    return op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.SUBPATTERN)


def _emit_category(av: object) -> str:
    if av in _CATEGORY_IN_CLASS:
        return f"[{_CATEGORY_IN_CLASS[av]}]"  # type: ignore[index]
    if av in _CATEGORY_NEGATED:
        return f"[^{_CATEGORY_IN_CLASS[_CATEGORY_NEGATED[av]]}]"  # type: ignore[index]
    raise Untranslatable(f"category {av}")


# -- analysis of the parsed pattern ---------------------------------------------------------------
_BLANKS = frozenset({9, 32})


def _first_can_be_blank(items: list[tuple[object, object]], flags: int) -> bool:
    """Whether a match of `items` may be empty or start with a space or a tab (conservative)."""
    for op, av in items:
        result = _item_first_blank(op, av, flags)
        if result is not None:
            return result
    return True  # every item may match empty: the whole may be empty


def _item_first_blank(op: object, av: object, flags: int) -> bool | None:  # noqa: PLR0911
    """True/False: the item decides; None: the item may match empty, look further."""
    if op is C.LITERAL:
        return av in _BLANKS
    if op is C.NOT_LITERAL or op is C.ANY:
        return True
    if op is C.IN:
        return _class_may_hold_blank(av)  # type: ignore[arg-type]
    if op is C.BRANCH:
        _, alternatives = av  # type: ignore[misc]
        outcomes = [_first_can_be_blank(alt, flags) for alt in alternatives]
        return any(outcomes)
    if op is C.SUBPATTERN:
        sub = av[3]  # type: ignore[index]
        if _may_be_empty(sub):
            return True if _first_can_be_blank(sub, flags) else None
        return _first_can_be_blank(sub, flags)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        lo, _, sub = av  # type: ignore[misc]
        if _first_can_be_blank(sub, flags):
            return True
        return None if lo == 0 else False
    return True


def _class_may_hold_blank(items: list[tuple[object, object]]) -> bool:
    negate = any(op is C.NEGATE for op, _ in items)
    hit = False
    for op, av in items:
        if op is C.LITERAL and av in _BLANKS:
            hit = True
        elif op is C.RANGE and any(av[0] <= b <= av[1] for b in _BLANKS):  # type: ignore[index]
            hit = True
        elif op is C.CATEGORY and av in (C.CATEGORY_SPACE, C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_WORD):
            hit = True
    return hit != negate


def _may_be_empty(items: list[tuple[object, object]]) -> bool:
    for op, av in items:
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return False
        if op is C.SUBPATTERN and not _may_be_empty(av[3]):  # type: ignore[index]
            return False
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] > 0 and not _may_be_empty(av[2]):  # type: ignore[index]
            return False
        if op is C.BRANCH and not any(_may_be_empty(alt) for alt in av[1]):  # type: ignore[index]
            return False
    return True


def _mandatory_literals(items: list[tuple[object, object]], flags: int) -> list[str]:
    """Literal runs that every match of `items` contains (case-sensitive parts only)."""
    runs: list[str] = []
    current: list[str] = []

    def cut() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for op, av in items:
        if op is C.LITERAL and not flags & C.SRE_FLAG_IGNORECASE:
            current.append(chr(av))  # type: ignore[arg-type]
            continue
        cut()
        if op is C.SUBPATTERN:
            group, add, delete, sub = av  # type: ignore[misc]
            runs.extend(_mandatory_literals(sub, (flags | add) & ~delete))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:  # type: ignore[index]
            runs.extend(_mandatory_literals(av[2], flags))  # type: ignore[index]
    cut()
    return runs


def _has(items: list[tuple[object, object]], ops: tuple[object, ...]) -> bool:
    for op, av in items:
        if op in ops:
            return True
        if op is C.SUBPATTERN and _has(av[3], ops):  # type: ignore[index]
            return True
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT) and _has(av[2], ops):  # type: ignore[index]
            return True
        if op is C.BRANCH and any(_has(alt, ops) for alt in av[1]):  # type: ignore[index]
            return True
    return False


def translate(source: str, *, flags: int = re.ASCII, keep: Callable[[str], str | None] = lambda n: n) -> Translation:
    """The Rust form of `source` (Python syntax). `keep(name)` names the Rust group that captures
    Python group `name` (None: the group becomes non-capturing).

    Raises `Untranslatable` when the pattern cannot run on the Rust engine with the same meaning.
    """
    try:
        parsed = P.parse(source, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        raise Untranslatable(f"does not parse as a Python re pattern: {exc}") from None
    items = list(parsed)
    global_flags = parsed.state.flags
    if global_flags & C.SRE_FLAG_MULTILINE:
        raise Untranslatable("multiline flag")
    names = {gid: name for name, gid in parsed.state.groupdict.items()}
    emitter = _Emitter(keep, names, global_flags)
    try:
        pattern = emitter.seq(items, global_flags)
    except RecursionError:
        raise Untranslatable("pattern too deeply nested") from None
    ids: dict[int, int] = {}
    nodes: list[tuple[int, str]] = []
    _number_nodes(items, global_flags, ids, nodes)
    return Translation(
        pattern=pattern, groups=dict(emitter.groups),
        can_start_blank=_first_can_be_blank(items, global_flags),
        literals=tuple(_mandatory_literals(items, global_flags)),
        nodes=tuple(nodes), _items=items, _flags=global_flags, _names=names, _keep=keep, _ids=ids,
    )


MIN_KEY = 2  # a shorter literal is on nearly every line: not worth a node


def _number_nodes(items: list[tuple[object, object]], flags: int, ids: dict[int, int],
                  nodes: list[tuple[int, str]]) -> None:
    """Number the optional parts of `items` that hold a literal (see `Translation.nodes`)."""
    for op, av in items:
        if op is C.SUBPATTERN:
            _, add, delete, sub = av  # type: ignore[misc]
            _number_nodes(sub, (flags | add) & ~delete, ids, nodes)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, _, sub = av  # type: ignore[misc]
            if lo == 0:
                key = max(_mandatory_literals(sub, flags), key=len, default="")
                if len(key) >= MIN_KEY:
                    ids[id(av)] = len(nodes)
                    nodes.append((len(nodes), key))
            _number_nodes(sub, flags, ids, nodes)
        elif op is C.BRANCH:
            for alt in av[1]:  # type: ignore[index]
                key = max(_mandatory_literals(alt, flags), key=len, default="")
                if len(key) >= MIN_KEY:
                    ids[id(alt)] = len(nodes)
                    nodes.append((len(nodes), key))
                _number_nodes(alt, flags, ids, nodes)


def literal_pattern(text: str) -> str:
    """A Rust pattern matching `text` literally."""
    return "".join(_char(ord(c)) for c in text)


def translate_prefix(source: str, *, flags: int = re.ASCII, keep: Callable[[str], str | None] = lambda n: n) -> Translation:
    """Like `translate`, for an envelope prefix (same restrictions)."""
    return translate(source, flags=flags, keep=keep)


def implied(anchor: str, literals: Iterable[str]) -> bool:
    """Whether every match containing all `literals` necessarily contains `anchor`."""
    return any(anchor in run for run in literals)


__all__ = ["Translation", "Untranslatable", "implied", "literal_pattern", "rename_duplicates", "translate",
           "translate_prefix"]
