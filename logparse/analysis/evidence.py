"""How sure a figure is: exact, estimated (how, within what bound) or guessed (from what).

A post-mortem states three kinds of number. *Exact*: read or computed from printed values
only (a window's mean of the printed gen throughputs, SGLang's input length from its Prefill
lines' token counts). *Estimated*: computed from printed values through an assumption that can
be off by a known amount (vLLM's input length from prompt throughput x the stats interval;
its KV context from a usage percentage printed to 0.1 %); the bound says by how much.
*Guessed*: resting on something the log does not state (a default block size, irregular
intervals nobody measured). Every figure carries one of the three and the evidence behind it,
and the text, JSON and report say so wherever a figure is not exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Confidence = Literal["exact", "estimated", "guessed"]
EXACT: Confidence = "exact"
ESTIMATED: Confidence = "estimated"
GUESSED: Confidence = "guessed"
MARKS: dict[str, str] = {EXACT: "", ESTIMATED: "~", GUESSED: "?"}


@dataclass(frozen=True, slots=True)
class Figure:
    """A value, how sure it is, and the evidence: ``how`` it was obtained and, for an estimate,
    ``bound`` (the value is within ± bound of the truth)."""

    value: float | int | None
    confidence: Confidence
    how: str
    bound: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """``{"confidence", "how", "bound"}`` (the value is reported beside it)."""
        return {
            "confidence": self.confidence,
            "how": self.how,
            "bound": None if self.bound is None else round(float(self.bound), 3),
        }

    @property
    def mark(self) -> str:
        """The prefix the tables print before a figure: ``~`` estimated, ``?`` guessed."""
        return MARKS[self.confidence]


def mark_of(confidence: str | None) -> str:
    """The table prefix of a confidence (`Figure.mark`); none for exact or unknown.

    >>> [mark_of(c) for c in ("exact", "estimated", "guessed", None)]
    ['', '~', '?', '']
    """
    return MARKS.get(confidence or EXACT, "")


def agree(a: float, b: float, *, slack: float) -> bool:
    """Whether two figures of one quantity agree within `slack` (absolute)."""
    return abs(a - b) <= slack


def describe(figure: Figure | None, *, unit: str = "") -> str:
    """One phrase for a figure that is not exact: ``estimated (how, ± bound unit)`` or
    ``guessed (from what)``; empty for an exact figure or None.

    >>> describe(Figure(64_000, "estimated", "prompt throughput x 10 s / N", 1_200.0), unit="tokens")
    'estimated (prompt throughput x 10 s / N, ± 1,200 tokens)'
    """
    if figure is None or figure.confidence == EXACT:
        return ""
    bound = "" if figure.bound is None else f", ± {figure.bound:,.0f}{f' {unit}' if unit else ''}"
    return f"{figure.confidence} ({figure.how}{bound})"


__all__ = ["ESTIMATED", "EXACT", "GUESSED", "MARKS", "Confidence", "Figure", "agree", "describe", "mark_of"]
