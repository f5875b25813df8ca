"""What reading a log found (a cut .gz, invalid UTF-8...) is kept with its tables, so the commands
that read the tables later still warn about it."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from click.testing import CliRunner

from conftest import FIXTURES
from logparse.cli import cli
from logparse.store import STATS_FILE

LOG = FIXTURES / "vllm" / "gpustack-64k.log"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def cut_gz(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    whole = gzip.compress(LOG.read_bytes())
    path = folder / "cut.log.gz"
    path.write_bytes(whole[: len(whole) // 2])
    return path


def warning_codes(target: Path) -> set[str]:
    result = run("summary", str(target), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    summaries = data["runs"] if "runs" in data else [data]
    return {d["code"] for s in summaries for d in s["diagnostics"] if d["severity"] == "warning"}


def test_a_table_folder_keeps_the_warnings_of_its_log(tmp_path: Path) -> None:
    log = cut_gz(tmp_path / "logs")
    assert "input_read" in warning_codes(log)
    out = tmp_path / "tables"
    assert run("ingest", str(log), "--out", str(out)).exit_code == 0
    assert (out / STATS_FILE).exists() and "input_read" in warning_codes(out)


def test_a_dataset_run_keeps_the_warnings_of_its_log(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    cut_gz(logs)
    (logs / "whole.log").write_bytes(LOG.read_bytes())
    ds = tmp_path / "ds"
    assert run("ingest", str(logs), "--out", str(ds)).exit_code == 0
    assert "input_read" in warning_codes(ds / "run=cut")
    assert "input_read" not in warning_codes(ds / "run=whole")


def test_the_read_stats_of_an_earlier_output_are_not_carried_over(tmp_path: Path) -> None:
    out = tmp_path / "tables"
    assert run("ingest", str(cut_gz(tmp_path / "logs")), "--out", str(out)).exit_code == 0
    assert (out / STATS_FILE).exists()
    logs = tmp_path / "more"
    logs.mkdir()
    for name in ("a.log", "b.log"):
        (logs / name).write_bytes(LOG.read_bytes())
    assert run("ingest", str(logs), "--out", str(out), "--force").exit_code == 0  # now a dataset
    assert not (out / STATS_FILE).exists() and (out / "run=a" / STATS_FILE).exists()
