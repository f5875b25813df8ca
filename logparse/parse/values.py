"""Captured text to typed values: the one conversion every rule's fields go through."""

from __future__ import annotations

import re
from typing import Any

from logparse.grammar import FieldType

_TRUE = {"true", "yes", "1", "on", "enabled"}
_FALSE = {"false", "no", "0", "off", "disabled", "none"}
NUMBER_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|nan|inf", re.ASCII)
# A number at the start of a stats value, then what follows it (its unit)
LEADING_NUMBER_RE = re.compile(
    r"(-?(?:[0-9][0-9,_]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|-?nan|-?inf)[ ]*(.*)\Z", re.ASCII | re.DOTALL
)
_DURATION_RE = re.compile(r"(?:([0-9]+):)?([0-9]+):([0-9]+(?:\.[0-9]+)?)", re.ASCII)
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def int64(value: int) -> int | None:
    """`value` if an Int64 column can hold it, else None (a 30-digit "count" is not a count)."""
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def convert(value: str, typ: FieldType) -> Any:
    """Convert a captured string to its field type; None when it cannot be read as that type.

    int: thousands separators dropped, a decimal truncated; float: separators and a trailing % dropped;
    bool: true/false/yes/no/on/off...; floats: every number in the text."""
    if typ == "str":
        return value
    text = value.strip(" \t")
    try:
        if typ == "int":
            cleaned = text.replace(",", "").replace("_", "")
            return int64(int(cleaned) if "." not in cleaned else int(float(cleaned)))
        if typ == "float":
            return float(text.replace(",", "").replace("_", "").rstrip("%"))
        if typ == "bool":
            low = text.lower()
            return True if low in _TRUE else False if low in _FALSE else None
        if typ == "floats":
            return [float(x) for x in NUMBER_RE.findall(text)]
    except (ValueError, OverflowError):
        return None
    return None


def derive(function: str, text: str) -> Any:
    """Apply a rule's `derive` function to a captured string (None if it cannot)."""
    if function == "count":
        return len(NUMBER_RE.findall(text))
    if function == "duration":
        m = _DURATION_RE.fullmatch(text.strip())
        if m is None:
            return None
        hours = int(m[1]) if m[1] else 0
        return hours * 3600 + int(m[2]) * 60 + float(m[3])
    return None
