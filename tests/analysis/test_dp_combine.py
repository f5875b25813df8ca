"""`decode_samples` with several SGLang DP series: every round of the groups' lines is one sample.

SGLang stamps lines to the second, and a Decode line every `decode_log_interval` steps can come
more often than once a second: two instants of all DP groups then share a timestamp. Each
instant must still be its own combined sample, as it is with a single series.

Groups that drifted apart (each counts its own decode steps: after one sat idle while the
others decoded) print in turn instead of together. A round of their lines, one of each group,
is then one sample, taken at the line completing it; no line is counted twice.
"""
from __future__ import annotations

import datetime as dt

import polars as pl

from logparse.analysis.samples import decode_samples


def _ranks(rows: list[tuple[int, int, int, float]]) -> pl.DataFrame:
    """(series, line_no, second, gen_tps) rows; 2 requests running per series."""
    t0 = dt.datetime(2026, 1, 1)
    return pl.DataFrame({
        "series": [r[0] for r in rows], "line_no": [r[1] for r in rows],
        "time": [t0 + dt.timedelta(seconds=r[2]) for r in rows],
        "running": [2] * len(rows), "waiting": [0] * len(rows), "gen_tps": [r[3] for r in rows],
        "prefill": [False] * len(rows)}, schema_overrides={"time": pl.Datetime("us")})


def test_two_instants_in_one_second_stay_two_samples() -> None:
    # Instants at seconds 0, 1, 1 (two logging steps within second 1), 2; groups interleaved.
    rows = [(1, 1, 0, 80.0), (0, 2, 0, 81.0),
            (0, 3, 1, 82.0), (1, 4, 1, 83.0),
            (1, 5, 1, 84.0), (0, 6, 1, 85.0),
            (0, 7, 2, 86.0), (1, 8, 2, 87.0)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("line_no").to_list() == [2, 4, 6, 8]
    assert out.get_column("gen_tps").to_list() == [161.0, 165.0, 169.0, 173.0]
    assert out.get_column("running").to_list() == [4, 4, 4, 4]
    assert out.get_column("lines").to_list() == [[1, 2], [3, 4], [5, 6], [7, 8]]


def test_single_series_keeps_every_line() -> None:
    rows = [(0, 1, 0, 80.0), (0, 2, 1, 82.0), (0, 3, 1, 84.0), (0, 4, 2, 86.0)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("line_no").to_list() == [1, 2, 3, 4]


def test_a_dp_group_idle_for_a_whole_phase_counts_as_zero() -> None:
    # Both groups decode at seconds 0-3; after a minute of idle time only group 0 has requests
    # (the router sent fewer requests than there are groups): group 1 prints nothing then.
    rows = [(s % 2, i + 1, i // 2, 40.0) for i, s in enumerate(range(8))]
    rows += [(0, 9 + i, 60 + i, 41.0) for i in range(4)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("line_no").to_list() == [2, 4, 6, 8, 9, 10, 11, 12]
    assert out.get_column("running").to_list() == [4, 4, 4, 4, 2, 2, 2, 2]
    assert out.get_column("gen_tps").to_list() == [80.0] * 4 + [41.0] * 4
    assert out.get_column("n_series").to_list() == [2] * 4 + [1] * 4
    assert out.get_column("lines").to_list()[4:] == [[9], [10], [11], [12]]
    assert out.get_column("prefill").to_list() == [False] * 8


def test_a_group_about_to_print_still_holds_the_instant_back() -> None:
    # Group 1's first line comes a second after group 0's: the instant at second 0 would count
    # group 1 as idle, but it is only late, so that instant is no sample. The groups print in
    # turn (drifted): line 3 would pair with line 2, already counted, and group 1 prints again
    # first, so the round completes at line 4.
    rows = [(0, 1, 0, 40.0), (1, 2, 1, 40.0), (0, 3, 2, 40.0), (1, 4, 3, 40.0)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("line_no").to_list() == [2, 4]
    assert out.get_column("lines").to_list() == [[1, 2], [3, 4]]


def test_drifted_groups_make_one_sample_per_round() -> None:
    # Two groups, 40 steps (3 s) apart each, group 1 printing a second after group 0: 4 + 4
    # lines are 4 samples of 80 tok/s (not 7), each line in one of them. Group 0 prints once
    # more after group 1's last line (its request finished first): that line is a sample of
    # group 0 alone, group 1's counted line adds nothing to it.
    rows = []
    for k in range(4):
        rows += [(0, 2 * k + 1, 3 * k, 40.0), (1, 2 * k + 2, 3 * k + 1, 40.0)]
    rows.append((0, 9, 12, 40.0))
    out = decode_samples(_ranks(rows))
    assert out.get_column("lines").to_list() == [[1, 2], [3, 4], [5, 6], [7, 8], [9]]
    assert out.get_column("gen_tps").to_list() == [80.0] * 4 + [40.0]
    assert out.get_column("running").to_list() == [4] * 4 + [2]
    assert out.get_column("n_series").to_list() == [2] * 4 + [1]


def test_rounds_follow_print_order_within_a_second() -> None:
    # Lines less than a second apart (a fast decode): group 0 leads group 1 by half an interval,
    # so in second 1 group 1's line ends round 1 and group 0's starts round 2. The groups' first
    # lines are a second apart: the sample at line 1 (group 1 counted idle) uses up no line.
    rows = [(0, 1, 0, 10.0), (1, 2, 1, 20.0), (0, 3, 1, 11.0), (1, 4, 2, 21.0), (0, 5, 2, 12.0),
            (1, 6, 3, 22.0)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("lines").to_list() == [[1], [1, 2], [3, 4], [5, 6]]
    assert out.get_column("gen_tps").to_list() == [10.0, 30.0, 32.0, 34.0]
