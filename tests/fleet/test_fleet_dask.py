"""The README's Dask snippet, run as it is written on a real local Dask (its processes scheduler),
with the logs and the dataset on this machine instead of S3: the per-run entry point is plain
data in, plain data out, and the dataset equals the threaded ingest's."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli

from fleet_helpers import ROOT, assert_same_dataset, fleet_logs

pytest.importorskip("dask.bag", reason="Dask is installed by `make test` (make ray)")
pytestmark = pytest.mark.slow


def snippet() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- fleet-dask-snippet -->\n```python\n(.*?)```", readme, re.S)
    assert found, "the README's Dask snippet is gone"
    return found.group(1)


def test_the_readme_dask_snippet_ingests_a_fleet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = fleet_logs(tmp_path / "logs")
    (logs / "notes.log").write_text("not a server log\n")
    code = snippet()
    assert '"s3://logs/sweep/"' in code and '"s3://lake/sweep"' in code
    code = code.replace('"s3://logs/sweep/"', repr(str(logs))).replace('"s3://lake/sweep"', repr(str(tmp_path / "ds")))
    scope: dict[str, object] = {}
    exec(compile(code, "README.md (Dask snippet)", "exec"), scope)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(list(logs.iterdir()))
    assert any(line.startswith("notes failed could not tell which engine") for line in printed)
    assert str(scope["failure"]).startswith("1 of 8 runs were not written: 1 not recognised")
    (logs / "notes.log").unlink()
    reference = tmp_path / "ref"
    assert CliRunner().invoke(cli, ["ingest", str(logs), "--out", str(reference)]).exit_code == 0
    assert_same_dataset(reference, tmp_path / "ds")
