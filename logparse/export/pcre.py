"""Grammar regexes (Python `regex` syntax, ASCII flag) in PCRE2 syntax, for tools built on PCRE2
(lnav).

The pattern goes through Python's own parser (`re._parser`), so verbose mode, escapes and classes
are read exactly as Python reads them; the output is flag-free and names groups `(?<name>...)`:

* `\\d`, `\\w`, `\\s` become their ASCII classes; letters of case-insensitive parts become `[Aa]`
  (Python's ASCII folding, not PCRE2's Unicode folding);
* nothing the output matches crosses a line end: negated classes, `.` with DOTALL and `\\s` leave
  `\\n` out (a log line holds none, so on one line they match what Python matches). A pattern
  searched in a multi-line lnav message therefore stays on one line;
* `$` and `\\Z` become `$`, `\\A` becomes `^` (a line has no newline, so they agree);
* groups named `_x` (captured, then dropped by logparse) become non-capturing;
* one field captured in several alternatives (the `regex` module allows a repeated group name;
  PCRE2 does not) becomes one group in a branch reset `(?|...)`, where the alternatives that lack
  it get a group that never matches; a repeated name that cannot be placed so keeps a distinct
  name `name__2` (`Pattern.fields` maps it back);
* names longer than PCRE2's 32 characters are shortened.

Characters are written as themselves where both PCRE2 and the `regex` module read them so (the
output compiles with both: the tests check translations with `regex`).
"""

from __future__ import annotations

import re
import re._constants as C
import re._parser as P
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_NAME = 32  # PCRE2's longest group name (10.42, Debian 12)
_NAME_DEF = re.compile(r"\(\?P<(\w+)>")
_MAXREPEAT = C.MAXREPEAT
_SPECIAL = frozenset("\\.^$|?*+()[]{}")
_CLASS_SPECIAL = frozenset("\\]^-[")
_CATEGORY = {
    C.CATEGORY_DIGIT: "0-9",
    C.CATEGORY_WORD: "0-9A-Za-z_",
    C.CATEGORY_SPACE: "\\t\\x0b\\x0c\\r ",
}
_NEGATED = {
    C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT,
    C.CATEGORY_NOT_WORD: C.CATEGORY_WORD,
    C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
}
_ANCHORS = {
    C.AT_BEGINNING: "^",
    C.AT_BEGINNING_STRING: "^",
    C.AT_END: "$",
    C.AT_END_STRING: "$",
    C.AT_BOUNDARY: "\\b",
    C.AT_NON_BOUNDARY: "\\B",
}
NEVER = "(?!)"
# What only lnav's column-type guess gives a group: its first test value, "foobar", alone. In a
# line the group never begins at the start of the message and ends it with exactly this text.
AS_TEXT = "\\Afoobar$"


class Inexpressible(ValueError):
    """The regex uses something this translation does not carry over to PCRE2."""


class NestedGroup(Inexpressible):
    """A group holding others cannot be captured on its own (it is repeated)."""

    def __init__(self, field_name: str) -> None:
        super().__init__(f"group {field_name!r} holds other groups inside a repetition")
        self.field = field_name


@dataclass(frozen=True)
class Pattern:
    """A PCRE2 pattern and, per group name in it, the field (logparse group name) it captures."""

    pattern: str
    fields: Mapping[str, str] = field(default_factory=dict)
    captures: Mapping[str, str] = field(default_factory=dict)  # group name -> its first group's text

    def names_of(self, field_name: str) -> list[str]:
        """The group names that capture `field_name`, in pattern order."""
        return [name for name, f in self.fields.items() if f == field_name]


def literal(text: str) -> str:
    """`text` as a PCRE2 pattern that matches it literally."""
    return "".join(_char(ord(ch)) for ch in text)


def to_pcre(
    source: str,
    *,
    flags: int = 0,
    branch_reset: bool = True,
    rename: Mapping[str, str | None] | None = None,
    as_text: Iterable[str] = (),
) -> Pattern:
    """The PCRE2 form of `source` (Python syntax; `flags` besides the ASCII flag).

    `rename` gives a field's group another name, or none (None: the group does not capture).
    Without `branch_reset` (lnav's search tables need every capturing group to have its own
    number, and none inside another), a field captured in several places has one group per place
    (`x`, `x__2`, ...) and a group holding others is captured by a look-ahead. The groups of
    the `as_text` fields also accept `AS_TEXT`, a text no line gives them, so that lnav, which
    types a search-table column by the sample values its group accepts, keeps their text."""
    renamed, aliases = _rename_duplicates(source)
    try:
        parsed = P.parse(renamed, flags | re.ASCII)
    except (re.error, OverflowError, RecursionError) as exc:
        raise Inexpressible(f"does not parse as a Python re pattern: {exc}") from None
    base = {alias: name for name, names in aliases.items() for alias in names}
    gid_alias = {gid: alias for alias, gid in parsed.state.groupdict.items()}
    tree = _Tree(gid_alias, base, dict(rename or {}), branch_reset=branch_reset)
    tree.as_text = frozenset(as_text)
    items = list(parsed)
    try:
        tree.plan(items)
        tree.name_slots(items)
        body = tree.seq(items, parsed.state.flags)
    except RecursionError:
        raise Inexpressible("pattern too deeply nested") from None
    return Pattern(pattern=body, fields=tree.fields, captures=tree.captures)


def _rename_duplicates(source: str) -> tuple[str, dict[str, list[str]]]:
    """Each repeated `(?P<name>` gets a unique name `name__k` (k = 2, 3, ...); per name, its
    group names in pattern order."""
    seen: dict[str, list[str]] = {}

    def new_name(m: re.Match[str]) -> str:
        names = seen.setdefault(m[1], [])
        alias = m[1] if not names else f"{m[1]}__{len(names) + 1}"
        names.append(alias)
        return f"(?P<{alias}>"

    return _NAME_DEF.sub(new_name, source), seen


def _char(code: int, *, in_class: bool = False) -> str:
    ch = chr(code)
    if ch == "\n":
        return "\\n"
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if not ch.isascii() or ch.isalnum() or ch == " ":
        return ch
    special = _CLASS_SPECIAL if in_class else _SPECIAL
    return "\\" + ch if ch in special else ch


Items = Sequence[tuple[Any, Any]]


@dataclass
class _Plan:
    """How one alternation is written: as a branch reset over `order` (field names), or plain."""

    reset: bool
    order: list[str]


class _Tree:
    """Emits one parsed pattern. `plan` decides which alternations become branch resets (bottom
    up), `name_slots` names the groups (top down), `seq` writes the pattern."""

    def __init__(
        self,
        gid_alias: Mapping[int, str],
        base: Mapping[str, str],
        rename: Mapping[str, str | None],
        *,
        branch_reset: bool,
    ) -> None:
        self.gid_alias = gid_alias
        self.base = base
        self.rename = rename
        self.branch_reset = branch_reset
        self.flat = not branch_reset
        self.quiet = 0  # > 0 while writing a text without capturing groups
        self.as_text: frozenset[str] = frozenset()
        self.captures: dict[str, str] = {}
        self.plans: dict[int, _Plan] = {}
        self.slot: dict[str, str] = {}  # alias -> the group name written
        self.fields: dict[str, str] = {}  # group name written -> field
        self.pads: list[tuple[list[str], set[str], list[int]]] = []  # (order, present, [next index])

    # -- which groups capture ----------------------------------------------------------------
    def kept(self, gid: int | None) -> str | None:
        """The alias of a group that captures a field (not `_private`), else None."""
        if gid is None:
            return None
        alias = self.gid_alias.get(gid)
        if alias is None or alias.startswith("_"):
            return None
        if self.base[alias] in self.rename and self.rename[self.base[alias]] is None:
            return None
        return alias

    # -- planning (bottom up) ----------------------------------------------------------------
    def plan(self, items: Items) -> list[list[str]]:
        """The capture slots of `items` in pattern order: a field per group, one block per branch
        reset (its order). Plans every alternation inside."""
        slots: list[list[str]] = []
        for op, av in items:
            for sub in _children(op, av):
                slots.extend(self.plan(sub))
            if op is C.SUBPATTERN:
                alias = self.kept(av[0])
                inner = self.plan(av[3])
                if alias is not None:
                    slots.append([self.base[alias]])
                slots.extend(inner)
            elif op is C.BRANCH:
                slots.extend(self.plan_branch(av[1]))
        return slots

    def plan_branch(self, alternatives: Sequence[Items]) -> list[list[str]]:
        lists = [self.plan(alt) for alt in alternatives]
        flat = [[f for block in slots for f in block] for slots in lists]
        shared = _shared(flat)
        order: list[str] = []
        for names in flat:
            for name in names:
                if name not in order:
                    order.append(name)
        reset = (
            self.branch_reset
            and bool(shared)
            and all(
                len(set(names)) == len(names) and _fits(slots, order) for names, slots in zip(flat, lists)
            )
        )
        self.plans[id(alternatives)] = _Plan(reset=reset, order=order)
        if reset:
            return [order]
        return [block for slots in lists for block in slots]

    # -- naming (top down) -------------------------------------------------------------------
    def name_slots(self, items: Items, within: dict[str, str] | None = None) -> None:
        """Give each kept group the name it is written with: inside a branch reset, every group
        of one field shares the name of its first group there."""
        for op, av in items:
            if op is C.SUBPATTERN:
                alias = self.kept(av[0])
                if alias is not None:
                    name = (within or {}).get(self.base[alias]) or self._unique(alias)
                    if within is not None:
                        within.setdefault(self.base[alias], name)
                    self.slot[alias] = name
                    self.fields[name] = self.base[alias]
                self.name_slots(av[3], within)
            elif op is C.BRANCH:
                plan = self.plans[id(av[1])]
                if not plan.reset:
                    for alt in av[1]:
                        self.name_slots(alt, within)
                    continue
                shared = dict(within or {})
                for alt in av[1]:
                    self.name_slots(alt, shared)
                if within is not None:
                    within.update(shared)
            else:
                for sub in _children(op, av):
                    self.name_slots(sub, within)

    def _unique(self, alias: str) -> str:
        field_name = self.base[alias]
        alias = (self.rename.get(field_name) or field_name) + alias[len(field_name) :]
        name = alias[:MAX_NAME]
        k = 2
        while name in self.fields:
            tag = f"_{k}"
            name = alias[: MAX_NAME - len(tag)] + tag
            k += 1
        return name

    def _named(self, field_name: str) -> str:
        for name, f in self.fields.items():
            if f == field_name:
                return name
        raise Inexpressible(f"no group for field {field_name!r}")

    # -- writing -----------------------------------------------------------------------------
    # `cont` is the text (without captures) of what must match after the items being written, or
    # None where that is not one text (inside a repeat). A group that holds other groups is
    # written, when `flat`, as a look-ahead that captures it (its text and `cont`, so it ends
    # where the real match does) followed by its content with the inner groups: lnav's search
    # tables type each column by the text of the group that *closes* in that place, so no
    # group may hold another.
    def seq(self, items: Items, flags: int, cont: str | None = "") -> str:
        out = []
        for i, (op, av) in enumerate(items):
            rest: str | None = ""
            if self.flat and self._nests([(op, av)]):
                after = self.silent(items[i + 1 :], flags)
                rest = None if cont is None else after + cont
            out.append(self.item(op, av, flags, rest))
        return "".join(out)

    def silent(self, items: Items, flags: int) -> str:
        """`items` written with no capturing group."""
        self.quiet += 1
        try:
            return self.seq(items, flags, cont=None)
        finally:
            self.quiet -= 1

    def _nests(self, items: Items, inside: bool = False) -> bool:
        """Whether a kept group in `items` holds another (or, `inside` one, is one)."""
        for op, av in items:
            if op is C.SUBPATTERN:
                kept = self.kept(av[0]) is not None
                if (kept and inside) or self._nests(av[3], inside or kept):
                    return True
            elif op is C.BRANCH:
                if any(self._nests(alt, inside) for alt in av[1]):
                    return True
            elif any(self._nests(sub, inside) for sub in _children(op, av)):
                return True
        return False

    def item(self, op: Any, av: Any, flags: int, cont: str | None = "") -> str:
        if op is C.LITERAL:
            ch = chr(av)
            if flags & C.SRE_FLAG_IGNORECASE and ch.isascii() and ch.isalpha():
                return f"[{ch.upper()}{ch.lower()}]"
            return _char(av)
        if op is C.NOT_LITERAL:
            inner = f"[^{_char(av, in_class=True)}\\n]"
            return f"(?i:{inner})" if flags & C.SRE_FLAG_IGNORECASE else inner
        if op is C.ANY:
            return "[^\\n]"  # not ".": lnav reads "." as matching a line end too
        if op is C.IN:
            cls = _charclass(av)
            return f"(?i:{cls})" if flags & C.SRE_FLAG_IGNORECASE else cls
        if op is C.BRANCH:
            return self.branch(av[1], flags, cont)
        if op is C.SUBPATTERN:
            return self.group(av, flags, cont)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            # an optional part is followed by what follows it; a repeated one by more of itself
            body = self.seq(sub, flags, cont if (lo, hi) == (0, 1) else None)
            if not _is_atom(sub):
                body = f"(?:{body})"
            suffix = {C.MAX_REPEAT: "", C.MIN_REPEAT: "?", C.POSSESSIVE_REPEAT: "+"}[op]
            return body + _quantifier(lo, hi) + suffix
        if op is C.ATOMIC_GROUP:
            return f"(?>{self.seq(av, flags)})"  # an atomic group's first match ignores what follows
        if op is C.AT:
            if av in _ANCHORS:
                return _ANCHORS[av]
            raise Inexpressible(f"anchor {av}")
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, sub = av
            mark = ("=" if op is C.ASSERT else "!") if direction == 1 else ("<=" if op is C.ASSERT else "<!")
            return f"(?{mark}{self.seq(sub, flags)})"
        if op is C.GROUPREF:
            alias = self.kept(av)
            if alias is None or self.quiet:
                raise Inexpressible("a backreference to a group that is not a field")
            return f"\\k<{self.slot[alias]}>"
        if op is C.GROUPREF_EXISTS:
            gid, yes, no = av
            alias = self.kept(gid)
            if alias is None or self.quiet:
                raise Inexpressible("a condition on a group that is not a field")
            tail = "" if no is None else "|" + self.seq(no, flags, cont)
            return f"(?({self.slot[alias]}){self.seq(yes, flags, cont)}{tail})"
        raise Inexpressible(f"{op}")

    def group(self, av: Any, flags: int, cont: str | None) -> str:
        gid, add, delete, sub = av
        inner_flags = (flags | add) & ~delete
        alias = self.kept(gid)
        if alias is None or self.quiet:
            return f"(?:{self.seq(sub, inner_flags, cont)})"
        name = self.slot[alias]
        head = self.pad_to(self.base[alias])
        self.advance(self.base[alias])
        if self.flat and self._nests(sub, inside=True):
            if cont is None:
                raise NestedGroup(self.base[alias])
            captured = f"(?<{name}>{self.silent(sub, inner_flags)}{self._text_only(alias)})"
            self.captures.setdefault(name, captured)
            return f"{head}(?={captured}{cont})(?:{self.seq(sub, inner_flags, cont)})"
        text = f"(?<{name}>{self.seq(sub, inner_flags, cont)}{self._text_only(alias)})"
        self.captures.setdefault(name, text)
        return head + text

    def _text_only(self, alias: str) -> str:
        return "|" + AS_TEXT if self.base[alias] in self.as_text else ""

    def branch(self, alternatives: Sequence[Items], flags: int, cont: str | None = "") -> str:
        plan = self.plans[id(alternatives)]
        if not plan.reset or self.quiet:
            return "(?:" + "|".join(self.seq(alt, flags, cont) for alt in alternatives) + ")"
        head = self.pad_to(plan.order[0]) if plan.order else ""
        parts = []
        for alt in alternatives:
            present = {f for slots in self.plan_names(alt) for f in slots}
            self.pads.append((plan.order, present, [0]))
            text = self.seq(alt, flags, cont)
            text += self.pad_rest()
            self.pads.pop()
            parts.append(text)
        for name in plan.order:
            self.advance(name)
        return head + "(?|" + "|".join(parts) + ")"

    def plan_names(self, alt: Items) -> list[list[str]]:
        """The slots of an alternative, as planned (no new plans)."""
        slots: list[list[str]] = []
        for op, av in alt:
            if op is C.SUBPATTERN:
                alias = self.kept(av[0])
                if alias is not None:
                    slots.append([self.base[alias]])
                slots.extend(self.plan_names(av[3]))
            elif op is C.BRANCH:
                plan = self.plans[id(av[1])]
                if plan.reset:
                    slots.append(plan.order)
                else:
                    for sub in av[1]:
                        slots.extend(self.plan_names(sub))
            else:
                for sub in _children(op, av):
                    slots.extend(self.plan_names(sub))
        return slots

    def pad_to(self, field_name: str) -> str:
        """Never-matching groups for the fields of the enclosing branch reset that this
        alternative lacks and that come before `field_name`."""
        if not self.pads:
            return ""
        order, present, at = self.pads[-1]
        if field_name not in order:
            return ""
        out = []
        while at[0] < len(order) and order[at[0]] != field_name:
            missing = order[at[0]]
            if missing in present:
                break
            out.append(f"(?<{self._named(missing)}>{NEVER})?")
            at[0] += 1
        return "".join(out)

    def advance(self, field_name: str) -> None:
        if not self.pads:
            return
        order, _, at = self.pads[-1]
        if at[0] < len(order) and order[at[0]] == field_name:
            at[0] += 1

    def pad_rest(self) -> str:
        order, _, at = self.pads[-1]
        out = [f"(?<{self._named(name)}>{NEVER})?" for name in order[at[0] :]]
        at[0] = len(order)
        return "".join(out)


def _children(op: Any, av: Any) -> Iterable[Items]:
    """Sub-patterns of a node other than groups and alternations (handled by the caller)."""
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        return [av[2]]
    if op is C.ATOMIC_GROUP:
        return [av]
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [av[1]]
    if op is C.GROUPREF_EXISTS:
        return [av[1]] + ([av[2]] if av[2] is not None else [])
    return []


def _shared(lists: Sequence[Sequence[str]]) -> set[str]:
    seen: dict[str, int] = {}
    for names in lists:
        for name in set(names):
            seen[name] = seen.get(name, 0) + 1
    return {name for name, count in seen.items() if count > 1}


def _fits(slots: Sequence[Sequence[str]], order: Sequence[str]) -> bool:
    """Whether an alternative's slots follow `order`, each block of a nested branch reset
    contiguous in it (the missing fields can then be padded in before each slot)."""
    at = 0
    for block in slots:
        try:
            start = order.index(block[0], at)
        except ValueError:
            return False
        if list(order[start : start + len(block)]) != list(block):
            return False
        at = start + len(block)
    return True


def _quantifier(lo: int, hi: int) -> str:
    if (lo, hi) == (0, _MAXREPEAT):
        return "*"
    if (lo, hi) == (1, _MAXREPEAT):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi == _MAXREPEAT:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def _is_atom(sub: Items) -> bool:
    return len(sub) == 1 and sub[0][0] in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.SUBPATTERN)


def _charclass(items: Items) -> str:
    negate = False
    parts: list[str] = []
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            parts.append(_char(av, in_class=True))
        elif op is C.RANGE:
            parts.append(f"{_char(av[0], in_class=True)}-{_char(av[1], in_class=True)}")
        elif op is C.CATEGORY:
            if av in _CATEGORY:
                parts.append(_CATEGORY[av])
            elif av in _NEGATED:
                if negate or len(items) > 1:
                    raise Inexpressible("a negated category inside a class")
                return f"[^{_CATEGORY[_NEGATED[av]]}\\n]"
            else:
                raise Inexpressible(f"category {av}")
        else:
            raise Inexpressible(f"class item {op}")
    if not parts:
        return "[^\\n]" if negate else NEVER
    if negate:
        return "[^" + "".join(parts) + "\\n]"
    return "[" + "".join(parts) + "]"
