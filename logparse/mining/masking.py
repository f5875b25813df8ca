"""Mask the variable parts of a body (numbers, hex, paths, ids, addresses, times) before clustering.

A masked body is a list of *tokens* separated by whitespace; a token is a list of pieces, each
literal text or a `Masked` value. Masks are data, as in Drain3's `[MASKING]` section: a name, the
regex that finds the value, the regex a suggested rule uses to capture it, and its field type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from logparse.grammar import FieldType


@dataclass(frozen=True)
class Mask:
    """One kind of variable value."""

    name: str
    find: str  # with look-arounds, to find it in free text
    capture: str  # to capture it in a suggested rule (the literal context does the rest)
    type: FieldType = "str"


_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIME = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?"
_TS = (
    rf"{_DATE}(?:[T ]{_TIME}(?:Z|[+-][0-9]{{2}}:?[0-9]{{2}})?)?"
    rf"|[0-9]{{2}}-[0-9]{{2}}[ ]{_TIME}|{_TIME}"
)
# 0x..., or 8+ hex digits of one case holding both a digit and a letter (not a word, not a count)
_HEX = (
    r"0x[0-9a-fA-F]+|(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}"
    r"|(?=[0-9A-F]*[0-9])(?=[0-9A-F]*[A-F])[0-9A-F]{8,}"
)
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_REQ = r"(?:chatcmpl|cmpl|req|request|embd|rid|gen|score|tokenize|batch)[-_][0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*"
_IP = r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?::[0-9]{1,5})?"
_URL = r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\x27\x22<>]+"
_PATH = r"(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"
_VERSION = r"v?[0-9]+(?:\.[0-9]+){2,}(?:[.+-][0-9A-Za-z]+)*"
_INT = r"-?[0-9]+"
_FLOAT = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"

# Order matters: the first alternative that matches at a position wins.
MASKS: tuple[Mask, ...] = (
    Mask("TS", rf"(?<![0-9])(?:{_TS})(?![0-9])", f"(?:{_TS})"),
    Mask("UUID", rf"(?<![0-9A-Za-z])(?:{_UUID})(?![0-9A-Za-z])", _UUID),
    Mask("ID", rf"(?<![0-9A-Za-z_-])(?:{_REQ})", _REQ),
    Mask("URL", rf"(?<![\w.])(?:{_URL})", _URL),
    Mask("IP", rf"(?<![0-9.])(?:{_IP})(?![0-9.])", _IP),
    Mask("PATH", rf"(?<![\w/.~])(?:{_PATH})", _PATH),
    Mask("HEX", rf"(?<![0-9A-Za-z])(?:{_HEX})(?![0-9A-Za-z])", r"(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{8,})"),
    Mask("VERSION", rf"(?<![\w.])(?:{_VERSION})", _VERSION),
    Mask("NUM", rf"(?<![\w.])(?:{_FLOAT})", _FLOAT, "float"),
)
_BY_NAME = {m.name: m for m in MASKS}
_FINDER = regex.compile("|".join(f"(?P<{m.name}>{m.find})" for m in MASKS), regex.ASCII | regex.V0)
_SPACE = regex.compile(r"(\s+)", regex.ASCII)
_DIGITS = regex.compile(r"[0-9]", regex.ASCII)
MAX_INT_DIGITS = 18  # beyond this an "int" is an id, not a count: kept as a string


@dataclass(frozen=True)
class Masked:
    """A variable value found in a body."""

    mask: str
    text: str

    @property
    def key(self) -> str:
        """How the value shows in a template."""
        return f"<{self.mask}>"

    def field_type(self) -> FieldType:
        """`int` for plain digit runs, `float` for other numbers, else the mask's type."""
        if self.mask != "NUM":
            return _BY_NAME[self.mask].type
        digits = self.text.lstrip("-")
        if digits.isdigit():
            return "int" if len(digits) <= MAX_INT_DIGITS else "str"
        return "float"

    def capture(self, field_type: FieldType) -> str:
        """Regex that captures this value (and others like it) in a suggested rule."""
        if self.mask == "NUM":
            return {"int": _INT, "float": _FLOAT}.get(field_type, r"[0-9]+")
        return _BY_NAME[self.mask].capture


Piece = str | Masked
Token = tuple[Piece, ...]


@dataclass(frozen=True)
class MaskedBody:
    """A body as tokens, with the whitespace around them (`spaces[i]` precedes `tokens[i]`)."""

    tokens: tuple[Token, ...]
    spaces: tuple[str, ...]  # len(tokens) + 1: the last one is trailing whitespace

    def keys(self) -> tuple[str, ...]:
        """The tokens as template strings (`<NUM>,`)."""
        return tuple(token_key(t) for t in self.tokens)


def token_key(token: Sequence[Piece]) -> str:
    """A token as template text: literal text, masked values as `<NAME>`."""
    return "".join(p if isinstance(p, str) else p.key for p in token)


def has_variable(key: str) -> bool:
    """Whether a template token holds a masked value or a digit (not a good tree key)."""
    return "<" in key or _DIGITS.search(key) is not None


def mask_body(body: str) -> MaskedBody:
    """Split `body` into masked tokens."""
    pieces: list[Piece] = []
    pos = 0
    for m in _FINDER.finditer(body):
        if m.start() > pos:
            pieces.append(body[pos : m.start()])
        pieces.append(Masked(str(m.lastgroup), m.group()))
        pos = m.end()
    if pos < len(body):
        pieces.append(body[pos:])
    tokens: list[Token] = []
    spaces: list[str] = []
    current: list[Piece] = []
    gap = ""
    for piece in pieces:
        if isinstance(piece, Masked):
            current.append(piece)
            continue
        for i, part in enumerate(_SPACE.split(piece)):
            if i % 2:  # whitespace: ends the current token
                if current:
                    tokens.append(tuple(current))
                    spaces.append(gap)
                    current, gap = [], ""
                gap += part
            elif part:
                current.append(part)
    if current:
        tokens.append(tuple(current))
        spaces.append(gap)
        gap = ""
    spaces.append(gap)
    return MaskedBody(tuple(tokens), tuple(spaces))
