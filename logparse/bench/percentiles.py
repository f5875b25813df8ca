"""Statistics of per-request samples, computed the way the benchmark tools compute them.

vLLM `bench serve` / `benchmark_serving.py` and SGLang `bench_serving` take their percentiles with
`numpy.percentile(values, p)` (linear interpolation between closest ranks) and their median with
`numpy.median`; `percentile` reproduces that, so a P90 computed here from a file's `ttfts` is the
P90 the tool would have printed with `--metric-percentiles 90`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# (schema statistic, percentile) of a lower-is-better metric (latency) and a higher-is-better one (rate)
LATENCY_PERCENTILES: tuple[tuple[str, float], ...] = (
    ("median", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
)
RATE_PERCENTILES: tuple[tuple[str, float], ...] = (("p10", 10.0), ("median", 50.0), ("p90", 90.0))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0 <= q <= 100) of `values`, numpy's default 'linear' method.

    Examples
    --------
    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.5
    >>> percentile([0.2, 0.3, 0.4, 1.5, 2.0], 90)
    1.8
    """
    if not values:
        msg = "percentile of no values"
        raise ValueError(msg)
    return _sorted_percentile(sorted(values), q)


def _sorted_percentile(ordered: Sequence[float], q: float) -> float:
    if not 0.0 <= q <= 100.0:
        msg = f"percentile must be in [0, 100] (got {q})"
        raise ValueError(msg)
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean of `values` (non-empty)."""
    if not values:
        msg = "mean of no values"
        raise ValueError(msg)
    return math.fsum(values) / len(values)


def summarize(values: Sequence[float], stats: Sequence[tuple[str, float]]) -> dict[str, float]:
    """`{'mean': ..., <stat>: percentile}` of `values` for every (stat name, q) in `stats`."""
    ordered = sorted(values)
    out = {"mean": mean(ordered)}
    for name, q in stats:
        out[name] = _sorted_percentile(ordered, q)
    return out
