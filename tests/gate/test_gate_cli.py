"""`logparse gate` at the command line: table folders and datasets as sides, errors, help, README."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, ROOT
from logparse.cli import cli

V64 = FIXTURES / "vllm" / "gpustack-64k.log"
S64 = FIXTURES / "sglang" / "gpustack-64k.log"


def gate(*args: str) -> tuple[int, str]:
    out = CliRunner().invoke(cli, ["gate", *args])
    return out.exit_code, out.output


@pytest.mark.slow
def test_a_table_folder_and_a_dataset_of_runs_are_sides(tmp_path: Path) -> None:
    folder, dataset = tmp_path / "tables", tmp_path / "nightly"
    assert CliRunner().invoke(cli, ["ingest", str(V64), "--out", str(folder)]).exit_code == 0
    copy = tmp_path / "copy" / "gpustack-64k-again.log"
    copy.parent.mkdir()
    copy.write_bytes(V64.read_bytes())
    assert CliRunner().invoke(cli, ["ingest", str(V64), str(copy), "--out", str(dataset)]).exit_code == 0
    code, output = gate(str(dataset), str(folder), "--json")
    assert code == 0, output
    doc = json.loads(output)
    assert len(doc["baselines"]) == 2 and doc["verdict"] == "holds"
    decode = next(m for m in doc["metrics"] if m["metric"] == "decode_tps")
    assert decode["baselines"] == [decode["baseline"]] * 2 == [decode["candidate"]] * 2
    code, output = gate(str(folder), str(dataset))
    assert code == 1 and "the candidate is one run" in output


def test_one_run_is_a_usage_error_and_a_missing_file_one_clear_error() -> None:
    code, output = gate(str(V64))
    assert code == 2 and "at least one BASELINE and the CANDIDATE" in output
    code, output = gate(str(V64), "no-such.log")
    assert code == 1 and output.startswith("Error: ") and "Traceback" not in output


def test_engine_change_needs_the_flag() -> None:
    code, output = gate(str(S64), str(V64))
    assert code == 2 and "engine: sglang" in output and "--allow-engine-change" in output
    code, output = gate(str(S64), str(V64), "--allow-engine-change")
    assert code == 1 and "(compared: --allow-engine-change)" in output  # vLLM's 32 OOM retries regress


def test_a_bad_threshold_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    code, output = gate(str(V64), str(V64), "--threshold", "speed=3")
    assert code == 1 and "unknown metric 'speed'" in output
    toml = tmp_path / "t.toml"
    toml.write_text("[thresholds]\ndefault = 'five'\n")
    code, output = gate(str(V64), str(V64), "--thresholds", str(toml))
    assert code == 1 and "must be a number of percent" in output


def test_an_unwritable_junit_path_is_one_clear_error(tmp_path: Path) -> None:
    code, output = gate(str(V64), str(V64), "--junit", str(tmp_path))
    assert code == 2 and "is a directory" in output  # refused before any log is read


@pytest.mark.parametrize("section", ["gate BASELINE", "--junit", "exit"])
def test_the_readme_shows_a_ci_snippet_using_gate(section: str) -> None:
    readme = (ROOT / "README.md").read_text()
    snippet = readme.split("## Regression gate", 1)[1].split("\n## ", 1)[0]
    assert "logparse gate" in snippet and "GITHUB_STEP_SUMMARY" in snippet
    if section == "gate BASELINE":
        assert "| `logparse gate BASELINE… CANDIDATE" in readme
    elif section == "--junit":
        assert "--junit" in snippet and "--markdown" in snippet
    else:
        assert "exit status" in snippet.lower()


def test_the_help_lists_every_metric_once() -> None:
    """The epilog is written by hand (--help imports no analysis): it must name exactly METRICS."""
    from logparse.cli.gate import EPILOG
    from logparse.gate.metrics import METRICS

    listed = EPILOG.split("Metrics (--threshold KEY=PCT):", 1)[1]
    named = {word.strip(",;") for word in listed.split() if "_" in word or word.strip(",;") in ("oom", "preemptions")}
    assert named == {m.key for m in METRICS}
