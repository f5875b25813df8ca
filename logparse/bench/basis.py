"""Which statistic of a run judges each SLO at a basis, and where that statistic came from.

At the P90 basis TTFT (lower is better) is judged at its P90; a file without one is judged at
the nearest *stricter* percentile it has (P95, then P99: a pass there is a pass at P90, a fail is
not proven at P90), else not at all -- never at the mean. Per-user TPS (higher is better) is
judged at its P10, the pessimistic tail; a file with only the P90 of TPS (Cordatus) is judged at
that optimistic tail and flagged; a file with no TPS statistic but a P95 / P99 latency is judged
at n / that latency (the P5 / P1 of TPS for a fixed output length n), else not at all. At the
mean basis both are judged at their means.

A statistic is `printed` (the file's own figure), `per_request` (computed from the file's
per-request arrays, see readers/_per_request.py) or `derived` (by a formula, see derive.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from logparse.bench.derive import tokens_per_request

Basis = Literal["p90", "mean"]
BASES: tuple[Basis, ...] = ("p90", "mean")

MARK_OPTIMISTIC = "*"
MARK_STRICTER = "^"
MARK_PER_REQUEST = "#"
MARK_DERIVED = "~"

MARK_LEGEND: dict[str, str] = {
    MARK_OPTIMISTIC: "TPS judged at its optimistic P90 (90% of requests were slower); the file has no P10",
    MARK_STRICTER: "judged at a stricter percentile than the basis (P99 for a P90 TTFT): the file has"
    " none at the basis; a pass holds at the basis, a fail is not proven there",
    MARK_PER_REQUEST: "statistic computed from the file's per-request arrays (ttfts, itls, ...), not printed"
    " in it",
    MARK_DERIVED: "statistic derived, not measured: by formula (n / latency for a fixed output length n,"
    " see derive.py) or on a per-request latency of ttft + sum(itls) where the file has none",
}

SOURCE_DOCS: dict[str, str] = {
    "printed": "the file's own figure",
    "per_request": "computed from the file's per-request arrays (numpy-linear percentiles, successful only)",
    "derived": "derived by formula or on a ttft + sum(itls) latency: an estimate, not a measurement",
}

# (statistic, mark) in the order tried, per basis and metric
_TTFT_ORDER: dict[Basis, tuple[tuple[str, str], ...]] = {
    "p90": (("p90", ""), ("p95", MARK_STRICTER), ("p99", MARK_STRICTER)),
    "mean": (("mean", ""),),
}
_TPS_ORDER: dict[Basis, tuple[tuple[str, str], ...]] = {
    "p90": (("p10", ""), ("p90", MARK_OPTIMISTIC)),
    "mean": (("mean", ""),),
}
# TPS percentile n / latency percentile gives, for a fixed output length (a decreasing map)
_TPS_FROM_LATENCY = (("p95", "p5"), ("p99", "p1"))
MISSING: dict[Basis, dict[str, str]] = {
    "p90": {"ttft": "TTFT P90", "tps": "TPS P10"},
    "mean": {"ttft": "TTFT mean", "tps": "TPS mean"},
}


@dataclass(frozen=True)
class Pick:
    """The statistic an SLO is judged at: its name, value, source, cell marks and a note."""

    stat: str | None
    value: float | None
    source: str | None
    marks: str
    note: str | None


def _listed(rec: dict[str, Any], key: str) -> set[str]:
    return {column for column in (rec.get(key) or "").split(",") if column}


def source_of(rec: dict[str, Any], column: str) -> str:
    """'derived', 'per_request' or 'printed': where the value of `column` in `rec` came from."""
    if column in _listed(rec, "derived"):
        return "derived"
    return "per_request" if column in _listed(rec, "computed") else "printed"


def _source_mark(source: str) -> str:
    return {"derived": MARK_DERIVED, "per_request": MARK_PER_REQUEST}.get(source, "")


def _first(rec: dict[str, Any], prefix: str, order: tuple[tuple[str, str], ...]) -> Pick | None:
    for stat, mark in order:
        column = f"{prefix}_{stat}"
        value = rec.get(column)
        if value is not None:
            source = source_of(rec, column)
            return Pick(stat, float(value), source, mark + _source_mark(source), None)
    return None


def pick_ttft(rec: dict[str, Any], basis: Basis) -> Pick:
    """The TTFT statistic `rec` is judged at, at `basis`."""
    found = _first(rec, "ttft_ms", _TTFT_ORDER[basis])
    if found is None:
        return Pick(None, None, None, "", f"no {MISSING[basis]['ttft']} in the file")
    if MARK_STRICTER in found.marks:
        note = f"judged at TTFT {str(found.stat).upper()}: the file has no TTFT P90"
        return Pick(found.stat, found.value, found.source, found.marks, note)
    return found


def _tps_from_latency(rec: dict[str, Any]) -> Pick | None:
    n = tokens_per_request(rec)
    if n is None:
        return None
    for latency_stat, tps_stat in _TPS_FROM_LATENCY:
        latency = rec.get(f"latency_s_{latency_stat}")
        if latency:
            note = (
                f"judged at n / latency {latency_stat.upper()} (TPS {tps_stat.upper()} for a fixed output"
                " length): the file has no TPS P10 or P90"
            )
            return Pick(tps_stat, n / latency, "derived", MARK_STRICTER + MARK_DERIVED, note)
    return None


def pick_tps(rec: dict[str, Any], basis: Basis) -> Pick:
    """The per-user TPS statistic `rec` is judged at, at `basis`."""
    found = _first(rec, "tps_per_user", _TPS_ORDER[basis])
    if found is not None and MARK_OPTIMISTIC in found.marks:
        note = "judged at TPS P90, the optimistic tail: the file has no TPS P10"
        return Pick(found.stat, found.value, found.source, found.marks, note)
    if found is None and basis == "p90":
        found = _tps_from_latency(rec)
    if found is None:
        return Pick(None, None, None, "", f"no {MISSING[basis]['tps']} in the file")
    return found
