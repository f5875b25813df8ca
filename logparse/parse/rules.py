"""Rules compiled for matching: a message rule's regex read whole or searched for, a stats rule's
title and pairs. Both give the fields of one event (constants, captures, templates, derived)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import regex

from logparse.grammar import REGEX_FLAGS, FieldType, Grammar, Rule, StatsRule
from logparse.parse.stats import StatsReader, first_key_positions, read_pairs
from logparse.parse.values import convert, derive

# A message found by searching starts the line or follows a character that cannot end a word.
SEARCH_HEAD = r"(?:^|[^A-Za-z0-9_])(?P<__msg>"
SEARCH_TAIL = r")\Z"
MESSAGE_GROUP = "__msg"
_LEADING_FLAGS = re.compile(r"\A\(\?([aiLmsux]+)\)")
_FLAG_BITS = {
    "i": regex.IGNORECASE,
    "m": regex.MULTILINE,
    "s": regex.DOTALL,
    "x": regex.VERBOSE,
    "a": regex.ASCII,
    "u": regex.UNICODE,
    "L": regex.LOCALE,
}
_TEMPLATE_FIELD = re.compile(r"\{(\w+)\}")
Fields = dict[str, Any]


def split_flags(pattern: str) -> tuple[int, str]:
    """A pattern's leading inline flags `(?x)` as flag bits, and the rest of the pattern."""
    m = _LEADING_FLAGS.match(pattern)
    if m is None:
        return 0, pattern
    bits = 0
    for letter in m.group(1):
        bits |= _FLAG_BITS[letter]
    return bits, pattern[m.end() :]


def search_pattern(pattern: str) -> regex.Pattern[str]:
    """`pattern` as a search for a message that ends the text (see `SEARCH_HEAD`)."""
    flags, inner = split_flags(pattern)
    return regex.compile(SEARCH_HEAD + inner + SEARCH_TAIL, REGEX_FLAGS | flags)


def fast_matcher(pattern: regex.Pattern[str]) -> re.Pattern[str] | regex.Pattern[str]:
    """The same pattern compiled with the stdlib `re` (3x faster) when it accepts it.

    Patterns using what only `regex` offers (duplicate group names) stay as they are."""
    try:
        return re.compile(pattern.pattern, re.ASCII)
    except (re.error, ValueError):
        return pattern


class RegexRule:
    """A message rule: its regex fullmatched against the message, or searched for in a line."""

    def __init__(self, rule: Rule, grammar: Grammar) -> None:
        self.rule = rule
        self.types: dict[str, FieldType] = {f: grammar.field_type(rule, f) for f in rule.field_names()}

    # Compiled on first use: most rules never meet a line in a short log or in engine detection,
    # and compiling every rule's search pattern is most of a small ingest's time.
    @functools.cached_property
    def full(self) -> re.Pattern[str] | regex.Pattern[str]:
        """The rule's regex, to fullmatch a message with (see `fast_matcher`)."""
        return fast_matcher(self.rule.regex)

    @functools.cached_property
    def search_regex(self) -> regex.Pattern[str]:
        """The rule's regex as a search for a message ending a line (see `search_pattern`)."""
        return search_pattern(self.rule.pattern)

    def allows_text(self, text: str) -> bool:
        """Whether the rule may apply to `text` at all: its anchors are in it, no `unless` string is."""
        rule = self.rule
        return all(a in text for a in rule.anchors) and not any(u in text for u in rule.unless)

    def allows_level(self, level: str | None) -> bool:
        """Whether the rule takes lines of this level."""
        return self.rule.levels is None or (level or "") in self.rule.levels

    def match_body(self, body: str) -> Fields | None:
        """Fields of the rule on a whole message, or None."""
        m = self.full.fullmatch(body)
        return None if m is None else self.fields(m.groupdict(), m.group, body)

    def search(self, text: str) -> tuple[int, Fields] | None:
        """(start of the message, fields) of the leftmost message of this rule that ends `text`."""
        m = self.search_regex.search(text)
        if m is None:
            return None
        groups = {k: v for k, v in m.groupdict().items() if k != MESSAGE_GROUP}
        start = m.start(MESSAGE_GROUP)
        return start, self.fields(groups, m.group, text[start:])

    def fields(self, groups: dict[str, str | None], group: Callable[[str], Any], message: str) -> Fields:
        rule, types = self.rule, self.types
        fields: Fields = dict(rule.constants)
        for name, value in groups.items():
            if value is None or name not in types:
                continue
            fields[name] = convert(value, types[name])
        for pattern in rule.find:
            found = pattern.search(message)
            if found is None:
                continue
            for name, value in found.groupdict().items():
                if value is not None and name in types and fields.get(name) is None:
                    fields[name] = convert(value, types[name])
        for name, template in rule.templates.items():
            fields[name] = _TEMPLATE_FIELD.sub(lambda t: _text(fields.get(t[1])), template).rstrip(": ")
        for name, (function, source) in rule.derive.items():
            captured = group(source)
            if captured is not None:
                value = derive(function, captured)
                fields[name] = None if value is None else convert(str(value), types[name])
        return fields


class PairsRule:
    """A stats rule: a title, then `key: value` pairs beginning at one of its first keys."""

    def __init__(self, rule: StatsRule, grammar: Grammar) -> None:
        self.rule = rule
        self.reader = StatsReader(rule, lambda name: grammar.field_type(rule, name))
        self.title = rule.title_regex
        self.search_title = search_pattern(rule.title)

    def allows_text(self, text: str) -> bool:
        """Whether one of the first keys is in `text`."""
        return any(key + ": " in text for key in self.rule.first)

    def allows_level(self, level: str | None) -> bool:
        """Whether the rule takes lines of this level."""
        return self.rule.levels is None or (level or "") in self.rule.levels

    def match_body(self, body: str) -> Fields | None:
        for at in first_key_positions(body, self.rule.first):
            title = self.title.fullmatch(body, 0, at)
            if title is not None:
                got = self._pairs(body[at:], title)
                if got is not None:
                    return got
        return None

    def search(self, text: str) -> tuple[int, Fields] | None:
        for at in first_key_positions(text, self.rule.first):
            title = self.search_title.search(text, 0, at)
            if title is not None:
                got = self._pairs(text[at:], title)
                if got is not None:
                    return title.start(MESSAGE_GROUP), got
        return None

    def _pairs(self, text: str, title: regex.Match[str]) -> Fields | None:
        pairs = read_pairs(text)
        if pairs is None:
            return None
        read = self.reader.read(pairs, title)
        if read is None:
            return None
        fields, extra = read
        fields.pop(MESSAGE_GROUP, None)
        if extra:
            fields["extra"] = extra
        return fields


def _text(value: Any) -> str:
    return "" if value is None else str(value)


AnyMatcher = RegexRule | PairsRule


def matcher_for(rule: Rule | StatsRule, grammar: Grammar) -> AnyMatcher:
    """The matcher of a rule of either form."""
    return PairsRule(rule, grammar) if isinstance(rule, StatsRule) else RegexRule(rule, grammar)
