"""Fleet ingest on a real local Ray (one session for the module: `ray.init(num_cpus=2,
include_dashboard=False)`, its servers on 127.0.0.1): the dataset equals the threaded one, on a
local folder and on S3 (moto's server on 127.0.0.1), reruns skip, a worker killed mid-task is
retried into a complete run with no duplicate, and `logparse.ray.read_events` reads one kind across
runs. Ray is installed by `make test` (`make ray`): skipped without it."""
from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from logparse.cli import cli

from fleet_helpers import FIXTURES, S3Server, assert_same_dataset, dataset_tables, fleet_logs, s3_server

ray = pytest.importorskip("ray", reason="the ray extra is installed by `make test` (make ray)")
pytestmark = pytest.mark.slow
YEAR = "2026"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def session(s3: S3Server) -> Iterator[Any]:
    """Started after the store's environment is set: Ray's workers read theirs when they start."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="warning", log_to_driver=False)
    assert ray.nodes()[0]["NodeManagerAddress"] == "127.0.0.1"
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fleet_logs(tmp_path_factory.mktemp("ray") / "logs")


@pytest.fixture(scope="module")
def threaded(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("threaded") / "ds"
    result = run("ingest", str(logs), "--out", str(out), "--year", YEAR, "--format", "json")
    assert result.exit_code == 0, result.output
    return out


def test_the_ray_dataset_is_the_threaded_one_and_a_rerun_skips(logs: Path, threaded: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    result = run("ingest", str(logs), "--out", str(out), "--executor", "ray", "--year", YEAR, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["status"] for r in rows] == ["done"] * len(list(logs.iterdir()))
    assert_same_dataset(threaded, out)
    assert not list(out.glob(".*logparse-tmp"))
    again = run("ingest", str(logs), "--out", str(out), "--executor", "ray", "--concurrency", "1", "--year", YEAR)
    assert again.exit_code == 0 and f"0 written, {len(rows)} already complete (skipped)" in again.stdout


def test_ray_on_s3_and_read_events(s3: S3Server, logs: Path, threaded: Path, tmp_path: Path) -> None:
    import logparse.ray

    source = s3.upload(logs, "logs")
    out = f"s3://{s3.bucket}/ds"
    results = logparse.ray.ingest([source], out=out, concurrency=2, year=int(YEAR))
    assert {r.status for r in results} == {"done"}
    assert_same_dataset(threaded, s3.download("ds", tmp_path / "ds"))
    decode = logparse.ray.read_events(out, "decode_batch").to_pandas()
    tables = dataset_tables(threaded)
    want = pl.concat([t["decode_batch"].with_columns(run=pl.lit(r)) for r, t in tables.items()
                      if "decode_batch" in t])
    got = pl.from_pandas(decode).cast(want.schema).sort("run", "line_no")  # type: ignore[arg-type]
    assert_frame_equal(got, want.sort("run", "line_no"))
    assert sorted(logparse.ray.complete_runs(out)) == sorted(tables)
    s3.fs().delete_file(f"{s3.bucket}/ds/run=gpustack-200k/_ingest.json")
    assert "gpustack-200k" not in logparse.ray.complete_runs(out)
    assert set(logparse.ray.read_events(out, "decode_batch").unique("run")) == {
        r for r, t in tables.items() if "decode_batch" in t} - {"gpustack-200k"}


def _worker_of(run_name: str) -> int | None:
    """The pid of the Ray worker running the task of `run_name` (its process title names the task)."""
    title = f"ray::logparse:{run_name}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(title):
                    return int(entry.name)
            except OSError:
                continue
    return None


def test_a_worker_killed_mid_task_is_retried_into_one_complete_run(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    piece = (FIXTURES / "sglang" / "gpustack-200k.log").read_bytes()
    (logs / "big.log").write_bytes(piece * 500)  # ~38 MB: a task long enough to be killed in the middle
    shutil.copy(FIXTURES / "vllm" / "gpustack-64k.log", logs / "small.log")
    reference = tmp_path / "ref"
    assert run("ingest", str(logs), "--out", str(reference), "--year", YEAR).exit_code == 0
    out = tmp_path / "ds"
    killed: list[int] = []

    def kill_when_writing() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            writing = list(out.glob(".run=big.*.logparse-tmp/kind=*/*.parquet"))
            pid = _worker_of("big") if writing else None
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.01)

    watcher = threading.Thread(target=kill_when_writing)
    watcher.start()
    result = run("ingest", str(logs), "--out", str(out), "--executor", "ray", "--year", YEAR, "--format", "json")
    watcher.join()
    assert killed, "the task ended before it could be killed"
    assert result.exit_code == 0, result.output
    assert {r["run"]: r["status"] for r in json.loads(result.stdout)} == {"big": "done", "small": "done"}
    assert_same_dataset(reference, out)  # whole, no row twice
    assert not list(out.glob(".*logparse-tmp"))  # the killed attempt's scratch removed by the retry


def test_when_the_output_cannot_be_written_the_runs_left_are_cancelled(tmp_path: Path) -> None:
    from logparse.fleet import fleet_failure, plan_runs, run_tasks

    logs = tmp_path / "logs"
    logs.mkdir()
    for k in range(12):
        shutil.copy(FIXTURES / "vllm" / "gpustack-64k.log", logs / f"run{k}.log")
    out = tmp_path / "ds"
    tasks = plan_runs([str(logs)], out, year=int(YEAR))
    shutil.rmtree(out)
    out.write_text("a file where the dataset was")  # every run's scratch folder beside it fails
    results = run_tasks(tasks, executor="ray")
    assert len(results) == 12 and {r.status for r in results} <= {"failed", "not run"}
    assert {r.cause for r in results} == {"write"} and any(r.status == "not run" for r in results)
    assert sum(r.status == "failed" for r in results) <= 4  # at most the runs in flight (2 per CPU)
    assert "writing the dataset failed (cannot write" in str(fleet_failure(results))
    assert "a file is in the way" in next(r.error for r in results if r.status == "failed")
