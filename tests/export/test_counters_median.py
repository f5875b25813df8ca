"""`median_of_counts` (the live series' usual interval, from a histogram of gaps) is `median_gap`
of the gaps themselves."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from logparse.export.counters import median_gap, median_of_counts


@given(st.lists(st.integers(0, 20_000), max_size=60))
def test_the_median_of_counted_gaps_is_the_median_of_the_gaps(gaps: list[int]) -> None:
    assert median_of_counts(Counter(gaps)) == median_gap(gaps)


def test_too_few_gaps_have_no_median() -> None:
    assert median_of_counts(Counter({1000: 2})) is None
    assert median_of_counts(Counter({1000: 2, 1001: 1})) == 1000
    assert median_of_counts(Counter({1000: 2, 1003: 2})) == 1001
