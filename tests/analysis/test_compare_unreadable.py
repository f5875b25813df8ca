"""`compare` of several logs goes on past one it cannot read or analyse, as `ingest` does: that log
gets a row saying why, the others are compared, and the exit status is 1."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from logparse.analysis.compare import NotAnalysed, compare_rows, compare_warnings
from cli_checks import invoke

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VLLM_64K = FIXTURES / "vllm" / "gpustack-64k.log"
NOT_A_LOG = "line {i}: nothing an engine prints\n"


@pytest.fixture
def not_a_log(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("".join(NOT_A_LOG.format(i=i) for i in range(50)), encoding="utf-8")
    return path


def test_a_log_of_no_known_engine_gets_a_row_and_exit_1(not_a_log: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    result = invoke("compare", str(VLLM_64K), str(not_a_log), str(missing), "--json")
    assert result.exit_code == 1, result.output
    rows = json.loads(result.stdout)["rows"]
    by_source = {r["source"]: r for r in rows}
    assert set(by_source) == {str(VLLM_64K), str(not_a_log), str(missing)}
    assert by_source[str(VLLM_64K)]["gen_tps_mean"] == pytest.approx(501.36, abs=0.01)
    bad = by_source[str(not_a_log)]
    assert bad["phase"] is None and bad["engine"] is None
    assert bad["note"].startswith("not analysed: could not tell which engine wrote")
    assert by_source[str(missing)]["note"] == "not analysed: no such file"
    assert "2 of 3 logs could not be analysed" in result.stderr


def test_text_output_names_the_failed_log(not_a_log: Path) -> None:
    result = invoke("compare", str(VLLM_64K), str(not_a_log))
    assert result.exit_code == 1
    assert f"{not_a_log}: not analysed: could not tell which engine wrote" in result.stdout
    assert "501.4" in result.stdout
    table = result.stdout.split("\n\n")[0]
    assert str(not_a_log) in table and str(VLLM_64K) in table


def test_out_keeps_the_failed_row(not_a_log: Path, tmp_path: Path) -> None:
    result = invoke("compare", str(VLLM_64K), str(not_a_log), "--out", str(tmp_path / "cmp"))
    assert result.exit_code == 1
    rows = pl.read_parquet(tmp_path / "cmp" / "compare.parquet")
    assert rows.filter(pl.col("phase").is_null()).get_column("source").to_list() == [str(not_a_log)]


def test_every_log_failing_is_one_error(not_a_log: Path, tmp_path: Path) -> None:
    result = invoke("compare", str(not_a_log), str(tmp_path / "missing.log"))
    assert result.exit_code == 1
    assert result.output.startswith("Error: none of the 2 logs could be analysed")
    assert "no such file" in result.output and "could not tell which engine" in result.output


def test_one_log_fails_as_summary_does(not_a_log: Path, tmp_path: Path) -> None:
    result = invoke("compare", str(not_a_log))
    assert result.exit_code == 2 and "pass --engine" in result.output
    result = invoke("compare", str(tmp_path / "missing.log"))
    assert result.exit_code == 1 and "no such file" in result.output


def test_explicit_engine_applies_to_every_log(not_a_log: Path) -> None:
    result = invoke("compare", str(VLLM_64K), str(not_a_log), "--engine", "vllm", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["source"]: r for r in json.loads(result.stdout)["rows"]}
    assert rows[str(not_a_log)]["engine"] == "vllm"
    assert rows[str(not_a_log)]["note"].startswith("no phases:")


def test_a_broken_grammar_is_still_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("this is [ not toml", encoding="utf-8")
    result = invoke("compare", str(VLLM_64K), str(VLLM_64K), "--patterns", str(broken))
    assert result.exit_code == 1 and result.output.startswith("Error:")
    assert "none of the" not in result.output and "not analysed" not in result.output


def test_compare_rows_of_a_log_not_analysed() -> None:
    rows = compare_rows([NotAnalysed(source="x.log", reason="no such file")])
    assert rows.to_dicts() == [{**dict.fromkeys(rows.columns), "source": "x.log",
                                "note": "not analysed: no such file"}]
    assert compare_warnings([NotAnalysed(source="x.log", reason="no such file")]).height == 0
