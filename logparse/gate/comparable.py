"""Whether two sides of a gate measure the same thing, and what differs when they do not.

A change of throughput or latency says something about a build only when the workload is the
same: the same engine and model (unless `allow_engine_change`), the same GPU count (tensor and
data parallel sizes, where both logs print them), the same phases or concurrency levels, and in
each the same input length, concurrency and output length. Lengths estimated from a log
(``~``) are compared with more slack than printed ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logparse.analysis.text import tokens_label
from logparse.gate.sides import Scope, Side

INPUT_TOLERANCE = 0.10  # the tolerance `compare` groups input lengths by
OUTPUT_TOLERANCE = 0.10
# Output lengths from a log are estimates (`analysis.outputs`: within 15 % on the emulated runs).
OUTPUT_ESTIMATE_TOLERANCE = 0.25


@dataclass
class Comparability:
    """`problems`: why the sides cannot be compared (empty: they can); `notes`: differences
    allowed (`--allow-engine-change`) or facts only one side states."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _model(name: str | None) -> str | None:
    return None if name is None else name.rstrip("/").rsplit("/", 1)[-1].lower()


def _apart(a: float, b: float) -> float:
    """How far apart two positive lengths are: 0.5 when one is 1.5x the other."""
    return max(a, b) / min(a, b) - 1.0 if min(a, b) > 0 else float("inf")


def _tokens(value: float | None, estimated: bool) -> str:
    return "-" if value is None else tokens_label(round(value), estimated=estimated)


def compare_sides(baseline: Side, candidate: Side, *, allow_engine_change: bool = False) -> Comparability:
    """What keeps `baseline` and `candidate` from being compared (see the module docstring)."""
    out = Comparability()
    if baseline.origin != candidate.origin:
        kinds = {"log": "a server log", "client": "a client result"}
        out.problems.append(
            f"{baseline.source} is {kinds[baseline.origin]}, {candidate.source} {kinds[candidate.origin]}: "
            "they measure different things"
        )
        return out
    for what, a, b in (
        ("engine", baseline.engine, candidate.engine),
        ("model", baseline.model, candidate.model),
    ):
        if (
            a
            and b
            and (a.lower() if what == "engine" else _model(a))
            != (b.lower() if what == "engine" else _model(b))
        ):
            text = f"{what}: {a} in {baseline.source}, {b} in {candidate.source}"
            if allow_engine_change:
                out.notes.append(f"{text} (compared: --allow-engine-change)")
            else:
                out.problems.append(f"{text} (--allow-engine-change to compare them anyway)")
    for name, size_a, size_b in (
        ("tensor parallel", baseline.tensor_parallel, candidate.tensor_parallel),
        ("data parallel", baseline.data_parallel, candidate.data_parallel),
    ):
        if size_a is not None and size_b is not None and size_a != size_b:
            out.problems.append(
                f"GPU count: {name} size {size_a} in {baseline.source}, {size_b} in {candidate.source}"
            )
    out.problems += _scope_problems(baseline, candidate)
    return out


def _scope_problems(baseline: Side, candidate: Side) -> list[str]:
    a_scopes = [s for s in baseline.scopes if s.concurrency is not None or baseline.origin == "log"]
    b_scopes = [s for s in candidate.scopes if s.concurrency is not None or candidate.origin == "log"]
    if {s.key for s in a_scopes} != {s.key for s in b_scopes}:
        what = "phases" if baseline.origin == "log" else "concurrency levels"
        return [f"{what}: {baseline.source} has {_listed(a_scopes)}, {candidate.source} {_listed(b_scopes)}"]
    problems = []
    for a in a_scopes:
        b = candidate.scope(a.key)
        assert b is not None
        problems += _workload_problems(a, b, baseline.source, candidate.source)
    return problems


def _listed(scopes: list[Scope]) -> str:
    return f"{len(scopes)} ({', '.join(s.label for s in scopes)})" if scopes else "none"


def _workload_problems(a: Scope, b: Scope, a_name: str, b_name: str) -> list[str]:
    out = []
    if a.input_tokens and b.input_tokens and _apart(a.input_tokens, b.input_tokens) > INPUT_TOLERANCE:
        out.append(
            f"input length ({a.key}): {_tokens(a.input_tokens, a.input_estimated)} tokens per request in "
            f"{a_name}, {_tokens(b.input_tokens, b.input_estimated)} in {b_name}"
        )
    if a.concurrency is not None and b.concurrency is not None and a.concurrency != b.concurrency:
        out.append(f"concurrency ({a.key}): N={a.concurrency} in {a_name}, N={b.concurrency} in {b_name}")
    tolerance = OUTPUT_ESTIMATE_TOLERANCE if a.output_estimated or b.output_estimated else OUTPUT_TOLERANCE
    if a.output_tokens and b.output_tokens and _apart(a.output_tokens, b.output_tokens) > tolerance:
        out.append(
            f"output length ({a.key}): {_tokens(a.output_tokens, a.output_estimated)} tokens per request in "
            f"{a_name}, {_tokens(b.output_tokens, b.output_estimated)} in {b_name}"
        )
    return out


__all__ = [
    "INPUT_TOLERANCE",
    "OUTPUT_ESTIMATE_TOLERANCE",
    "OUTPUT_TOLERANCE",
    "Comparability",
    "compare_sides",
]
