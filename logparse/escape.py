"""Make text taken from logs safe to show: in a terminal, in HTML, in JSON lines.

Log lines, model names and even file names come from other people's machines. Printed raw, an
`ESC ] 0 ; … BEL` retitles the user's terminal, `ESC [ 2 J` clears it, a bidi override reorders
what they read, and a lone surrogate (from an undecodable file name) crashes the encoder. These
helpers show such characters as visible escapes (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import html
import json

# Unicode format characters that reorder or hide text (bidi embeddings, overrides and isolates,
# marks, line/paragraph separators, BOM / zero-width no-break space).
_FORMAT_CONTROLS = frozenset(
    [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)


def _is_unsafe(code: int, keep: frozenset[int]) -> bool:
    if code in keep:
        return False
    return code < 0x20 or 0x7F <= code <= 0x9F or code in _FORMAT_CONTROLS or 0xD800 <= code <= 0xDFFF


def _visible(code: int) -> str:
    if code in (0x0A, 0x0D):
        return "\\n" if code == 0x0A else "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _build_table(keep: frozenset[int]) -> dict[int, str]:
    codes = [*range(0x00, 0x20), *range(0x7F, 0xA0), *_FORMAT_CONTROLS, *range(0xD800, 0xE000)]
    return {c: _visible(c) for c in codes if _is_unsafe(c, keep)}


_TAB = frozenset({0x09})
_TAB_NL = frozenset({0x09, 0x0A})
_TABLE_ONE_LINE = _build_table(_TAB)
_TABLE_LINES = _build_table(_TAB_NL)
_JSON_TABLE = {c: f"\\u{c:04x}" for c in [*range(0x7F, 0xA0), *_FORMAT_CONTROLS, *range(0xD800, 0xE000)]}


def for_terminal(text: object, *, keep_newlines: bool = False) -> str:
    """`text` with every control character shown as an escape (`\\x1b`); tabs are kept.

    Newlines are escaped too unless `keep_newlines`, so one value cannot fake extra output lines.
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():  # fast path: no C0/C1 controls, format characters or surrogates
        return s
    return s.translate(_TABLE_LINES if keep_newlines else _TABLE_ONE_LINE)


def for_html(text: object) -> str:
    """`text` escaped for HTML element content and quoted attribute values; controls made visible."""
    return html.escape(for_terminal(text, keep_newlines=True), quote=True)


def json_default(value: object) -> object:
    """`json.dumps(default=...)` of logparse's JSON outputs: dates and times as ISO text, else `str`."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def json_line(value: object, **kwargs: object) -> str:
    """`json.dumps` that also escapes DEL, C1 and bidi characters (`ensure_ascii=False` keeps them).

    The result is the same JSON value; only characters a terminal could act on are written as
    `\\uXXXX`. Those characters occur only inside JSON strings, so the translation is safe.
    """
    text = json.dumps(value, **kwargs)  # type: ignore[arg-type]
    return text if text.isascii() else text.translate(_JSON_TABLE)


__all__ = ["for_html", "for_terminal", "json_default", "json_line"]
