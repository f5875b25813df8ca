"""Golden event files in the Pygments manner: `fixtures/<...>/<name>.events` holds one stable text line
per event of `<name>.log`, in line order. `pytest --update-goldens` rewrites them.

A line is `line_no<TAB>kind<TAB>rule<TAB>field=value ...`: the non-null columns of the event's table
in table order, `raw` and `engine` left out (the log and the detected engine say them), and the
derived unit columns (`logparse.store.units`, tested there: a printed value moved), strings
JSON-quoted, floats as `repr`, times ISO-8601. A log whose stamps lack a year or a date takes them
from the file's modification time (and a zone from the machine): goldens read a copy with a fixed
mtime, in UTC, so they do not change with the checkout's date or the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

import logparse
from logparse.grammar import load_grammar

LEFT_OUT = {"line_no", "kind", "rule", "raw", "engine"}
FIXED_MTIME = datetime.fromisoformat("2026-12-31T23:00:00+00:00").timestamp()


def value_text(value: Any) -> str:
    """One column value as stable text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def event_lines(tables: dict[str, pl.DataFrame]) -> list[str]:
    """The text line of each event of an ingest's tables, in line order."""
    derived = load_grammar().derived
    lines: list[tuple[int, str]] = []
    for kind, frame in tables.items():
        left_out = LEFT_OUT | {d.name for d in derived.get(kind, ())}
        for row in frame.iter_rows(named=True):
            fields = " ".join(
                f"{k}={value_text(v)}" for k, v in row.items() if k not in left_out and v is not None
            )
            lines.append(
                (row["line_no"], f"{row['line_no']}\t{kind}\t{row.get('rule') or '-'}\t{fields}".rstrip())
            )
    return [text for _, text in sorted(lines)]


def events_text(log: Path) -> str:
    """The golden text of one log: every event of its ingest, one line each."""
    with tempfile.TemporaryDirectory(prefix="logparse-golden-") as scratch:
        copy = Path(scratch) / log.name
        shutil.copyfile(log, copy)
        os.utime(copy, (FIXED_MTIME, FIXED_MTIME))
        tables = logparse.ingest(copy, tz="UTC").tables
    return "".join(line + "\n" for line in event_lines(tables))


def golden_path(log: Path) -> Path:
    return log.with_suffix(".events")
