"""The re-wrap corpus: every labelled real row of `fixtures/rewrap/` inside every wrapper of
`envelopes.py`, what each wrapped line must parse to, and how a parse is checked against it.

What a wrapped line must give (what survives the wrapper):

* always: the row's `kind`, and each of the row's `fields` that the kind's schema declares (labels
  also carry notes such as `wrapper` or `unit_printed`, which are no event field); numbers equal
  to 1e-6 relative, lists item by item, the rest as printed;
* a WHOLE_LINE wrapper keeps the engine's envelope inside: `rank` and `pid` are the row's; `level`
  is the row's (the wrapper's own, e.g. a GCP severity, when the engine printed none); `ts` is the
  row's stamp, and the wrapper's stamp is `outer_ts` (or `ts` when the engine printed none); an
  exact wrapper stamp (zone or epoch) gives `time`, since no row prints an exact stamp itself;
  `task` is the wrapper's task label (srun, mpirun; no row prints one itself);
* a BODY wrapper replaces the engine's envelope: the engine's `rank` is gone (None), `pid` is the
  wrapper's own (a `%(process)d`), `level` is the level the wrapper printed, `ts` its stamp, and
  there is no `task`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from envelopes import BODY, PRINTS, WHOLE_LINE, instant_of

from logparse.grammar import load_grammar

ROOT = Path(__file__).resolve().parents[2]
ROWS_DIR = ROOT / "fixtures" / "rewrap"
ENGINES = ("vllm", "sglang")
EXACT_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.,]+(?:Z|[+-][0-9]{2}:?[0-9]{2})")


def rows(engine: str) -> list[dict[str, Any]]:
    """The labelled real rows of one engine."""
    path = ROWS_DIR / f"{engine}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def wrappers() -> dict[str, tuple[str, Callable[..., str]]]:
    """Every wrapper by name: (group, function)."""
    found: dict[str, tuple[str, Callable[..., str]]] = {n: ("WHOLE_LINE", f) for n, f in WHOLE_LINE.items()}
    found.update({n: ("BODY", f) for n, f in BODY.items()})
    return found


def body_level(row: dict[str, Any]) -> str:
    """The level a BODY wrapper prints for a row: the engine's, INFO when it printed none."""
    return row["level"] or "INFO"


def wrap(name: str, row: dict[str, Any]) -> str:
    """The row inside wrapper `name`."""
    group, func = wrappers()[name]
    return func(row["line"]) if group == "WHOLE_LINE" else func(row["body"], body_level(row))


@dataclass(frozen=True)
class Expected:
    """What a wrapped row must parse to (see the module docstring); `outer_ts` and `time` are
    checked only when not None."""

    kind: str
    fields: dict[str, Any]
    ts: str | None
    rank: str | None
    pid: int | None
    level: str | None
    task: str | None
    outer_ts: str | None = None
    time: Any = None


def expected(name: str, row: dict[str, Any]) -> Expected:
    """The parse a wrapped row must give."""
    group, _ = wrappers()[name]
    prints = PRINTS[name]
    schema = load_grammar().schema(row["kind"])
    fields = {k: v for k, v in row["fields"].items() if k in schema}
    if group == "BODY":
        return Expected(row["kind"], fields, prints.stamp, None, prints.pid, body_level(row), None)
    assert not EXACT_STAMP.search(row["line"]), f"row prints an exact stamp itself: {row['line'][:80]}"
    outer = prints.stamp if row["ts"] is not None else None
    return Expected(
        row["kind"],
        fields,
        row["ts"] or prints.stamp,
        row["rank"],
        row["pid"],
        row["level"] or prints.level,
        prints.task,
        outer_ts=outer,
        time=instant_of(name),
    )


def same_value(want: Any, got: Any) -> bool:
    """A field's value as the label gives it (numbers to 1e-6 relative)."""
    if got is None or (isinstance(got, float) and math.isnan(got)):
        return want is None
    if isinstance(want, bool) or isinstance(got, bool):
        return str(want).lower() == str(got).lower()
    if isinstance(want, (int, float)):
        return isinstance(got, (int, float)) and math.isclose(
            float(want), float(got), rel_tol=1e-6, abs_tol=1e-9
        )
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same_value, want, got))
    return str(want) == str(got)


def mismatches(want: Expected, event: dict[str, Any] | None) -> list[str]:
    """What differs between the expectation and an event (empty: the line is right)."""
    if event is None or event["kind"] != want.kind:
        return [f"kind {want.kind} -> {event['kind'] if event else None}"]
    out = [
        f"{k} {v!r} -> {event.get(k)!r}" for k, v in want.fields.items() if not same_value(v, event.get(k))
    ]
    for key in ("ts", "rank", "pid", "level", "task"):
        if event.get(key) != getattr(want, key):
            out.append(f"{key} {getattr(want, key)!r} -> {event.get(key)!r}")
    if want.outer_ts is not None and event.get("outer_ts") != want.outer_ts:
        out.append(f"outer_ts {want.outer_ts!r} -> {event.get('outer_ts')!r}")
    if want.time is not None and event.get("time") != want.time:
        out.append(f"time {want.time} -> {event.get('time')}")
    return out


def events_by_line(tables: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Every event of an ingest's tables by line number, with its `kind`."""
    found: dict[int, dict[str, Any]] = {}
    for kind, table in tables.items():
        frame = table.collect() if isinstance(table, pl.LazyFrame) else table
        for event in frame.to_dicts():
            event["kind"] = kind
            found[int(event["line_no"])] = event
    return found
