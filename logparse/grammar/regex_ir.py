"""A grammar regex read once into a small tree, and written out for the engines that run it.

Grammar regexes are Python `regex` syntax with the ASCII flag. `parse_regex` reads one with
Python's own parser (`re._parser`), so verbose mode, escapes and classes are read exactly as Python
reads them, into `Node`s whose inline flags are folded into the leaves (a letter knows whether it
is case-insensitive, a `.` whether it matches a line end). Two emitters write the tree:

* `to_rust`: the Rust `regex` crate's syntax, which the compiled core runs. Both engines give
  leftmost-first (backtracking-order) results for alternations, repetitions and captures, so a
  pattern that uses only what both support captures the same text. The output is explicit and
  flag-free: literals as `\\x{..}` escapes, `\\d`/`\\w`/`\\s` as their ASCII classes,
  case-insensitive letters as `[Aa]` (ASCII folding), `$`/`\\Z` as `$`/`\\z` (lines hold no
  newline, so they agree). Lookaround, backreferences, conditionals, atomic groups, possessive
  repeats and word boundaries have no Rust form: `Untranslatable` says which.
* `to_pcre`: PCRE2 syntax, for lnav (`logparse export lnav`); see its docstring for how groups
  are named and why nothing it matches crosses a line end. What it cannot carry over raises
  `Inexpressible`.
"""

from __future__ import annotations

import re
import re._constants as C
import re._parser as P
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# -- the tree ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Char:
    """One character; `fold`: case-insensitive (ASCII folding)."""

    code: int
    fold: bool = False


@dataclass(frozen=True, eq=False)
class NotChar:
    """Any character but one."""

    code: int
    fold: bool = False


@dataclass(frozen=True, eq=False)
class AnyChar:
    """`.`; `dotall`: a line end too."""

    dotall: bool = False


CategoryName = Literal["digit", "word", "space"]


@dataclass(frozen=True, eq=False)
class Category:
    """`\\d`, `\\w`, `\\s` (ASCII), or their negation, inside a class."""

    name: CategoryName
    negated: bool = False


@dataclass(frozen=True, eq=False)
class Range:
    """A range of characters inside a class."""

    lo: int
    hi: int


@dataclass(frozen=True, eq=False)
class CharClass:
    """`[...]` (and `\\d`, `\\w`, `\\s` outside a class): characters, ranges and categories."""

    items: tuple[Char | Range | Category, ...]
    negated: bool = False
    fold: bool = False


@dataclass(frozen=True, eq=False)
class Alternation:
    """`a|b|...`."""

    branches: tuple[Seq, ...]


@dataclass(frozen=True, eq=False)
class Group:
    """A group. `alias` is its name, unique in the pattern (a repeated name's later groups are
    `name__2`, ...), `field` the name as written; both None for a group without a name."""

    body: Seq
    alias: str | None = None
    field: str | None = None


@dataclass(frozen=True, eq=False)
class Repeat:
    """A repetition, `hi` None for no bound."""

    body: Seq
    lo: int
    hi: int | None
    mode: Literal["greedy", "lazy", "possessive"] = "greedy"


@dataclass(frozen=True, eq=False)
class Atomic:
    """`(?>...)`."""

    body: Seq


AnchorName = Literal["line_start", "text_start", "line_end", "text_end", "word_boundary", "not_word_boundary"]


@dataclass(frozen=True, eq=False)
class Anchor:
    """`^`, `\\A`, `$`, `\\Z`, `\\b`, `\\B`."""

    where: AnchorName


@dataclass(frozen=True, eq=False)
class Look:
    """Lookahead (`ahead`) or lookbehind, positive or `negated`."""

    body: Seq
    ahead: bool = True
    negated: bool = False


@dataclass(frozen=True, eq=False)
class BackRef:
    """`(?P=name)` or `\\1`: the alias of the group referred to (None: a group without a name)."""

    alias: str | None


@dataclass(frozen=True, eq=False)
class Conditional:
    """`(?(name)yes|no)`."""

    alias: str | None
    yes: Seq
    no: Seq | None


Node = (
    Char
    | NotChar
    | AnyChar
    | CharClass
    | Alternation
    | Group
    | Repeat
    | Atomic
    | Anchor
    | Look
    | BackRef
    | Conditional
)
Seq = tuple[Node, ...]


@dataclass(frozen=True)
class Regex:
    """A parsed grammar regex: its nodes, whether its global flags say MULTILINE, and per field
    (group name as written) its group aliases in pattern order."""

    nodes: Seq
    multiline: bool
    fields: Mapping[str, list[str]]

    @property
    def field_of(self) -> dict[str, str]:
        """Per group alias, the field it captures."""
        return {alias: name for name, aliases in self.fields.items() for alias in aliases}


class Unsupported(ValueError):
    """A grammar regex that a target engine cannot run, or that does not parse."""


class Untranslatable(Unsupported):
    """The regex uses something the Rust `regex` crate lacks."""


class Inexpressible(Unsupported):
    """The regex uses something this translation does not carry over to PCRE2."""


class NestedGroup(Inexpressible):
    """A group holding others cannot be captured on its own (it is repeated)."""

    def __init__(self, field_name: str) -> None:
        super().__init__(f"group {field_name!r} holds other groups inside a repetition")
        self.field = field_name


# -- reading -------------------------------------------------------------------------------------
_LEADING_FLAGS = re.compile(r"\A\(\?([aiLmsux]+)\)")
_FLAG_BITS = {
    "i": re.IGNORECASE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "x": re.VERBOSE,
    "a": re.ASCII,
    "u": re.UNICODE,
    "L": re.LOCALE,
}
_NAME_DEF = re.compile(r"\(\?P<(\w+)>")
_CATEGORIES: dict[Any, tuple[CategoryName, bool]] = {
    C.CATEGORY_DIGIT: ("digit", False),
    C.CATEGORY_WORD: ("word", False),
    C.CATEGORY_SPACE: ("space", False),
    C.CATEGORY_NOT_DIGIT: ("digit", True),
    C.CATEGORY_NOT_WORD: ("word", True),
    C.CATEGORY_NOT_SPACE: ("space", True),
}
_ANCHORS: dict[Any, AnchorName] = {
    C.AT_BEGINNING: "line_start",
    C.AT_BEGINNING_STRING: "text_start",
    C.AT_END: "line_end",
    C.AT_END_STRING: "text_end",
    C.AT_BOUNDARY: "word_boundary",
    C.AT_NON_BOUNDARY: "not_word_boundary",
}
RepeatMode = Literal["greedy", "lazy", "possessive"]
_REPEATS: dict[Any, RepeatMode] = {
    C.MAX_REPEAT: "greedy",
    C.MIN_REPEAT: "lazy",
    C.POSSESSIVE_REPEAT: "possessive",
}


def leading_flags(pattern: str) -> tuple[str, str]:
    """A pattern's leading inline flags (`(?x)` -> "x") and the rest of the pattern."""
    m = _LEADING_FLAGS.match(pattern)
    if m is None:
        return "", pattern
    return m.group(1), pattern[m.end() :]


def flag_bits(letters: str) -> int:
    """The `re` flag bits of inline flag letters."""
    bits = 0
    for letter in letters:
        bits |= _FLAG_BITS[letter]
    return bits


def rename_duplicates(source: str) -> tuple[str, dict[str, list[str]]]:
    """Give each repeated `(?P<name>` a unique name `name__k` (k = 2, 3, ...).

    The `regex` module lets one name label several groups (one field captured by several
    alternation branches); Python `re`, Rust and PCRE2 do not. Returns the new source and, per
    original name, its group names in pattern order (a field is then the last one that captured).
    """
    seen: dict[str, list[str]] = {}

    def new_name(m: re.Match[str]) -> str:
        names = seen.setdefault(m[1], [])
        alias = m[1] if not names else f"{m[1]}__{len(names) + 1}"
        names.append(alias)
        return f"(?P<{alias}>"

    return _NAME_DEF.sub(new_name, source), seen


def parse_regex(source: str, *, flags: int = 0) -> Regex:
    """Read `source` (Python syntax, `flags` besides the ASCII flag). Raises `Unsupported` when it
    does not parse or uses something no emitter knows."""
    renamed, fields = rename_duplicates(source)
    try:
        parsed = P.parse(renamed, flags | re.ASCII)
    except (re.error, OverflowError, RecursionError) as exc:
        raise Unsupported(f"does not parse as a Python re pattern: {exc}") from None
    aliases = {gid: alias for alias, gid in parsed.state.groupdict.items()}
    base = {alias: name for name, names in fields.items() for alias in names}
    reader = _Reader(aliases, base)
    try:
        nodes = reader.seq(list(parsed), parsed.state.flags)
    except RecursionError:
        raise Unsupported("pattern too deeply nested") from None
    return Regex(nodes=nodes, multiline=bool(parsed.state.flags & C.SRE_FLAG_MULTILINE), fields=fields)


class _Reader:
    def __init__(self, aliases: Mapping[int, str], base: Mapping[str, str]) -> None:
        self.aliases = aliases
        self.base = base

    def seq(self, items: Iterable[tuple[Any, Any]], flags: int) -> Seq:
        return tuple(self.node(op, av, flags) for op, av in items)

    def node(self, op: Any, av: Any, flags: int) -> Node:
        fold = bool(flags & C.SRE_FLAG_IGNORECASE)
        if op is C.LITERAL:
            return Char(av, fold)
        if op is C.NOT_LITERAL:
            return NotChar(av, fold)
        if op is C.ANY:
            return AnyChar(bool(flags & C.SRE_FLAG_DOTALL))
        if op is C.IN:
            return self.charclass(av, fold)
        if op is C.BRANCH:
            return Alternation(tuple(self.seq(alt, flags) for alt in av[1]))
        if op is C.SUBPATTERN:
            gid, add, delete, sub = av
            alias = self.aliases.get(gid) if gid is not None else None
            body = self.seq(sub, (flags | add) & ~delete)
            return Group(body, alias, self.base.get(alias, alias) if alias else None)
        if op in _REPEATS:
            lo, hi, sub = av
            return Repeat(self.seq(sub, flags), lo, None if hi == C.MAXREPEAT else hi, _REPEATS[op])
        if op is C.ATOMIC_GROUP:
            return Atomic(self.seq(av, flags))
        if op is C.AT:
            if av not in _ANCHORS:
                raise Unsupported(f"anchor {av}")
            return Anchor(_ANCHORS[av])
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, sub = av
            return Look(self.seq(sub, flags), ahead=direction == 1, negated=op is C.ASSERT_NOT)
        if op is C.GROUPREF:
            return BackRef(self.aliases.get(av))
        if op is C.GROUPREF_EXISTS:
            gid, yes, no = av
            return Conditional(
                self.aliases.get(gid), self.seq(yes, flags), None if no is None else self.seq(no, flags)
            )
        raise Unsupported(f"{op} is not supported")

    def charclass(self, items: Iterable[tuple[Any, Any]], fold: bool) -> CharClass:
        negated = False
        out: list[Char | Range | Category] = []
        for op, av in items:
            if op is C.NEGATE:
                negated = True
            elif op is C.LITERAL:
                out.append(Char(av))
            elif op is C.RANGE:
                out.append(Range(*av))
            elif op is C.CATEGORY and av in _CATEGORIES:
                out.append(Category(*_CATEGORIES[av]))
            else:
                raise Unsupported(f"class item {op} {av}")
        return CharClass(tuple(out), negated, fold)


def children(node: Node) -> list[Seq]:
    """The sub-sequences of a node other than a group's and an alternation's."""
    if isinstance(node, (Repeat, Atomic, Look)):
        return [node.body]
    if isinstance(node, Conditional):
        return [node.yes] + ([node.no] if node.no is not None else [])
    return []


def quantifier(lo: int, hi: int | None) -> str:
    """`*`, `+`, `?`, `{n}`, `{n,}` or `{n,m}`."""
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if (lo, hi) == (0, 1):
        return "?"
    if hi is None:
        return f"{{{lo},}}"
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def is_atom(body: Seq) -> bool:
    """Whether a repeated body needs no group around it."""
    return len(body) == 1 and isinstance(body[0], (Char, NotChar, AnyChar, CharClass, Group))


# -- Rust --------------------------------------------------------------------------------------------
RUST_MAX_REPEAT = 1000  # the largest counted repetition written for the Rust engine
_RUST_CATEGORY = {"digit": r"0-9", "word": r"0-9A-Za-z_", "space": r"\t\n\x0B\x0C\r\x20"}
_RUST_ANCHORS: dict[AnchorName, str] = {
    "line_start": "^",
    "text_start": r"\A",
    "line_end": "$",
    "text_end": r"\z",
}
_RUST_NEVER = "[^\\x{0}-\\x{10FFFF}]"  # an empty class: matches nothing


@dataclass(frozen=True)
class Translation:
    """A Rust pattern, and per Python group name its Rust group names in pattern order (a field is
    the last of them that captured)."""

    pattern: str
    groups: dict[str, list[str]]


def to_rust(source: str, *, flags: int = 0) -> Translation:
    """The Rust form of `source` (Python syntax, `flags` besides the ASCII flag); raises
    `Untranslatable`."""
    try:
        tree = parse_regex(source, flags=flags)
    except Unsupported as exc:
        raise Untranslatable(str(exc)) from None
    if tree.multiline:
        raise Untranslatable("multiline flag")
    try:
        pattern = "".join(_rust(node) for node in tree.nodes)
    except RecursionError:
        raise Untranslatable("pattern too deeply nested") from None
    return Translation(pattern=pattern, groups={name: list(rust) for name, rust in tree.fields.items()})


def _rust_hex(code: int) -> str:
    return f"\\x{{{code:X}}}"


def _rust_seq(nodes: Seq) -> str:
    return "".join(_rust(node) for node in nodes)


def _rust(node: Node) -> str:
    if isinstance(node, Char):
        ch = chr(node.code)
        if node.fold and ch.isascii() and ch.isalpha():
            return f"[{ch.upper()}{ch.lower()}]"  # ASCII folding only, as Python's ASCII flag
        return ch if ch.isascii() and ch.isalnum() else _rust_hex(node.code)
    if isinstance(node, NotChar):
        inner = f"[^{_rust_hex(node.code)}]"
        return f"(?i:{inner})" if node.fold else inner
    if isinstance(node, AnyChar):
        return "(?s:.)" if node.dotall else "."
    if isinstance(node, CharClass):
        cls = _rust_class(node)
        return f"(?i:{cls})" if node.fold else cls
    if isinstance(node, Alternation):
        return "(?:" + "|".join(_rust_seq(alt) for alt in node.branches) + ")"
    if isinstance(node, Group):
        body = _rust_seq(node.body)
        return f"(?P<{node.alias}>{body})" if node.alias is not None else f"(?:{body})"
    if isinstance(node, Repeat):
        if node.mode == "possessive":
            raise Untranslatable("a possessive repeat has no Rust equivalent")
        body = _rust_seq(node.body)
        if not is_atom(node.body):
            body = f"(?:{body})"
        if node.hi is not None and node.hi > RUST_MAX_REPEAT:
            raise Untranslatable("counted repetition too large for the Rust engine")
        return body + quantifier(node.lo, node.hi) + ("?" if node.mode == "lazy" else "")
    if isinstance(node, Anchor):
        if node.where in _RUST_ANCHORS:
            return _RUST_ANCHORS[node.where]
        raise Untranslatable("a word boundary (`\\b`, `\\B`) has no Rust equivalent")
    if isinstance(node, Look):
        what = ("a negative " if node.negated else "a ") + ("lookahead" if node.ahead else "lookbehind")
        raise Untranslatable(f"{what} has no Rust equivalent")
    if isinstance(node, Atomic):
        raise Untranslatable("an atomic group has no Rust equivalent")
    if isinstance(node, BackRef):
        raise Untranslatable("a backreference has no Rust equivalent")
    raise Untranslatable("a conditional group has no Rust equivalent")


def _rust_class(node: CharClass) -> str:
    parts: list[str] = []
    for item in node.items:
        if isinstance(item, Char):
            parts.append(_rust_hex(item.code))
        elif isinstance(item, Range):
            parts.append(f"{_rust_hex(item.lo)}-{_rust_hex(item.hi)}")
        elif item.negated:
            parts.append(f"[^{_RUST_CATEGORY[item.name]}]")
        else:
            parts.append(_RUST_CATEGORY[item.name])
    if not parts:
        return _RUST_NEVER if not node.negated else "(?s:.)"
    return ("[^" if node.negated else "[") + "".join(parts) + "]"


# -- PCRE2 -------------------------------------------------------------------------------------------
MAX_NAME = 32  # PCRE2's longest group name (10.42, Debian 12)
_SPECIAL = frozenset("\\.^$|?*+()[]{}")
_CLASS_SPECIAL = frozenset("\\]^-[")
_PCRE_CATEGORY = {"digit": "0-9", "word": "0-9A-Za-z_", "space": "\\t\\x0b\\x0c\\r "}
_PCRE_ANCHORS: dict[AnchorName, str] = {
    "line_start": "^",
    "text_start": "^",
    "line_end": "$",
    "text_end": "$",
    "word_boundary": "\\b",
    "not_word_boundary": "\\B",
}
NEVER = "(?!)"
# What only lnav's column-type guess gives a group: its first test value, "foobar", alone. In a
# line the group never begins at the start of the message and ends it with exactly this text.
AS_TEXT = "\\Afoobar$"


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
    return "".join(_pcre_char(ord(ch)) for ch in text)


def to_pcre(
    source: str,
    *,
    flags: int = 0,
    branch_reset: bool = True,
    rename: Mapping[str, str | None] | None = None,
    as_text: Iterable[str] = (),
) -> Pattern:
    """The PCRE2 form of `source` (Python syntax; `flags` besides the ASCII flag); raises
    `Inexpressible`. The output is flag-free and names groups `(?<name>...)`:

    * `\\d`, `\\w`, `\\s` become their ASCII classes; letters of case-insensitive parts become `[Aa]`
      (Python's ASCII folding, not PCRE2's Unicode folding);
    * nothing the output matches crosses a line end: negated classes, `.` with DOTALL and `\\s`
      leave `\\n` out (a log line holds none, so on one line they match what Python matches). A
      pattern searched in a multi-line lnav message therefore stays on one line;
    * `$` and `\\Z` become `$`, `\\A` becomes `^` (a line has no newline, so they agree);
    * groups named `_x` (captured, then dropped by logparse) become non-capturing;
    * one field captured in several alternatives becomes one group in a branch reset `(?|...)`,
      where the alternatives that lack it get a group that never matches; a repeated name that
      cannot be placed so keeps a distinct name `name__2` (`Pattern.fields` maps it back);
    * names longer than PCRE2's 32 characters are shortened;
    * characters are written as themselves where both PCRE2 and the `regex` module read them so
      (the output compiles with both: the tests check translations with `regex`).

    `rename` gives a field's group another name, or none (None: the group does not capture).
    Without `branch_reset` (lnav's search tables need every capturing group to have its own
    number, and none inside another), a field captured in several places has one group per place
    (`x`, `x__2`, ...) and a group holding others is captured by a look-ahead. The groups of
    the `as_text` fields also accept `AS_TEXT`, a text no line gives them, so that lnav, which
    types a search-table column by the sample values its group accepts, keeps their text."""
    try:
        tree = parse_regex(source, flags=flags)
    except Unsupported as exc:
        raise Inexpressible(str(exc)) from None
    writer = _PcreWriter(tree.field_of, dict(rename or {}), branch_reset=branch_reset)
    writer.as_text = frozenset(as_text)
    try:
        writer.plan(tree.nodes)
        writer.name_slots(tree.nodes)
        body = writer.seq(tree.nodes)
    except RecursionError:
        raise Inexpressible("pattern too deeply nested") from None
    return Pattern(pattern=body, fields=writer.fields, captures=writer.captures)


def _pcre_char(code: int, *, in_class: bool = False) -> str:
    ch = chr(code)
    if ch == "\n":
        return "\\n"
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if not ch.isascii() or ch.isalnum() or ch == " ":
        return ch
    special = _CLASS_SPECIAL if in_class else _SPECIAL
    return "\\" + ch if ch in special else ch


@dataclass
class _Plan:
    """How one alternation is written: as a branch reset over `order` (field names), or plain."""

    reset: bool
    order: list[str]


class _PcreWriter:
    """Writes one parsed pattern. `plan` decides which alternations become branch resets (bottom
    up), `name_slots` names the groups (top down), `seq` writes the pattern."""

    def __init__(
        self, base: Mapping[str, str], rename: Mapping[str, str | None], *, branch_reset: bool
    ) -> None:
        self.base = base
        self.rename = rename
        self.branch_reset = branch_reset
        self.flat = not branch_reset
        self.quiet = 0  # > 0 while writing a text without capturing groups
        self.as_text: frozenset[str] = frozenset()
        self.captures: dict[str, str] = {}
        self.plans: dict[Alternation, _Plan] = {}
        self.slot: dict[str, str] = {}  # alias -> the group name written
        self.fields: dict[str, str] = {}  # group name written -> field
        self.pads: list[tuple[list[str], set[str], list[int]]] = []  # (order, present, [next index])

    # -- which groups capture ----------------------------------------------------------------
    def kept(self, alias: str | None) -> str | None:
        """The alias of a group that captures a field (not `_private`), else None."""
        if alias is None or alias.startswith("_"):
            return None
        if self.base[alias] in self.rename and self.rename[self.base[alias]] is None:
            return None
        return alias

    # -- planning (bottom up) ----------------------------------------------------------------
    def plan(self, nodes: Seq) -> list[list[str]]:
        """The capture slots of `nodes` in pattern order: a field per group, one block per branch
        reset (its order). Plans every alternation inside."""
        slots: list[list[str]] = []
        for node in nodes:
            for sub in children(node):
                slots.extend(self.plan(sub))
            if isinstance(node, Group):
                alias = self.kept(node.alias)
                inner = self.plan(node.body)
                if alias is not None:
                    slots.append([self.base[alias]])
                slots.extend(inner)
            elif isinstance(node, Alternation):
                slots.extend(self.plan_branch(node))
        return slots

    def plan_branch(self, node: Alternation) -> list[list[str]]:
        lists = [self.plan(alt) for alt in node.branches]
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
        self.plans[node] = _Plan(reset=reset, order=order)
        if reset:
            return [order]
        return [block for slots in lists for block in slots]

    # -- naming (top down) -------------------------------------------------------------------
    def name_slots(self, nodes: Seq, within: dict[str, str] | None = None) -> None:
        """Give each kept group the name it is written with: inside a branch reset, every group
        of one field shares the name of its first group there."""
        for node in nodes:
            if isinstance(node, Group):
                alias = self.kept(node.alias)
                if alias is not None:
                    name = (within or {}).get(self.base[alias]) or self._unique(alias)
                    if within is not None:
                        within.setdefault(self.base[alias], name)
                    self.slot[alias] = name
                    self.fields[name] = self.base[alias]
                self.name_slots(node.body, within)
            elif isinstance(node, Alternation):
                if not self.plans[node].reset:
                    for alt in node.branches:
                        self.name_slots(alt, within)
                    continue
                shared = dict(within or {})
                for alt in node.branches:
                    self.name_slots(alt, shared)
                if within is not None:
                    within.update(shared)
            else:
                for sub in children(node):
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
    # `cont` is the text (without captures) of what must match after the nodes being written, or
    # None where that is not one text (inside a repeat). A group that holds other groups is
    # written, when `flat`, as a look-ahead that captures it (its text and `cont`, so it ends
    # where the real match does) followed by its content with the inner groups: lnav's search
    # tables type each column by the text of the group that *closes* in that place, so no
    # group may hold another.
    def seq(self, nodes: Seq, cont: str | None = "") -> str:
        out = []
        for i, node in enumerate(nodes):
            rest: str | None = ""
            if self.flat and self._nests((node,)):
                after = self.silent(nodes[i + 1 :])
                rest = None if cont is None else after + cont
            out.append(self.node(node, rest))
        return "".join(out)

    def silent(self, nodes: Seq) -> str:
        """`nodes` written with no capturing group."""
        self.quiet += 1
        try:
            return self.seq(nodes, cont=None)
        finally:
            self.quiet -= 1

    def _nests(self, nodes: Seq, inside: bool = False) -> bool:
        """Whether a kept group in `nodes` holds another (or, `inside` one, is one)."""
        for node in nodes:
            if isinstance(node, Group):
                kept = self.kept(node.alias) is not None
                if (kept and inside) or self._nests(node.body, inside or kept):
                    return True
            elif isinstance(node, Alternation):
                if any(self._nests(alt, inside) for alt in node.branches):
                    return True
            elif any(self._nests(sub, inside) for sub in children(node)):
                return True
        return False

    def node(self, node: Node, cont: str | None = "") -> str:
        if isinstance(node, Char):
            ch = chr(node.code)
            if node.fold and ch.isascii() and ch.isalpha():
                return f"[{ch.upper()}{ch.lower()}]"
            return _pcre_char(node.code)
        if isinstance(node, NotChar):
            inner = f"[^{_pcre_char(node.code, in_class=True)}\\n]"
            return f"(?i:{inner})" if node.fold else inner
        if isinstance(node, AnyChar):
            return "[^\\n]"  # not ".": lnav reads "." as matching a line end too
        if isinstance(node, CharClass):
            cls = _pcre_class(node)
            return f"(?i:{cls})" if node.fold else cls
        if isinstance(node, Alternation):
            return self.branch(node, cont)
        if isinstance(node, Group):
            return self.group(node, cont)
        if isinstance(node, Repeat):
            # an optional part is followed by what follows it; a repeated one by more of itself
            body = self.seq(node.body, cont if (node.lo, node.hi) == (0, 1) else None)
            if not is_atom(node.body):
                body = f"(?:{body})"
            suffix = {"greedy": "", "lazy": "?", "possessive": "+"}[node.mode]
            return body + quantifier(node.lo, node.hi) + suffix
        if isinstance(node, Atomic):
            return f"(?>{self.seq(node.body)})"  # an atomic group's first match ignores what follows
        if isinstance(node, Anchor):
            return _PCRE_ANCHORS[node.where]
        if isinstance(node, Look):
            mark = ("!" if node.negated else "=") if node.ahead else ("<!" if node.negated else "<=")
            return f"(?{mark}{self.seq(node.body)})"
        if isinstance(node, BackRef):
            alias = self.kept(node.alias)
            if alias is None or self.quiet:
                raise Inexpressible("a backreference to a group that is not a field")
            return f"\\k<{self.slot[alias]}>"
        alias = self.kept(node.alias)
        if alias is None or self.quiet:
            raise Inexpressible("a condition on a group that is not a field")
        tail = "" if node.no is None else "|" + self.seq(node.no, cont)
        return f"(?({self.slot[alias]}){self.seq(node.yes, cont)}{tail})"

    def group(self, node: Group, cont: str | None) -> str:
        alias = self.kept(node.alias)
        if alias is None or self.quiet:
            return f"(?:{self.seq(node.body, cont)})"
        name = self.slot[alias]
        head = self.pad_to(self.base[alias])
        self.advance(self.base[alias])
        if self.flat and self._nests(node.body, inside=True):
            if cont is None:
                raise NestedGroup(self.base[alias])
            captured = f"(?<{name}>{self.silent(node.body)}{self._text_only(alias)})"
            self.captures.setdefault(name, captured)
            return f"{head}(?={captured}{cont})(?:{self.seq(node.body, cont)})"
        text = f"(?<{name}>{self.seq(node.body, cont)}{self._text_only(alias)})"
        self.captures.setdefault(name, text)
        return head + text

    def _text_only(self, alias: str) -> str:
        return "|" + AS_TEXT if self.base[alias] in self.as_text else ""

    def branch(self, node: Alternation, cont: str | None = "") -> str:
        plan = self.plans[node]
        if not plan.reset or self.quiet:
            return "(?:" + "|".join(self.seq(alt, cont) for alt in node.branches) + ")"
        head = self.pad_to(plan.order[0]) if plan.order else ""
        parts = []
        for alt in node.branches:
            present = {f for slots in self.plan_names(alt) for f in slots}
            self.pads.append((plan.order, present, [0]))
            text = self.seq(alt, cont)
            text += self.pad_rest()
            self.pads.pop()
            parts.append(text)
        for name in plan.order:
            self.advance(name)
        return head + "(?|" + "|".join(parts) + ")"

    def plan_names(self, nodes: Seq) -> list[list[str]]:
        """The slots of an alternative, as planned (no new plans)."""
        slots: list[list[str]] = []
        for node in nodes:
            if isinstance(node, Group):
                alias = self.kept(node.alias)
                if alias is not None:
                    slots.append([self.base[alias]])
                slots.extend(self.plan_names(node.body))
            elif isinstance(node, Alternation):
                plan = self.plans[node]
                if plan.reset:
                    slots.append(plan.order)
                else:
                    for sub in node.branches:
                        slots.extend(self.plan_names(sub))
            else:
                for sub in children(node):
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


def _pcre_class(node: CharClass) -> str:
    parts: list[str] = []
    for item in node.items:
        if isinstance(item, Char):
            parts.append(_pcre_char(item.code, in_class=True))
        elif isinstance(item, Range):
            parts.append(f"{_pcre_char(item.lo, in_class=True)}-{_pcre_char(item.hi, in_class=True)}")
        elif not item.negated:
            parts.append(_PCRE_CATEGORY[item.name])
        else:
            if node.negated or len(node.items) > 1:
                raise Inexpressible("a negated category inside a class")
            return f"[^{_PCRE_CATEGORY[item.name]}\\n]"
    if not parts:
        return "[^\\n]" if node.negated else NEVER
    if node.negated:
        return "[^" + "".join(parts) + "\\n]"
    return "[" + "".join(parts) + "]"
