"""The report's Core Result comes from `compare.core_result_frame`'s rows, not from parsing the
text table `compare.core_result` prints."""
from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from report_inputs import ROOT

from logparse.analysis import compare
from logparse.report.build import Note, core_result_table, load_runs

VLLM_64K = ROOT / "fixtures" / "vllm" / "gpustack-64k.log"
SGLANG_64K = ROOT / "fixtures" / "sglang" / "gpustack-64k.log"
_RUNS: list[Any] = []


def _runs() -> list[Any]:
    """The two 64K logs ingested and analysed as the report does (once per session)."""
    if not _RUNS:
        _RUNS.extend(load_runs([VLLM_64K, SGLANG_64K], progress=lambda _: None)[0])
    return _RUNS


def test_report_core_is_the_structured_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs()

    def no_text(*_: object) -> str:
        raise AssertionError("the report must not read the text table")

    monkeypatch.setattr(compare, "core_result", no_text)
    notes: list[Note] = []
    core = core_result_table(runs, notes)
    assert notes == []
    rows = compare.compare_rows([r.analysis for r in runs if r.analysis is not None])
    expected = compare.core_result_frame(rows, compare.compare_degradation(rows))
    assert core is not None and expected is not None
    assert core.equals(expected)


def test_report_core_keeps_cells_text_would_mangle(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs()
    # Cells a dashed-rule parse cannot give back: wider than the rule and padded.
    odd = pl.DataFrame({"scenario": ["  a  b  "], "sglang": ["x\ny"], "vllm": [""], "result": ["r"]})
    monkeypatch.setattr(compare, "core_result_frame", lambda *_: odd)
    core = core_result_table(runs, [])
    assert core is not None and core.equals(odd)
