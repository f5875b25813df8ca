"""JSON log records: docker's json-file, log shippers (Loki, CloudWatch, GCP, Vector, Fluent Bit),
journald's JSON, structured python loggers. The message text is read out of the record with the
record's own time, level and process, as the grammar's `[container]` keys name them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from logparse.grammar import Container


@dataclass(frozen=True)
class Record:
    """What a JSON record says: its message and, when present, time, level, pid and process name."""

    message: str
    ts: str | None
    level: str | None
    pid: int | None
    rank: str | None


def _raise(value: str) -> Any:
    raise ValueError(f"not JSON: {value}")


MAX_JSON_DEPTH = 64  # JSON nested deeper than this is not read as a record (the core refuses it too)


def json_depth(text: str) -> int:
    """The deepest nesting of objects and arrays in `text`, outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth = max(0, depth - 1)
    return deepest


def read_record(text: str, keys: Container) -> Record | None:
    """The record in `text` (a whole JSON object), or None when it holds no message string.

    Numbers keep their printed text (an epoch time is read as printed); NaN and Infinity, which
    JSON does not allow, make the text not a record; so does a message with lone surrogates, and
    nesting deeper than `MAX_JSON_DEPTH`."""
    if not (text.startswith("{") and text.endswith("}")) or json_depth(text) > MAX_JSON_DEPTH:
        return None
    try:
        obj = json.loads(text, parse_int=str, parse_float=str, parse_constant=_raise)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    message = _first(obj, keys.message, want_str=True)
    if not isinstance(message, str) or _has_surrogates(message):
        return None
    message = message.removesuffix("\n").removesuffix("\r")
    ts = _first(obj, keys.time)
    level = _first(obj, keys.level)
    pid = _first(obj, keys.pid)
    rank = _first(obj, keys.rank, want_str=True)
    return Record(
        message=message,
        ts=_text(ts),
        level=_text(level),
        pid=int(pid) if isinstance(pid, str) and pid.isascii() and pid.isdigit() and len(pid) <= 18 else None,
        rank=rank if isinstance(rank, str) and not _has_surrogates(rank) else None,
    )


def _first(obj: dict[str, Any], names: tuple[str, ...], *, want_str: bool = False) -> Any:
    for name in names:
        value = _lookup(obj, name)
        if value is None or isinstance(value, (dict, list, bool)):
            continue
        if want_str and not isinstance(value, str):
            continue
        return value
    return None


def _lookup(obj: dict[str, Any], name: str) -> Any:
    if name in obj:
        return obj[name]
    node: Any = obj
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _text(value: Any) -> str | None:
    if not isinstance(value, str) or not value or _has_surrogates(value):
        return None
    return value


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
