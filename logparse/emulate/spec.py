"""Speculative-decoding arithmetic shared by both engines."""

from __future__ import annotations


def position_rate(accepted_per_draft: float, k: int) -> float:
    """The per-position conditional acceptance p with p + p^2 + ... + p^k == accepted_per_draft.

    Draft position i is accepted only if every earlier one was, so position i's rate is p^i.
    """
    target = max(0.0, min(float(k), accepted_per_draft))
    if target >= k:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if sum(mid**i for i in range(1, k + 1)) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def per_position(accepted_per_draft: float, k: int) -> list[float]:
    """Acceptance rate of each of the k draft positions (fractions of drafts)."""
    p = position_rate(accepted_per_draft, k)
    return [p**i for i in range(1, k + 1)]
