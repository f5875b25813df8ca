"""The verdict on each metric: the candidate against the baselines' median, within which bound.

A metric *regressed* when it got worse (lower throughput, higher latency or count) by more than
its bound. The bound is the larger of

* the threshold (`thresholds.Thresholds`, 5 % unless set), and
* the noise: how much the runs themselves vary. For a stable window's mean that is the largest
  cv of the windows compared (the spread of the very samples the mean is taken over); with
  several baselines, also the largest deviation of a baseline from their median.

A change in the bad direction beyond the threshold but inside the noise is *within noise*, not a
regression; each judgement says which bound applied. A figure one side lacks is *missing* (and
the window figures, decode throughput, are missing even when every side lacks them: a gate
that cannot see decode throughput has not checked it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from logparse.gate.metrics import METRICS, Metric
from logparse.gate.sides import Measure, Side
from logparse.gate.thresholds import Thresholds

Verdict = Literal["holds", "improved", "within noise", "regressed", "missing"]
WINDOW_CV = "window cv"
BASELINE_SPREAD = "baseline spread"
THRESHOLD = "threshold"
# Judged even when no side has them: without them the gate has not looked at decode throughput.
REQUIRED = ("decode_tps", "per_request_tps")
MARK_ORDER = "~?≥*"


@dataclass(frozen=True)
class Judgement:
    """One metric in one scope: the figures, the change, the bound and the verdict."""

    metric: Metric
    scope: str
    scope_label: str
    baseline: float | None  # the baselines' median
    baselines: tuple[float | None, ...]
    candidate: float | None
    change_pct: float | None  # candidate against baseline, percent (+: larger); inf from 0
    worse_pct: float | None  # the change in the metric's bad direction, percent (-: better)
    threshold_pct: float
    noise_pct: float | None
    noise_source: str | None
    bound_pct: float
    bound_source: str
    verdict: Verdict
    mark: str = ""
    note: str | None = None

    @property
    def name(self) -> str:
        """`decode_tps[phase 1 (~64K, N=10)]`, or the key alone for a run-wide figure."""
        return self.metric.key if self.scope == "run" else f"{self.metric.key}[{self.scope_label}]"


def _marks(measures: Sequence[Measure | None]) -> str:
    seen = {ch for m in measures if m is not None for ch in m.mark}
    return "".join(ch for ch in MARK_ORDER if ch in seen)


def _noise(measures: Sequence[Measure | None], baselines: Sequence[float]) -> tuple[float | None, str | None]:
    """The largest relative spread (percent) of the figures compared, and where it comes from."""
    best: tuple[float | None, str | None] = (None, None)
    cvs = [m.noise for m in measures if m is not None and m.noise is not None]
    if cvs:
        best = (100.0 * max(cvs), WINDOW_CV)
    if len(baselines) > 1:
        middle = statistics.median(baselines)
        if middle:
            spread = 100.0 * max(abs(b - middle) for b in baselines) / abs(middle)
            if best[0] is None or spread > best[0]:
                best = (spread, BASELINE_SPREAD)
    return best


def _change_pct(baseline: float, candidate: float) -> float:
    if baseline == 0:
        return 0.0 if candidate == 0 else math.copysign(math.inf, candidate)
    return 100.0 * (candidate / baseline - 1.0)


def judge_metric(
    metric: Metric,
    scope: str,
    scope_label: str,
    baselines: Sequence[tuple[str, Measure | None]],
    candidate: tuple[str, Measure | None],
    threshold_pct: float,
) -> Judgement | None:
    """The judgement of one metric in one scope (`baselines` and `candidate` as (source, measure)),
    or None when no side has the figure and it is not `REQUIRED`."""
    measures = [m for _, m in baselines] + [candidate[1]]
    values = [None if m is None else m.value for m in measures]
    if all(v is None for v in values) and metric.key not in REQUIRED:
        return None
    if all(m is None for m in measures):
        return None  # not a figure of this kind of input
    base = {
        "metric": metric,
        "scope": scope,
        "scope_label": scope_label,
        "baselines": tuple(values[:-1]),
        "candidate": values[-1],
        "threshold_pct": threshold_pct,
        "mark": _marks(measures),
    }
    absent = [
        f"{source}: {m.missing if m is not None and m.missing else 'no such figure'}"
        for source, m in [*baselines, candidate]
        if m is None or m.value is None
    ]
    if absent:
        present = [v for v in values[:-1] if v is not None]
        return Judgement(
            **base,  # type: ignore[arg-type]
            baseline=statistics.median(present) if present else None,
            change_pct=None,
            worse_pct=None,
            noise_pct=None,
            noise_source=None,
            bound_pct=threshold_pct,
            bound_source=THRESHOLD,
            verdict="missing",
            note="missing in " + "; ".join(absent),
        )
    numbers = [float(v) for v in values if v is not None]
    middle = statistics.median(numbers[:-1])
    change = _change_pct(middle, numbers[-1])
    worse = change if metric.better == "lower" else -change
    noise, noise_source = _noise(measures, numbers[:-1])
    bound, bound_source = threshold_pct, THRESHOLD
    if noise is not None and noise > threshold_pct:
        bound, bound_source = noise, str(noise_source)
    verdict: Verdict
    if worse <= threshold_pct:
        verdict = "improved" if -worse > bound else "holds"
    elif noise is not None and worse <= noise:
        verdict = "within noise"
    else:
        verdict = "regressed"
    return Judgement(
        **base,  # type: ignore[arg-type]
        baseline=middle,
        change_pct=change,
        worse_pct=worse,
        noise_pct=noise,
        noise_source=noise_source,
        bound_pct=bound,
        bound_source=bound_source,
        verdict=verdict,
    )


def judge(baselines: Sequence[Side], candidate: Side, thresholds: Thresholds) -> list[Judgement]:
    """Every metric the sides have, scope by scope (the candidate's order, run-wide figures last)."""
    scopes = [(s.key, s.label) for s in candidate.scopes] + [("run", "run")]
    out = []
    for key, label in scopes:
        for metric in METRICS:
            if metric.origin != candidate.origin:
                continue
            judged = judge_metric(
                metric,
                key,
                label,
                [(b.source, b.measure(metric.key, key)) for b in baselines],
                (candidate.source, candidate.measure(metric.key, key)),
                thresholds.pct(metric.key),
            )
            if judged is not None:
                out.append(judged)
    return out


__all__ = [
    "BASELINE_SPREAD",
    "REQUIRED",
    "THRESHOLD",
    "WINDOW_CV",
    "Judgement",
    "Verdict",
    "judge",
    "judge_metric",
]
