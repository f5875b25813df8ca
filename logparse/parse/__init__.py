"""The reference parser: one line of text into exactly one event (a dict), from the message out.

It is the oracle: the compiled core (`logparse.engine`) must give the same events, value for value.
"""

from __future__ import annotations

from logparse.parse.line import COMMON_KEYS, PARTIAL_RULE, LineParser, Reading, event_fields
from logparse.parse.stamps import StampParts, read_stamp
from logparse.parse.text import MATCH_LIMIT, strip_ansi
from logparse.parse.values import convert, int64

__all__ = [
    "COMMON_KEYS",
    "MATCH_LIMIT",
    "PARTIAL_RULE",
    "LineParser",
    "Reading",
    "StampParts",
    "convert",
    "event_fields",
    "int64",
    "read_stamp",
    "strip_ansi",
]
