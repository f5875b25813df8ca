"""Plain-text rendering: aligned tables and number formats for the terminal."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any


def fmt(value: Any, digits: int = 1, *, unit: str = "") -> str:
    """A number with thousands separators and `digits` decimals; `-` for None."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        text = f"{value:,}"
    elif isinstance(value, float):
        text = f"{value:,.{digits}f}"
    elif isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
    else:
        text = str(value)
    return f"{text} {unit}".rstrip() if unit else text


# `TimeFacts.inferred_from` when dates were guessed: the file may have been copied or touched since.
GUESSED_DATE_SOURCES = ("the file's modification time", "today (stdin has no mtime)")
GUESSED_DATE = "?"


def date_mark(times: Mapping[str, Any] | None, *, year_shown: bool = True) -> str:
    """`?` when dates shown were taken from the file's modification time (or today's date, read
    from stdin) rather than printed: a year (when `year_shown`) or a whole date; else ``""``.

    >>> date_mark({"inferred_from": "the file's modification time", "year_inferred": 5})
    '?'
    >>> date_mark({"inferred_from": "the file's modification time", "year_inferred": 5}, year_shown=False)
    ''
    """
    if not times or times.get("inferred_from") not in GUESSED_DATE_SOURCES:
        return ""
    guessed = times.get("date_inferred") or (year_shown and times.get("year_inferred"))
    return GUESSED_DATE if guessed else ""


def n_text(n: object) -> str:
    """`N=10`, or `N unknown` when the concurrency is not known (never `N=None`).

    >>> n_text(10), n_text(None)
    ('N=10', 'N unknown')
    """
    return "N unknown" if n is None else f"N={n}"


def tokens_label(tokens: int | None, *, estimated: bool = False) -> str:
    """`64K` for 65,536, `195K` for 200,000; prefixed `~` when estimated."""
    if tokens is None:
        return "-"
    if tokens >= 1024:
        base = 1024 if tokens % 1024 == 0 or abs(tokens / 1024 - round(tokens / 1024)) < 0.02 else 1000
        text = f"{tokens / base:.0f}K"
    else:
        text = str(tokens)
    return ("~" if estimated else "") + text


def render_table(
    rows: Sequence[Sequence[str]],
    headers: Sequence[str] | None,
    *,
    align: str | None = None,
    indent: str = "",
) -> str:
    """Columns padded to their widest cell; `align` is one `l`/`r` per column (default: l then r).

    With `headers` None the table has no header and rule lines.
    """
    ncol = len(headers) if headers is not None else (len(rows[0]) if rows else 0)
    align = align or "l" + "r" * (ncol - 1)
    cells = ([list(headers)] if headers is not None else []) + [list(r) for r in rows]
    widths = [max((len(r[i]) for r in cells), default=0) for i in range(ncol)]

    def line(row: Sequence[str]) -> str:
        out = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align)]
        return (indent + "  ".join(out)).rstrip()

    head = [line(headers), line(["-" * w for w in widths])] if headers is not None else []
    return "\n".join([*head, *(line(r) for r in rows)])
