"""Stats messages read as what they are: a title, then `key: value` pairs.

The pairs are split at ", "; a piece without a key separator continues the value before it (so
`#token: full=11179, swa=4000` and `Per-position acceptance rate: 0.90, 0.81` keep their commas).
Trailing blanks, commas and periods of the message are not part of the last value. Each key is
looked up in the rule's vocabulary (exact keys first, then key patterns); a known key's value is read
into its field by the field's type (a number may carry one of the key's units) or by the key's value
regex. Unknown keys, values that do not read and second values for a field are kept in `extra`.
A line cut short ends in a key without its value (`Waiting: 0 reqs, GPU`): when the last value does
not read as a whole, its part before the keyless tail is tried, and the tail is kept in `extra` as a
key with an empty value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import regex

from logparse.grammar import FieldType, StatsKey, StatsRule
from logparse.parse.values import LEADING_NUMBER_RE, convert

PAIR_SEPARATOR = ", "
KEY_SEPARATOR = ": "
TRAILING = " \t,."

Pairs = list[tuple[str, str]]


def read_pairs(text: str) -> Pairs | None:
    """The `key: value` pairs of `text`, or None when it does not begin with a key."""
    pairs: Pairs = []
    for piece in text.rstrip(TRAILING).split(PAIR_SEPARATOR):
        cut = piece.find(KEY_SEPARATOR)
        if cut > 0:
            pairs.append((piece[:cut], piece[cut + len(KEY_SEPARATOR) :]))
        elif pairs:
            key, value = pairs[-1]
            pairs[-1] = (key, value + PAIR_SEPARATOR + piece)
        else:
            return None
    return pairs


def first_key_positions(text: str, first: tuple[str, ...]) -> list[int]:
    """Every position where one of the `first` keys (with its separator) begins, in order."""
    found: set[int] = set()
    for key in first:
        needle = key + KEY_SEPARATOR
        at = text.find(needle)
        while at >= 0:
            found.add(at)
            at = text.find(needle, at + 1)
    return sorted(found)


class StatsReader:
    """Reads the pairs of one stats rule into fields. `field_type(name)` gives a field's type."""

    def __init__(self, rule: StatsRule, field_type: Callable[[str], FieldType]) -> None:
        self.rule = rule
        self.field_type = field_type

    def entry_for(self, key: str) -> tuple[StatsKey, regex.Match[str] | None] | None:
        """The vocabulary entry of `key` (and the key pattern's match), or None."""
        entry = self.rule.keys.get(key)
        if entry is not None:
            return entry, None
        for candidate in self.rule.key_patterns:
            assert candidate.pattern is not None
            m = candidate.pattern.fullmatch(key)
            if m is not None:
                return candidate, m
        return None

    def read(
        self, pairs: Pairs, title: regex.Match[str] | None
    ) -> tuple[dict[str, Any], list[tuple[str, str]]] | None:
        """Fields and extra pairs of a line, or None when a required key is missing or an `unless`
        key is present."""
        present = {key for key, _ in pairs}
        if any(key not in present for key in self.rule.require) or any(
            key in present for key in self.rule.unless
        ):
            return None
        fields: dict[str, Any] = dict(self.rule.constants)
        from_line: set[str] = set()
        if title is not None:
            for name, value in _named(title):
                fields[name] = convert(value, self.field_type(name))
                from_line.add(name)
        extra: list[tuple[str, str]] = []
        last = len(pairs) - 1
        for i, (key, whole) in enumerate(pairs):
            found = self.entry_for(key)
            got = None if found is None else self.value_fields(found[0], whole, found[1])
            cut = ""
            if got is None and found is not None and i == last and PAIR_SEPARATOR in whole:
                head, tail = whole.split(PAIR_SEPARATOR, 1)
                got = self.value_fields(found[0], head, found[1])
                cut = tail if got is not None else ""
            if got is None or any(name in from_line for name in got):
                extra.append((key, whole))
                continue
            fields.update(got)
            from_line.update(got)
            if cut:
                extra.append((cut, ""))
        return fields, extra

    def value_fields(
        self, entry: StatsKey, value: str, key_match: regex.Match[str] | None
    ) -> dict[str, Any] | None:
        """The fields one pair gives, or None when its value does not read."""
        out: dict[str, Any] = {}
        if key_match is not None:
            for name, text in _named(key_match):
                out[name] = convert(text, self.field_type(name))
        if entry.value is not None:
            m = entry.value.fullmatch(value)
            if m is None:
                return None
            for name, text in _named(m):
                out[name] = convert(text, self.field_type(name))
        if entry.field is not None:
            typed = self.typed_value(value, self.field_type(entry.field), entry.units)
            if typed is None:
                return None
            out[entry.field] = typed
        return out

    @staticmethod
    def typed_value(value: str, typ: FieldType, units: tuple[str, ...]) -> Any:
        """`value` read as `typ`; a number may be followed by one of `units`."""
        if typ in ("int", "float"):
            m = LEADING_NUMBER_RE.fullmatch(value)
            if m is None or (m.group(2) and m.group(2) not in units):
                return None
            return convert(m.group(1), typ)
        return convert(value, typ)


def _named(m: regex.Match[str]) -> Iterator[tuple[str, str]]:
    """Named groups of a match that captured, without private ones (`_x`)."""
    for name, text in m.groupdict().items():
        if text is not None and not name.startswith("_"):
            yield name, text
