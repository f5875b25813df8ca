"""The sweep rules of issue 25 on hand-built samples: idle lines whatever their throughput,
plateau cuts, unbroken windows and the trust bound; the explain text quotes the code."""
from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.analysis import boundaries, explain, phases, windows
from logparse.analysis.phases import find_phases
from logparse.analysis.windows import mark_stable, stable_windows

T0 = dt.datetime(2026, 1, 1)


def _samples(rows: list[tuple[int, float, float]], *, step: float = 10.0) -> pl.DataFrame:
    """Decode samples from (running, prompt_tps, gen_tps), one every `step` seconds."""
    n = len(rows)
    return pl.DataFrame(
        {
            "sample": range(n),
            "line_no": [10 + 2 * i for i in range(n)],
            "time": [T0 + dt.timedelta(seconds=step * i) for i in range(n)],
            "running": [r[0] for r in rows],
            "waiting": [0] * n,
            "prompt_tps": [r[1] for r in rows],
            "gen_tps": [r[2] for r in rows],
            "prefill": [r[1] > 0 for r in rows],
            "context_per_request": [None] * n,
            "interval_s": [None] + [step] * (n - 1),
        },
        schema_overrides={"context_per_request": pl.Float64},
    )


def _windows(rows: list[tuple[int, float, float]]) -> pl.DataFrame:
    samples = _samples(rows)
    ph = find_phases(samples, idle_gap_s=25.0)
    return stable_windows(mark_stable(phases.assign_phase(samples, ph), ph), ph)


def test_a_zero_running_line_is_idle_whatever_its_averaged_throughput() -> None:
    # vLLM's first idle line still averages the last requests' tokens (1.1 tok/s here)
    ph = find_phases(_samples([(1, 5.0, 20.0), (1, 0.0, 20.0), (0, 0.0, 1.1), (1, 5.0, 20.0)]), idle_gap_s=25.0)
    assert ph.get_column("first_line").to_list() == [10, 16]
    assert "before line 14" in ph.row(0, named=True)["end_boundary"]


def test_three_stable_samples_apart_are_three_windows_of_one_and_not_trusted() -> None:
    rows = [(4, 9.0, 5.0), (4, 0.0, 71.3), (4, 5.0, 40.0), (4, 0.0, 2.6), (4, 5.0, 40.0), (4, 0.0, 40.0), (4, 5.0, 1.0)]
    (w,) = _windows(rows).iter_rows(named=True)
    assert w["samples"] == 1 and w["runs"] == 3 and w["trusted"] is False
    assert "1 sample(s), need 5" in w["note"] and "the longest of 3 unbroken runs" in w["note"]


def test_a_long_window_that_swings_is_not_trusted() -> None:
    rows = [(2, 9.0, 5.0)] + [(2, 0.0, v) for v in (10.0, 60.0, 10.0, 60.0, 10.0, 60.0)]
    (w,) = _windows(rows).iter_rows(named=True)
    assert w["samples"] == 6 and w["cv"] > windows.MAX_CV and w["trusted"] is False
    assert f"above {windows.MAX_CV}" in w["note"]


def test_five_steady_unbroken_samples_are_trusted() -> None:
    rows = [(2, 9.0, 5.0)] + [(2, 0.0, v) for v in (50.0, 51.0, 49.0, 50.0, 50.0)]
    (w,) = _windows(rows).iter_rows(named=True)
    assert (w["samples"], w["trusted"], w["note"]) == (5, True, None)


def test_a_sweep_at_one_two_four_is_three_phases() -> None:
    levels = [(1, 0.0, 20.0)] * 4 + [(2, 0.0, 35.0)] * 4 + [(4, 0.0, 60.0)] * 4
    ph = find_phases(_samples(levels), idle_gap_s=25.0)
    assert ph.get_column("concurrency").to_list() == [1, 2, 4]
    assert "from 1 to 2" in ph.row(1, named=True)["start_boundary"]


@settings(max_examples=60, deadline=None)
@given(
    levels=st.lists(st.integers(1, 64), min_size=1, max_size=6).filter(
        lambda ls: all(a != b for a, b in zip(ls, ls[1:], strict=False))
    ),
    lengths=st.lists(st.integers(boundaries.PLATEAU_RUN, 8), min_size=6, max_size=6),
)
def test_plateaus_held_long_enough_cut_exactly_between_levels(levels: list[int], lengths: list[int]) -> None:
    running = [level for level, n in zip(levels, lengths, strict=False) for _ in range(n)]
    frame = pl.DataFrame({"line_no": range(1, len(running) + 1), "running": running})
    cuts = boundaries.plateau_cuts(frame)
    ends = [sum(lengths[: i + 1]) for i in range(len(levels) - 1)]
    assert [c.after_line for c in cuts] == ends


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(1, 200), min_size=2, max_size=30), st.sets(st.integers(1, 200), min_size=1, max_size=30))
def test_a_load_that_rises_and_falls_is_never_cut(up: set[int], down: set[int]) -> None:
    # a request-rate run's load: strictly up, then strictly down; no count holds, no level to cut
    rise = sorted(up)
    fall = sorted((d for d in down if d < rise[-1]), reverse=True)
    running = rise + fall
    frame = pl.DataFrame({"line_no": range(1, len(running) + 1), "running": running})
    assert boundaries.plateau_cuts(frame) == []


def test_request_lines_with_nothing_in_flight_end_a_phase() -> None:
    t = [T0 + dt.timedelta(seconds=s) for s in (0, 1, 30, 31, 50, 51)]
    requests = pl.DataFrame({"line_no": [1, 3, 5, 7, 9, 11], "time": t,
                             "event": ["added", "finished", "added", "finished", "added", "finished"]})
    quiet = phases.request_quiet(requests)
    assert quiet.get_column("line_no").to_list() == [3, 7]
    assert quiet.get_column("seconds").to_list() == [29.0, 19.0]


def test_explain_quotes_the_rules_constants() -> None:
    window, phase = explain.find_topic("window").text, explain.find_topic("phase").text
    assert f"cv is at most {windows.MAX_CV}" in window
    assert f"--min-samples samples (default {windows.MIN_SAMPLES})" in window
    assert f"a run of at least {boundaries.PLATEAU_RUN} samples" in phase
    assert f"at least {phases.QUIET_S:g} s with no request in flight" in phase
    assert f"more than\n{boundaries.INPUT_APART:g}x" in phase or f"more than {boundaries.INPUT_APART:g}x" in phase
    assert "at least half of its samples" in phase and boundaries.PLATEAU_SHARE == pytest.approx(0.5)


def test_a_prefill_line_below_the_chunk_budget_ends_its_requests() -> None:
    from logparse.analysis.prefill import prefill_chunks, request_inputs

    # two cached 16,913-token prompts (1 new token each) that finish decoding before the next
    # Prefill line, with no Decode line between: the running count (0, 0) cannot tell
    lines = pl.DataFrame({
        "series": [0, 0, 0], "line_no": [1, 2, 3], "time": [T0 + dt.timedelta(seconds=s) for s in (0, 5, 10)],
        "new_seq": [2, 2, 2], "new_token": [2, 2, 2], "cached_token": [33_824] * 3, "running_req": [0, 0, 0],
        "input_tps": [1.0, 1.0, 1.0],
    })
    traced = prefill_chunks(lines, chunk_budget=8192)
    assert traced.get_column("completes").to_list() == [2, 2, 2]
    assert request_inputs(traced).is_empty()  # two requests a line: none pinned down alone
    from logparse.analysis.prefill import phase_input_exact

    assert phase_input_exact(traced) == (16_913, 6)
    # without the budget the tracer must assume a request may go on into the next line
    assert prefill_chunks(lines).get_column("completes").to_list() != [2, 2, 2]
