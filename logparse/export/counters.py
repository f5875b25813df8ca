"""Counters rebuilt from what a log prints: rates integrated over the interval, counts summed.

Every function takes one series' points, time-ordered with one point per timestamp
(Unix milliseconds, value), and returns the counter's samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from itertools import accumulate, pairwise

Point = tuple[int, float]

# A silence longer than this many usual stats intervals is one the engine did not print (vLLM logs
# an interval whose throughputs, and the previous ones, are all zero at DEBUG, from 0.6.5 / 0.8.5).
GAP_FACTOR = 1.5
# Intervals needed before the usual one is trusted (the median of them).
MIN_INTERVALS = 3


def integrate_rates(points: Sequence[Point], *, hold_over_gaps: bool) -> list[Point]:
    """A counter whose increase between consecutive lines is the later line's rate (per second)
    times the seconds between them. It starts at 0 at the first line: the first line's rate covers
    an interval whose start the log does not show.

    With `hold_over_gaps`, a gap longer than `GAP_FACTOR` times the median interval is read as an
    unprinted idle stretch: the counter stays flat until one median interval before the line, and
    the line's rate covers that interval only (an extra sample marks where it starts).
    """
    if not points:
        return []
    usual = usual_interval_ms(points) if hold_over_gaps else None
    return [(points[0][0], 0.0), *integrated(points, usual)]


def integrated(points: Sequence[Point], usual: int | None, total: float = 0.0) -> list[Point]:
    """`integrate_rates`' samples after the first point, given the usual interval (None: no
    gaps held over) and the counter's value at the first point: a counter kept up to date as
    points arrive carries on from where it was, with the same sums in the same order."""
    samples: list[Point] = []
    for (before, _), (t, rate) in pairwise(points):
        seconds = (t - before) / 1000
        if usual is not None and t - before > GAP_FACTOR * usual:
            samples.append((t - usual, total))
            seconds = usual / 1000
        total += rate * seconds
        samples.append((t, total))
    return samples


def usual_interval_ms(points: Sequence[Point]) -> int | None:
    """The median spacing of the points, or None when there are too few to tell."""
    return median_gap([b[0] - a[0] for a, b in pairwise(points)])


def median_gap(gaps: Sequence[int]) -> int | None:
    """`usual_interval_ms` of points spaced by `gaps`."""
    if len(gaps) < MIN_INTERVALS:
        return None
    return int(statistics.median(gaps))


def median_of_counts(counts: Mapping[int, int]) -> int | None:
    """`median_gap` of the gaps counted in `counts` (gap -> how many times it occurs)."""
    total = sum(counts.values())
    if total < MIN_INTERVALS:
        return None
    wanted = (total - 1) // 2, total // 2  # the middle one, or the two middle ones
    found: list[int] = []
    seen = 0
    for gap, count in sorted(counts.items()):
        while len(found) < 2 and seen + count > wanted[len(found)]:
            found.append(gap)
        seen += count
        if len(found) == 2:
            break
    return int(found[0]) if total % 2 else int((found[0] + found[1]) / 2)


def running_sum(points: Sequence[Point]) -> list[Point]:
    """A counter of per-interval counts: at each line, the sum of the counts printed so far."""
    times = [t for t, _ in points]
    return list(zip(times, accumulate(v for _, v in points)))
