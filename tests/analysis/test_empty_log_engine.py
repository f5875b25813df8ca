"""An empty (or blank) log names no engine: `summary`, `windows` and `compare` do not claim the
placeholder grammar it was read with, and say why as the ingest headline does."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_checks import empty_log, invoke  # noqa: F401 (empty_log: a pytest fixture)
from logparse.headline import BLANK_LINES_ONLY, EMPTY_FILE

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VLLM_64K = FIXTURES / "vllm" / "gpustack-64k.log"
ENGINES = ("vllm", "sglang")


@pytest.fixture
def blank_log(tmp_path: Path) -> Path:
    path = tmp_path / "blank.log"
    path.write_text("\n  \n\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("engine", [None, "vllm"])
def test_summary_header_of_an_empty_log_claims_no_engine(empty_log: Path, engine: str | None) -> None:
    args = ["summary", str(empty_log), *(["--engine", engine] if engine else [])]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert header == f"{empty_log}: - ({EMPTY_FILE})"
    assert not any(e in result.stdout for e in ENGINES)
    ingest = invoke("ingest", str(empty_log), *args[2:])
    assert f"- ({EMPTY_FILE})" in ingest.stdout  # the same words as the ingest headline


def test_summary_json_of_an_empty_log(empty_log: Path, tmp_path: Path) -> None:
    result = invoke("summary", str(empty_log), "--json", "--out", str(tmp_path / "out"))
    data = json.loads(result.stdout)
    assert data["engine"] is None and data["no_content"] == EMPTY_FILE
    assert json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))["engine"] is None


def test_summary_of_a_blank_log(blank_log: Path) -> None:
    result = invoke("summary", str(blank_log))
    assert result.stdout.splitlines()[0] == f"{blank_log}: - ({BLANK_LINES_ONLY})"
    assert json.loads(invoke("summary", str(blank_log), "--json").stdout)["no_content"] == BLANK_LINES_ONLY


def test_summary_of_a_log_still_names_its_engine() -> None:
    result = invoke("summary", str(VLLM_64K))
    assert result.stdout.splitlines()[0] == f"{VLLM_64K}: vllm 0.26.0"
    data = json.loads(invoke("summary", str(VLLM_64K), "--json").stdout)
    assert data["engine"] == "vllm" and "no_content" not in data  # as a dataset run's summary


@pytest.mark.parametrize("fixture", ["empty_log", "blank_log"])
def test_windows_of_an_empty_log_claims_no_engine(fixture: str, request: pytest.FixtureRequest) -> None:
    log = request.getfixturevalue(fixture)
    for args in ([], ["--json"]):
        result = invoke("windows", str(log), *args)
        assert result.exit_code == 0
        assert not any(e in result.output for e in ENGINES), result.output


def test_compare_rows_of_empty_and_blank_logs_claim_no_engine(empty_log: Path, blank_log: Path) -> None:
    result = invoke("compare", str(empty_log), str(blank_log), str(VLLM_64K), "--json")
    assert result.exit_code == 0, result.output
    engines = {r["source"]: r["engine"] for r in json.loads(result.stdout)["rows"]}
    assert engines == {str(empty_log): None, str(blank_log): None, str(VLLM_64K): "vllm"}
    text = invoke("compare", str(empty_log), str(blank_log), str(VLLM_64K)).stdout
    rows = {line.split()[0]: line.split()[1] for line in text.splitlines()[2:5]}
    assert rows[str(empty_log)] == "-" and rows[str(blank_log)] == "-"
