"""Grammar regexes (Python `re`/`regex` syntax, ASCII flag) in the Rust `regex` crate's syntax.

The compiled core runs every grammar regex with the Rust `regex` crate. Both engines give
leftmost-first (backtracking-order) results for alternations, repetitions and captures, so a
pattern that uses only constructs both support captures the same text. The translation goes
through Python's own parser (`re._parser`), so verbose mode, escapes and classes are read exactly
as Python reads them; it emits an explicit, flag-free pattern: literals as `\\x{..}` escapes,
`\\d`/`\\w`/`\\s` as their ASCII classes, case-insensitive letters as `[Aa]` (ASCII folding).
Python's `$` and `\\Z` become `$` and `\\z`: lines hold no newline, so they agree.

A pattern that does not translate raises `Untranslatable` (lookaround, backreferences,
conditionals, atomic groups, possessive repeats, word boundaries): `patterns check` reports it, and
lines such a rule could take are read by the reference parser.
"""

from __future__ import annotations

import re
import re._constants as C
import re._parser as P
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# `re._parser` has no type stubs: an opcode's operand is an int, a tuple or a list by opcode.
_Operand = Any
_Item = tuple[object, _Operand]

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
_ANCHORS = {C.AT_BEGINNING: "^", C.AT_BEGINNING_STRING: r"\A", C.AT_END: "$", C.AT_END_STRING: r"\z"}


class Untranslatable(ValueError):
    """The regex uses something the Rust engine lacks."""


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


def _hex(code: int) -> str:
    return f"\\x{{{code:X}}}"


def _char(code: int) -> str:
    ch = chr(code)
    if ch.isascii() and ch.isalnum():
        return ch
    return _hex(code)


_NEVER = "[^\\x{0}-\\x{10FFFF}]"  # matches nothing: an alternation whose every branch was left out


class _Emitter:
    def __init__(self, names: Mapping[int, str]) -> None:
        self.names = names
        self.groups: dict[str, str] = {}

    def seq(self, items: Iterable[_Item], flags: int) -> str:
        return "".join(self.item(op, av, flags) for op, av in items)

    def item(self, op: object, av: _Operand, flags: int) -> str:
        if op is C.LITERAL:
            ch = chr(av)
            if flags & C.SRE_FLAG_IGNORECASE and ch.isascii() and ch.isalpha():
                return f"[{ch.upper()}{ch.lower()}]"  # ASCII folding only, as Python's ASCII flag
            return _char(av)
        if op is C.NOT_LITERAL:
            inner = f"[^{_hex(av)}]"
            return f"(?i:{inner})" if flags & C.SRE_FLAG_IGNORECASE else inner
        if op is C.ANY:
            return "(?s:.)" if flags & C.SRE_FLAG_DOTALL else "."
        if op is C.IN:
            cls = self.charclass(av)
            return f"(?i:{cls})" if flags & C.SRE_FLAG_IGNORECASE else cls
        if op is C.BRANCH:
            _, alternatives = av
            return "(?:" + "|".join(self.seq(alt, flags) for alt in alternatives) + ")"
        if op is C.SUBPATTERN:
            group, add, delete, sub = av
            inner_flags = (flags | add) & ~delete
            body = self.seq(sub, inner_flags)
            if group is not None:
                name = self.names.get(group)
                if name is not None:
                    self.groups[name] = name
                    return f"(?P<{name}>{body})"
            return f"(?:{body})"
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av
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
                raise Untranslatable("counted repetition too large for the Rust engine")
            return body + q + lazy
        if op is C.AT:
            if av in _ANCHORS:
                return _ANCHORS[av]
            raise Untranslatable(f"anchor {av} has no Rust equivalent")
        raise Untranslatable(f"{op} has no Rust equivalent")

    def charclass(self, items: list[_Item]) -> str:
        negate = False
        parts: list[str] = []
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                parts.append(_hex(av))
            elif op is C.RANGE:
                lo, hi = av
                parts.append(f"{_hex(lo)}-{_hex(hi)}")
            elif op is C.CATEGORY:
                if av in _CATEGORY_IN_CLASS:
                    parts.append(_CATEGORY_IN_CLASS[av])
                elif av in _CATEGORY_NEGATED:
                    parts.append(f"[^{_CATEGORY_IN_CLASS[_CATEGORY_NEGATED[av]]}]")
                else:
                    raise Untranslatable(f"category {av}")
            else:
                raise Untranslatable(f"class item {op}")
        if not parts:
            return "[^\\x{0}-\\x{10FFFF}]" if not negate else "(?s:.)"
        return ("[^" if negate else "[") + "".join(parts) + "]"


def _is_atom(sub: list[_Item]) -> bool:
    if len(sub) != 1:
        return False
    op = sub[0][0]
    return op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.SUBPATTERN)


def _emit_category(av: object) -> str:
    if av in _CATEGORY_IN_CLASS:
        return f"[{_CATEGORY_IN_CLASS[av]}]"
    if av in _CATEGORY_NEGATED:
        return f"[^{_CATEGORY_IN_CLASS[_CATEGORY_NEGATED[av]]}]"
    raise Untranslatable(f"category {av}")


@dataclass(frozen=True)
class Translation:
    """A Rust pattern, and per Python group name its Rust group names in pattern order (a field is
    the last of them that captured)."""

    pattern: str
    groups: dict[str, list[str]]


def translate(source: str, *, flags: int = 0) -> Translation:
    """The Rust form of `source` (Python syntax, `flags` besides the ASCII flag)."""
    renamed, aliases = rename_duplicates(source)
    try:
        parsed = P.parse(renamed, flags | re.ASCII)
    except (re.error, OverflowError, RecursionError) as exc:
        raise Untranslatable(f"does not parse as a Python re pattern: {exc}") from None
    global_flags = parsed.state.flags
    if global_flags & C.SRE_FLAG_MULTILINE:
        raise Untranslatable("multiline flag")
    names = {gid: name for name, gid in parsed.state.groupdict.items()}
    emitter = _Emitter(names)
    try:
        pattern = emitter.seq(list(parsed), global_flags)
    except RecursionError:
        raise Untranslatable("pattern too deeply nested") from None
    return Translation(pattern=pattern, groups={name: list(rust) for name, rust in aliases.items()})
