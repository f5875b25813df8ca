"""Seeded, order-independent noise: every draw is keyed, so one value never shifts another."""

from __future__ import annotations

import math
import random


class Noise:
    """Deterministic draws keyed by strings; the same (seed, key) always gives the same number."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._cache: dict[str, float] = {}

    def z(self, key: str) -> float:
        """A standard normal draw for `key`, clipped to ±3 so one draw cannot dominate a window."""
        value = self._cache.get(key)
        if value is None:
            value = max(-3.0, min(3.0, random.Random(f"{self.seed}|{key}").gauss(0.0, 1.0)))
            self._cache[key] = value
        return value

    def uniform(self, key: str, low: float, high: float) -> float:
        """A uniform draw in [low, high) for `key`."""
        return random.Random(f"{self.seed}|u|{key}").uniform(low, high)

    def factor(self, key: str, sigma: float) -> float:
        """A log-normal multiplier with median 1 and log-sd `sigma`."""
        return math.exp(sigma * self.z(key)) if sigma > 0 else 1.0

    def hex(self, key: str, digits: int) -> str:
        """A hex string, for request ids."""
        return f"{random.Random(f'{self.seed}|h|{key}').getrandbits(4 * digits):0{digits}x}"

    def integer(self, key: str, low: int, high: int) -> int:
        """An integer in [low, high] for `key` (ports, pids)."""
        return random.Random(f"{self.seed}|i|{key}").randint(low, high)
