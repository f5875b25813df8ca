"""One precision per unit in every message of `logparse bench` and `logparse reconcile`.

A figure copied from a file (1111.61) and one computed from it (101.6213...) are printed the same
way, so two numbers of one unit can be compared by eye: tok/s with 1 decimal, ms, s and req/s
with 2, as `logparse summary` prints them (thousands separated).
"""

from __future__ import annotations

from logparse.analysis.text import fmt


def tok_s(value: float) -> str:
    """Output throughput: `1,111.6 tok/s`."""
    return fmt(float(value), 1, unit="tok/s")


def ms(value: float) -> str:
    """A latency in milliseconds: `45.21 ms`."""
    return fmt(float(value), 2, unit="ms")


def secs(value: float) -> str:
    """A duration in seconds: `295.21 s`."""
    return fmt(float(value), 2, unit="s")


def req_s(value: float) -> str:
    """A request rate: `3.38 req/s`."""
    return fmt(float(value), 2, unit="req/s")


def tokens(value: float) -> str:
    """A token count: `20,480`; a mean count keeps one decimal (`127.6`)."""
    value = float(value)
    return fmt(value, 0 if value.is_integer() else 1)
