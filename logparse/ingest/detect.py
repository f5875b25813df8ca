"""Which engine wrote a log: a score in [0, 1] per engine, from the head of the log.

As in Pygments' `analyse_text`: a marker line settles it (1.0); otherwise the score is the share
of non-empty head lines that show one of the engine's `signatures` (its logger's line shape) or
that its grammar types (a kind every engine types counts half; request and warning lines are no
evidence). The head is read by the compiled core in one call. Scoring never raises on what the
lines hold; a missing core or a grammar the core refuses is its own error.
"""

from __future__ import annotations

from collections.abc import Sequence

from logparse.engine import compiled, core_text
from logparse.errors import EngineNotDetected
from logparse.grammar import Grammar

HEAD_LINES = 400
MIN_SCORE = 0.05
# Kinds that every engine's grammar types (uvicorn access lines, generic warnings): no evidence.
GENERIC_KINDS = frozenset({"request", "warning", "unparsed"})


def score(grammar: Grammar, engine: str, head: Sequence[str]) -> float:
    """How likely `engine` wrote these lines, in [0, 1]; 0.0 when the lines cannot be read."""
    lines = [line for line in head if line.strip()][:HEAD_LINES]
    if not lines:
        return 0.0
    markers = grammar.engines[engine].markers
    if any(marker in line for line in lines for marker in markers):
        return 1.0
    core = compiled(grammar, engine)  # compiled only when the lines are to be read
    try:
        signatures = grammar.engines[engine].signatures
        shared = _shared_kinds(grammar)
        hits = 0.0
        for line, event in zip(lines, core.parse_lines([core_text(line) for line in lines]), strict=True):
            if any(s.search(line[:4096]) for s in signatures):
                hits += 1
                continue
            kind = event["kind"]
            if kind not in GENERIC_KINDS:
                hits += 0.5 if kind in shared else 1.0
        return max(0.0, min(1.0, hits / len(lines)))
    except Exception:
        return 0.0


def _shared_kinds(grammar: Grammar) -> set[str]:
    """Kinds every engine's grammar types (an OOM line is evidence, but of no engine in particular)."""
    per_engine = [{r.kind for r in e.rules} for e in grammar.engines.values()]
    return set.intersection(*per_engine) if len(per_engine) > 1 else set()


def scores(grammar: Grammar, head: Sequence[str]) -> dict[str, float]:
    """Score of every known engine."""
    return {name: score(grammar, name, head) for name in sorted(grammar.engines)}


def detect_engine(
    grammar: Grammar, head: Sequence[str], *, name: str = "the log"
) -> tuple[str, dict[str, float]]:
    """The best-scoring engine and all scores; `EngineNotDetected` when unsure. Engines that score
    alike are told apart by how many of the head lines their grammar types (`typed_lines`); the
    scores stay tied, which is how the headline knows to say the engine was a close call."""
    result = scores(grammar, head)
    ranked = sorted(result.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{k} {v:.2f}" for k, v in ranked)
    choices = " or ".join(f"--engine {k}" for k in sorted(result))
    if not ranked or ranked[0][1] < MIN_SCORE:
        raise EngineNotDetected(
            f"could not tell which engine wrote {name} (scores: {shown}); pass {choices}", result
        )
    tied = [engine for engine, value in ranked if value == ranked[0][1]]
    if len(tied) > 1:
        typed = {engine: typed_lines(grammar, engine, head) for engine in tied}
        best = max(typed.values())
        winners = [engine for engine in tied if typed[engine] == best]
        if len(winners) > 1:
            raise EngineNotDetected(
                f"{name} looks equally like {' and '.join(winners)} (scores: {shown}; each grammar types "
                f"{best} of its first lines); pass {choices}",
                result,
            )
        return winners[0], result
    return ranked[0][0], result


def typed_lines(grammar: Grammar, engine: str, head: Sequence[str]) -> int:
    """How many of the non-empty head lines `engine`'s grammar types (any kind but `unparsed`):
    what breaks a tie of scores."""
    lines = [line for line in head if line.strip()][:HEAD_LINES]
    events = compiled(grammar, engine).parse_lines([core_text(line) for line in lines])
    return sum(event["kind"] != "unparsed" for event in events)
