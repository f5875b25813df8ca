"""The object store stopped in the middle of a fleet's writing (moto's S3 server on 127.0.0.1 paused
with SIGSTOP, so that requests hang and time out, then resumed to look at what it holds): a clear
error, the runs not written left out, and no run marked complete that is not."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli

from fleet_helpers import FIXTURES, assert_same_dataset, s3_server

pytestmark = pytest.mark.slow
YEAR = "2026"


def test_the_store_stopped_mid_write_marks_no_incomplete_run_complete(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for k in range(4):  # eight runs, one after another (--jobs 1): the store stops after the first
        for engine, name in (("vllm", "gpustack-64k.log"), ("sglang", "gpustack-200k.log")):
            (logs / f"{engine}-{k}.log").write_bytes((FIXTURES / engine / name).read_bytes())
    reference = tmp_path / "ref"
    assert CliRunner().invoke(cli, ["ingest", str(logs), "--out", str(reference), "--year", YEAR]).exit_code == 0
    with s3_server() as s3:
        source = s3.upload(logs, "logs")
        out = f"s3://{s3.bucket}/ds"
        ingest = subprocess.Popen(
            [sys.executable, "-m", "logparse", "ingest", source, "--out", out, "--jobs", "1", "--year", YEAR,
             "--format", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "LOGPARSE_NO_PROGRESS": "1"})
        deadline = time.monotonic() + 60
        while not any(k.endswith("_ingest.json") for k in s3.keys("ds")):
            assert time.monotonic() < deadline and ingest.poll() is None, "no run was written"
            time.sleep(0.02)
        s3.process.send_signal(signal.SIGSTOP)
        try:
            stdout, stderr = ingest.communicate(timeout=240)
        finally:
            s3.process.send_signal(signal.SIGCONT)
        assert ingest.returncode == 1, stderr.decode()
        message = stderr.decode()
        assert "Traceback" not in message and "writing the dataset failed (cannot " in message and "s3://fleet/ds" in message
        assert "run the ingest again once the store is back" in message
        rows = {r["run"]: r for r in json.loads(stdout)}
        assert len(rows) == 8
        statuses = {r["status"] for r in rows.values()}
        assert "done" in statuses and statuses & {"failed", "not run"}
        assert all(r["status"] == "failed" for r in rows.values() if r["status"] != "done" and r["cause"] != "write")
        local = s3.download("ds", tmp_path / "got")
        complete = {p.parent.name.removeprefix("run=") for p in local.glob("run=*/_ingest.json")}
        assert {name for name, r in rows.items() if r["status"] == "done"} <= complete
        # every run the store holds a marker of is whole: its tables are the reference's, row for row
        assert_same_dataset(_only(reference, complete, tmp_path / "want"), _only(local, complete, tmp_path / "have"))
        again = CliRunner().invoke(cli, ["ingest", source, "--out", out, "--year", YEAR, "--format", "json"])
        assert again.exit_code == 0, again.output  # the store is back: the rest is written, the rest skipped
        assert {r["run"] for r in json.loads(again.stdout) if r["status"] == "skipped"} == complete
        assert_same_dataset(reference, s3.download("ds", tmp_path / "final"))


def _only(dataset: Path, runs: set[str], view: Path) -> Path:
    """A view of `dataset` (at `view`) holding only `runs`."""
    view.mkdir()
    for name in runs:
        (view / f"run={name}").symlink_to(dataset / f"run={name}")
    return view
