"""The fleet's per-run result table: as text for a terminal, as plain data for JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from logparse.analysis.text import render_table
from logparse.escape import for_terminal
from logparse.fleet.task import DONE, FAILED, NOT_RUN, SKIPPED, RunResult


def results_json(results: Sequence[RunResult]) -> list[dict[str, Any]]:
    """One object per run (`RunResult.as_dict`), in the order of the runs."""
    return [r.as_dict() for r in results]


def render_results(results: Sequence[RunResult], out: str) -> str:
    """The table (run, status, engine, lines, coverage, MB, seconds, note), a totals line, then
    each failure and reading problem in full."""
    body, notes = [], []
    for r in results:
        note = r.error or ("; ".join(r.problems) if r.problems else "")
        short = "-" if not note else ("input damaged" if r.status in (DONE, SKIPPED) else r.cause or "failed")
        body.append(
            [
                r.run,
                r.status,
                r.engine or "-",
                "-" if r.lines is None else f"{r.lines:,}",
                "-" if r.coverage is None else f"{r.coverage:.1%}",
                "-" if r.bytes is None else f"{r.bytes / 1e6:,.1f}",
                "-" if r.seconds is None or r.status == SKIPPED else f"{r.seconds:,.1f}",
                short,
            ]
        )
        if note:
            notes.append(f"{r.run}: {note}")
    table = render_table(
        [[for_terminal(c) for c in row] for row in body],
        ["run", "status", "engine", "lines", "coverage", "MB", "s", "problems"],
        align="lllrrrrl",
    )
    count = {s: sum(r.status == s for r in results) for s in (DONE, SKIPPED, FAILED, NOT_RUN)}
    totals = (
        f"{for_terminal(out)}: {len(results)} runs: {count[DONE]} written, {count[SKIPPED]} already complete "
        f"(skipped), {count[FAILED]} failed" + (f", {count[NOT_RUN]} not started" if count[NOT_RUN] else "")
    )
    return "\n".join([table, "", totals, *([""] + [for_terminal(n) for n in notes] if notes else [])])


__all__ = ["render_results", "results_json"]
