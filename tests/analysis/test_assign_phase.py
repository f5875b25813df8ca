"""`phases.assign_phase` reads the phases' own line spans, whatever columns the frame has: the
prefill requests carry `first_line` / `last_line` of their own (which once shadowed the phases',
gave every request after a phase that phase, and left a `last_line_right` column that broke the
stacking of a restarted SGLang log's starts: `summary` failed on `make bench`'s corpus)."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from logparse.analysis.phases import assign_phase

PHASES = pl.DataFrame({"phase": [1, 2], "first_line": [10, 40], "last_line": [20, 50]})


def test_a_request_after_its_phase_end_has_no_phase_and_its_columns_are_kept() -> None:
    requests = pl.DataFrame({"request": [1, 2, 3], "first_line": [12, 25, 45], "last_line": [30, 35, 60]})
    got = assign_phase(requests, PHASES, by="first_line")
    assert got.columns == ["request", "first_line", "last_line", "phase"]
    assert got["phase"].to_list() == [1, None, 2]
    assert got["last_line"].to_list() == [30, 35, 60]


def test_a_frame_with_a_phase_column_has_it_replaced_in_place() -> None:
    rows = pl.DataFrame({"line_no": [15, 45], "phase": [9, 9], "x": [1, 2]})
    got = assign_phase(rows, PHASES)
    assert got.columns == ["line_no", "phase", "x"]
    assert got["phase"].to_list() == [1, 2]


@given(st.lists(st.integers(1, 70), max_size=30))
def test_each_line_gets_the_phase_whose_span_holds_it(lines: list[int]) -> None:
    frame = pl.DataFrame(
        {"line_no": lines, "last_line": [0] * len(lines)}, schema={"line_no": pl.Int64, "last_line": pl.Int64}
    )
    got = assign_phase(frame, PHASES)
    spans = PHASES.rows()
    for line, phase in zip(got["line_no"], got["phase"], strict=True):
        assert phase == next((p for p, a, b in spans if a <= line <= b), None)


def test_summary_reads_make_bench_s_restarted_sglang_log(tmp_path: object) -> None:
    from pathlib import Path

    from click.testing import CliRunner

    from logparse.cli import cli
    from logparse.perf.bench import write_log

    log = Path(str(tmp_path)) / "bench.log"
    write_log(log, "sglang", 4_000_000)
    result = CliRunner().invoke(cli, ["summary", str(log), "--json"])
    assert result.exit_code == 0, result.output
    assert '"restarts"' in result.output
