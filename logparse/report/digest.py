"""Every diagnostic of the report as findings: one per severity and code, the places it was seen
(a run, a client configuration, the report itself), each place with the anchor of its evidence;
ranked errors first, then warnings, then information; within one severity, findings a chart shows
first, then those seen in more places."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from logparse.report.build import Report

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
SEVERITY_TITLES = {"error": "Errors", "warning": "Warnings", "info": "Information"}

# The chart of a run that shows a diagnostic's evidence (its id is `<family>-<run slug>`).
EVIDENCE_CHART = {
    "oom_retries": "timeline",
    "oom_fatal": "timeline",
    "runtime_jit": "timeline",
    "preemptions_in_phase": "timeline",
    "short_stable_window": "timeline",
    "context_contradicts_input": "timeline",
    "input_estimates_disagree": "timeline",
    "spec_acceptance_collapse": "spec-accept",
    "kv_pool_below_context": "kv",
    "concurrency_above_kv_capacity": "kv",
    "max_running_requests_reduced": "kv",
    "impossible_value": "kv",
    "kv_cache_overcommitted": "memory",
    "start_not_ready": "coldstart",
    "kv_profile_negative": "coldstart",
}
BENCH_TABLE = "benchmark consistency checks"


def slug(text: str) -> str:
    """A file-name- and anchor-safe id: lower case, runs of other characters as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


def table_anchor(name: str) -> str:
    """The anchor of a table of the Tables section."""
    return f"table-{slug(name)}"


def diagnostic_anchor(run: str, code: str) -> str:
    """The anchor of a diagnostic in a run card's list."""
    return f"diag-{slug(run)}-{slug(code)}"


@dataclass(frozen=True)
class Place:
    """Where a finding was seen, what it said there, and the anchor of its evidence."""

    where: str
    message: str
    evidence: str
    charted: bool = False  # the evidence is a chart (else a list entry or a table)


@dataclass
class Finding:
    """One diagnostic code at one severity, with every place it was seen (first seen first)."""

    severity: str
    code: str
    places: list[Place] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        """The finding's anchor in the Diagnostics section."""
        return f"finding-{self.severity}-{slug(self.code)}"


def findings(report: Report) -> list[Finding]:
    """Every diagnostic, client consistency check and note of `report`, as ranked findings."""
    chart_ids = {c.id for c in report.charts}
    seen: dict[tuple[str, str], Finding] = {}

    def add(severity: str, code: str, place: Place) -> None:
        seen.setdefault((severity, code), Finding(severity, code)).places.append(place)

    for run in report.runs:
        if run.analysis is None:
            continue
        for row in run.analysis.diagnostics.iter_rows(named=True):
            chart = f"{EVIDENCE_CHART.get(row['code'], '')}-{slug(run.name)}"
            charted = chart in chart_ids
            evidence = chart if charted else diagnostic_anchor(run.name, row["code"])
            add(row["severity"], row["code"], Place(run.name, row["message"], evidence, charted))
    if report.bench is not None:
        for row in report.bench.checks.filter(pl.col("severity") != "ok").iter_rows(named=True):
            where = row["config"] + (f" c={row['concurrency']}" if row.get("concurrency") is not None else "")
            place = Place(f"client: {where}", row["message"], table_anchor(BENCH_TABLE))
            add(row["severity"], row["code"], place)
    run_names = {r.name for r in report.runs}
    for note in report.notes:
        evidence = f"run-{slug(note.section)}" if note.section in run_names else slug(note.section)
        add(note.severity, "report", Place(note.section, note.message, evidence))
    return ranked(list(seen.values()))


def ranked(found: Sequence[Finding]) -> list[Finding]:
    """Errors, then warnings, then information; within one severity, the findings a chart shows
    (they qualify a measured figure), then those seen in more places, then the first seen."""
    return sorted(
        found,
        key=lambda f: (
            SEVERITY_ORDER.get(f.severity, 9),
            not any(p.charted for p in f.places),
            -len(f.places),
        ),
    )


def by_severity(found: Sequence[Finding]) -> dict[str, list[Finding]]:
    """The findings per severity, in `SEVERITY_ORDER`."""
    out: dict[str, list[Finding]] = {}
    for f in ranked(found):
        out.setdefault(f.severity, []).append(f)
    return out


def top(found: Sequence[Finding], *, limit: int = 6) -> list[Finding]:
    """The findings the first screen lists: errors and warnings, at most `limit`."""
    return [f for f in ranked(found) if f.severity in ("error", "warning")][:limit]
