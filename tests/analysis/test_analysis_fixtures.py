"""Every emulated fixture (`fixtures/<engine>/*.log` with a `.truth.json`) is analysed to its truth."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from logparse.analysis import analyze_log

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted(p for p in FIXTURES.glob("*/*.log") if p.with_suffix(".truth.json").exists())


@pytest.mark.skipif(not CASES, reason="no emulated fixtures yet")
@pytest.mark.parametrize("log", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_fixture_windows_and_inputs_match_the_truth(log: Path) -> None:
    truth = json.loads(log.with_suffix(".truth.json").read_text(encoding="utf-8"))
    a = analyze_log(log)
    assert a.engine == truth["engine"]
    assert a.phases.height == len(truth["phases"])
    for i, tp in enumerate(truth["phases"], start=1):
        ph = a.phases.row(i - 1, named=True)
        lines = a.samples.filter(pl.col("stable") & (pl.col("phase") == i)).sort("line_no").get_column("line_no")
        expected = tp["stable"]
        assert lines.to_list() == ([] if expected is None else expected["lines"])
        if expected is not None:
            # the window is the longest unbroken run of the qualifying samples
            w = a.windows.filter(pl.col("phase") == i).row(0, named=True)
            run = expected["run"]
            assert (w["first_line"], w["last_line"], w["samples"]) == (run["lines"][0], run["lines"][-1], run["samples"])
            assert w["gen_tps_mean"] == pytest.approx(run["gen_tps_mean"], rel=1e-9)
            assert ph["concurrency"] == tp["concurrency"]
        if truth["engine"] == "sglang":
            assert ph["input_tokens"] == tp["input_tokens"] and ph["input_tokens_estimated"] is False
        else:   # an estimate from prompt throughput × interval
            assert ph["input_tokens_estimated"] is True
            assert ph["input_tokens"] == pytest.approx(tp["input_tokens"], rel=0.05)
