"""`logparse gate`: did the candidate run regress against the baseline runs?

Each side is a server log (or its tables, or one run of a dataset; a dataset of several runs
gives several baselines) or a client result file. The sides are first checked to be comparable
(`comparable`), then every metric is judged against the baselines' median within its bound
(`judge`). Exit status: 0 every metric holds, 1 a metric regressed, 2 the runs are not
comparable or a metric is missing on a side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logparse.errors import InputError
from logparse.gate.comparable import compare_sides
from logparse.gate.judge import Judgement, judge
from logparse.gate.sides import Side, read_sides
from logparse.gate.thresholds import Thresholds

HOLDS, REGRESSED, NOT_COMPARABLE, INCOMPLETE = 0, 1, 2, 2


@dataclass
class GateResult:
    """The sides, what keeps them from being compared, and every judgement."""

    baselines: list[Side]
    candidate: Side
    thresholds: Thresholds
    problems: list[str] = field(default_factory=list)  # not comparable, and why
    notes: list[str] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """`not comparable`, `regressed`, `incomplete` (a metric missing) or `holds`."""
        if self.problems:
            return "not comparable"
        if any(j.verdict == "regressed" for j in self.judgements):
            return "regressed"
        if any(j.verdict == "missing" for j in self.judgements):
            return "incomplete"
        return "holds"

    @property
    def exit_status(self) -> int:
        """0 holds, 1 regressed, 2 not comparable or a metric missing."""
        return {
            "holds": HOLDS,
            "regressed": REGRESSED,
            "not comparable": NOT_COMPARABLE,
            "incomplete": INCOMPLETE,
        }[self.verdict]

    def summary(self) -> str:
        """One sentence: the verdict and what decided it."""
        if self.problems:
            return f"not comparable: {self.problems[0]}" + (
                f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
            )
        bad = [j for j in self.judgements if j.verdict == "regressed"]
        if bad:
            from logparse.gate.render import change_text

            shown = ", ".join(f"{j.name} {change_text(j)}" for j in bad)
            return f"regressed: {shown}"
        missing = [j.name for j in self.judgements if j.verdict == "missing"]
        if missing:
            return f"incomplete: missing {', '.join(missing)}"
        return f"holds: {len(self.judgements)} metrics within their bounds"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (non-finite changes as null, with their note)."""
        from logparse.gate.render import judgement_dict, side_dict

        return {
            "verdict": self.verdict,
            "exit_status": self.exit_status,
            "summary": self.summary(),
            "baselines": [side_dict(b) for b in self.baselines],
            "candidate": side_dict(self.candidate),
            "not_comparable": self.problems,
            "notes": self.notes,
            "thresholds": {"default_pct": self.thresholds.default_pct, **self.thresholds.by_metric},
            "metrics": [judgement_dict(j) for j in self.judgements],
        }


def gate_sides(
    baselines: Sequence[Side],
    candidate: Side,
    *,
    thresholds: Thresholds | None = None,
    allow_engine_change: bool = False,
) -> GateResult:
    """Judge `candidate` against `baselines` (already read)."""
    if not baselines:
        raise InputError("no baseline to compare the candidate with")
    result = GateResult(list(baselines), candidate, thresholds or Thresholds())
    for b in baselines:
        found = compare_sides(b, candidate, allow_engine_change=allow_engine_change)
        result.problems += found.problems
        result.notes += found.notes
    result.notes = list(dict.fromkeys(result.notes))
    if not result.problems:
        result.judgements = judge(baselines, candidate, result.thresholds)
    return result


def run_gate(
    baselines: Sequence[str],
    candidate: str,
    *,
    thresholds: Thresholds | None = None,
    allow_engine_change: bool = False,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    slo_ttft_ms: float = 1000.0,
    slo_tps: float = 15.0,
) -> GateResult:
    """Read every input (`sides.read_sides`) and judge the candidate against the baselines."""
    if [*baselines, candidate].count("-") > 1:
        raise InputError("standard input ('-') can be read once only; give the other runs as files")
    read = {"engine": engine, "year": year, "tz": tz, "patterns": patterns}
    slo = {"slo_ttft_ms": slo_ttft_ms, "slo_tps": slo_tps}
    base = [side for path in baselines for side in read_sides(path, **read, **slo)]  # type: ignore[arg-type]
    cand = read_sides(candidate, **read, **slo)  # type: ignore[arg-type]
    if len(cand) != 1:
        raise InputError(
            f"{candidate}: a dataset of {len(cand)} runs; the candidate is one run: give one of them "
            f"(e.g. {cand[0].source})"
        )
    return gate_sides(base, cand[0], thresholds=thresholds, allow_engine_change=allow_engine_change)


__all__ = ["GateResult", "gate_sides", "run_gate"]
