"""Where a chart of the report goes: the page's sections, by name (a run's charts go to its card,
named after the run)."""

from __future__ import annotations

ANSWER = "answer"  # the first screen: the verdict charts beside the Core Result
ACROSS = "across runs"  # charts that overlay every run
CLIENT = "client benchmark"
