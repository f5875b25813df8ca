"""Library errors. The CLI turns them into click errors at the edge, nowhere else."""

from __future__ import annotations


class LogparseError(Exception):
    """Base class of every error logparse raises on purpose."""


class InputError(LogparseError):
    """An input could not be read (missing, a directory, not a log, unreadable)."""


class PatternError(LogparseError):
    """A grammar file is broken: it does not load, compile, or agree with its samples. `problems`
    holds each problem's text (the message is them joined by newlines)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems if problems is not None else [message]


class EngineNotDetected(LogparseError):
    """No engine scored high enough; the user must name one with --engine."""

    def __init__(self, message: str, scores: dict[str, float]) -> None:
        super().__init__(message)
        self.scores = scores


class OutputError(LogparseError):
    """An output could not be written (read-only, full disk, a file in the way, no permission)."""


class PartialFailure(LogparseError):
    """Some of several inputs could not be read; the others were done. The CLI exits 1."""

    def __init__(self, message: str, failed: int, total: int) -> None:
        super().__init__(message)
        self.failed = failed
        self.total = total
