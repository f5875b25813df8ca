"""`decode_samples` with vLLM DP engines: an engine that starts printing only in the next phase
is idle until then, not late.

vLLM's API server prints every engine's `Engine 00k:` line of one interval together (one
timestamp), and an idle engine prints nothing. So an engine missing from an instant whose next
line comes only after another instant of the other engines was idle at that instant, however
soon it starts printing after. And an engine whose line of one interval is stamped a second
after the others' is late, not idle: the interval is still one sample.
"""
from __future__ import annotations

import datetime as dt

import polars as pl

from logparse.analysis.samples import decode_samples


def _ranks(rows: list[tuple[int, int, int, int, float]]) -> pl.DataFrame:
    """(engine, line_no, second, running, gen_tps) rows."""
    t0 = dt.datetime(2026, 7, 28, 17, 8, 9)
    return pl.DataFrame({
        "series": [r[0] for r in rows], "line_no": [r[1] for r in rows],
        "time": [t0 + dt.timedelta(seconds=r[2]) for r in rows],
        "running": [r[3] for r in rows], "waiting": [0] * len(rows), "gen_tps": [r[4] for r in rows],
        "prefill": [False] * len(rows)}, schema_overrides={"time": pl.Datetime("us")})


def test_an_engine_starting_in_the_next_phase_does_not_hold_back_the_last_instants() -> None:
    # Emulated era 0.10, seed 7689: phase 1 runs 2 requests on engine 000 only (lines 51-54),
    # phase 2 starts 16 s later on both engines (lines 55/56 at +50 s). Engine 001 was idle at
    # +30 s and +40 s; its first line 20 s later is the next phase, not a late line.
    rows = [(0, 51, 10, 2, 58.0), (0, 52, 20, 2, 54.4), (0, 53, 30, 2, 62.0), (0, 54, 40, 0, 10.8),
            (0, 55, 50, 4, 16.2), (1, 56, 50, 2, 8.2), (0, 57, 60, 4, 106.8), (1, 58, 60, 2, 53.4)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("line_no").to_list() == [51, 52, 53, 54, 56, 58]
    assert out.get_column("gen_tps").to_list()[:3] == [58.0, 54.4, 62.0]
    assert out.get_column("running").to_list() == [2, 2, 2, 0, 6, 6]
    assert out.get_column("n_series").to_list() == [1, 1, 1, 1, 2, 2]


def test_an_engine_tail_line_stays_the_idle_sample_between_phases() -> None:
    # Emulated era 0.26, seed 8 of the probe: phase 1 runs 1 request on engine 001, whose zero
    # line (59, +60 s) ends it; phase 2 starts 10 s later on engine 000 alone. Line 59 must stay
    # an instant (all zero: the idle sample that separates the phases), not wait for engine 000.
    rows = [(1, 57, 40, 1, 23.9), (1, 58, 50, 0, 2.0), (1, 59, 60, 0, 0.0),
            (0, 60, 70, 4, 55.2), (0, 61, 80, 4, 124.8), (0, 62, 90, 0, 112.4), (0, 63, 100, 0, 0.0)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("line_no").to_list() == [57, 58, 59, 60, 61, 62, 63]
    assert out.get_column("running").to_list() == [1, 0, 0, 4, 4, 0, 0]
    assert out.get_column("gen_tps").to_list()[2] == 0.0


def test_lines_of_one_interval_stamped_a_second_apart_are_one_sample() -> None:
    # Engine 001's line of the second interval is stamped a second after engine 000's: one
    # sample at the later line, engine 000's line 3 counted once (not also with line 2).
    rows = [(0, 1, 0, 2, 50.0), (1, 2, 0, 2, 50.0), (0, 3, 10, 2, 51.0), (1, 4, 11, 2, 52.0),
            (0, 5, 20, 2, 53.0), (1, 6, 20, 2, 54.0)]
    out = decode_samples(_ranks(rows))
    assert out.get_column("lines").to_list() == [[1, 2], [3, 4], [5, 6]]
    assert out.get_column("gen_tps").to_list() == [100.0, 103.0, 107.0]
