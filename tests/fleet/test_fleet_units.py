"""The fleet's small parts: key globs, the S3 environment, the options, and Ray imported only when
`--executor ray` asks for it (a one-line error without it)."""
from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from logparse.cli import cli
from logparse.fleet import fleet_failure, plan_runs
from logparse.fleet.task import RunResult
from logparse.store.listing import _glob_regex
from logparse.store.remote import is_uri, s3_options

from fleet_helpers import FIXTURES

NAME = st.text(alphabet="ab.-_x1", min_size=0, max_size=8)
PATTERN = st.text(alphabet="ab.-_x1*?", min_size=0, max_size=8)


@given(pattern=PATTERN, name=NAME)
def test_a_glob_within_one_name_matches_as_fnmatch_does(pattern: str, name: str) -> None:
    assert bool(_glob_regex(pattern).match(name)) == fnmatch.fnmatchcase(name, pattern)


@given(folders=st.lists(st.text(alphabet="ab1", min_size=1, max_size=3), max_size=3), name=NAME)
def test_double_star_crosses_folders_and_star_does_not(folders: list[str], name: str) -> None:
    path = "/".join([*folders, f"{name}.log"])
    assert _glob_regex("**/*.log").match(path)
    assert bool(_glob_regex("*.log").match(path)) == (not folders)


def test_the_s3_environment_is_read_as_the_aws_tools_read_it() -> None:
    assert s3_options({}) == {}
    assert s3_options({"AWS_ENDPOINT_URL": "http://127.0.0.1:9000/"}) == {
        "scheme": "http", "endpoint_override": "127.0.0.1:9000", "region": "us-east-1"}
    assert s3_options({"AWS_ENDPOINT_URL": "https://a", "AWS_ENDPOINT_URL_S3": "https://s3.b:443",
                       "AWS_DEFAULT_REGION": "eu-west-3"}) == {
        "scheme": "https", "endpoint_override": "s3.b:443", "region": "eu-west-3"}
    assert s3_options({"AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-west-3"}) == {"region": "ap-south-1"}
    assert is_uri("s3://b/k") and is_uri("file:///tmp") and not is_uri("/tmp/x.log") and not is_uri("C:\\x")


def test_the_per_run_entry_point_takes_plain_data_that_pickles(tmp_path: Path) -> None:
    import pickle

    tasks = plan_runs([str(FIXTURES / "vllm" / "gpustack-64k.log")], tmp_path / "ds", year=2026)
    (task,) = tasks
    assert pickle.loads(pickle.dumps(task)) == task and Path(task.log).is_absolute()
    assert (tmp_path / "ds" / ".logparse").exists()  # claimed before any run is written


def test_fleet_failure_says_what_failed_and_why() -> None:
    def row(status: str, cause: str | None = None, error: str | None = None) -> RunResult:
        return RunResult("r", "l", status, cause=cause, error=error)

    assert fleet_failure([row("done"), row("skipped")]) is None
    some = fleet_failure([row("done"), row("failed", "engine"), row("failed", "unread")])
    assert str(some) == "2 of 3 runs were not written: 1 could not be read, 1 not recognised as an engine's log (pass --engine)"
    down = fleet_failure([row("failed", "write", "cannot write s3://b/x: timeout"),
                          row("not run", "write", "not started: writing the dataset failed (cannot write s3://b/x: timeout)")])
    assert type(down).__name__ == "InputError"  # none written: not a partial failure
    assert str(down).endswith("1 could not be written, 1 not started; writing the dataset failed (cannot write "
                              "s3://b/x: timeout): run the ingest again once the store is back (complete runs are skipped)")


def test_fleet_options_are_checked(tmp_path: Path) -> None:
    log = str(FIXTURES / "vllm" / "gpustack-64k.log")
    runner = CliRunner()
    assert "go with --executor ray" in runner.invoke(cli, ["ingest", log, "--concurrency", "2"]).output
    jsonl = runner.invoke(cli, ["ingest", log, "--out", f"file://{tmp_path}/ds", "--format", "jsonl"])
    assert jsonl.exit_code == 2 and "--format jsonl streams one log's events" in jsonl.output
    no_out = runner.invoke(cli, ["ingest", log, "--executor", "ray"])
    assert no_out.exit_code == 2 and "give --out DIR or --out URI" in no_out.output
    (tmp_path / "file").write_text("x")
    assert "a file is in the way" in runner.invoke(cli, ["ingest", log, "--out", f"file://{tmp_path}/file"]).output


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_without_ray_the_ray_executor_says_what_to_install(tmp_path: Path) -> None:
    log = FIXTURES / "vllm" / "gpustack-64k.log"
    code = ("import sys; sys.modules['ray'] = None\n"  # as if Ray were not installed
            "from logparse.cli import main\n"
            f"main(['ingest', {str(log)!r}, '--out', {str(tmp_path / 'ds')!r}, '--executor', 'ray'])")
    done = _python(code)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == "Error: --executor ray needs Ray, which is not installed: pip install 'logparse[ray]'"


def test_nothing_imports_ray_unless_the_ray_executor_is_asked_for(tmp_path: Path) -> None:
    log = FIXTURES / "vllm" / "gpustack-64k.log"
    code = ("import sys, json\n"
            "import logparse.ray, logparse.fleet\n"
            "from logparse.cli import main\n"
            "try:\n"
            f"    main(['ingest', {str(log)!r}, '--out', 'file://{tmp_path}/ds', '--format', 'json'])\n"
            "except SystemExit as e:\n"
            "    assert not e.code, e.code\n"
            "print(json.dumps(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))))\n")
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("name", ["server.log", "server.log.gz"])
def test_file_uris_are_local_paths(tmp_path: Path, name: str) -> None:
    import gzip
    import shutil

    src = FIXTURES / "vllm" / "gpustack-64k.log"
    target = tmp_path / name
    if name.endswith(".gz"):
        target.write_bytes(gzip.compress(src.read_bytes()))
    else:
        shutil.copy(src, target)
    result = CliRunner().invoke(cli, ["ingest", f"file://{target}", "--format", "json", "--year", "2026"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["source"] == f"file://{target}" and facts["engine"] == "vllm" and facts["lines"] > 100


def test_the_progress_line_counts_runs_and_read_bytes() -> None:
    import io

    from logparse.fleet.progress import FleetProgress, progress_wanted

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    bar = FleetProgress(5, stream=screen)
    bar(RunResult("a", "a.log", "done", bytes=3_000_000))
    bar(RunResult("b", "b.log", "skipped", bytes=9_000_000))
    bar(RunResult("c", "c.log", "failed"))
    assert bar.line().startswith("runs: 1 done, 1 skipped, 1 failed, 2 remaining of 5; ")
    assert screen.getvalue().count("\r") == 3 and "MB/s" in screen.getvalue()
    bar.close()
    assert screen.getvalue().endswith("\r\x1b[K")
    assert progress_wanted(screen) and not progress_wanted(io.StringIO())


def test_a_scheme_pyarrow_lacks_goes_through_fsspec() -> None:
    fsspec = pytest.importorskip("fsspec", reason="fsspec comes with the ray extra")
    memory = fsspec.filesystem("memory")
    memory.pipe("/fleet-units/logs/gpustack-64k.log", (FIXTURES / "vllm" / "gpustack-64k.log").read_bytes())
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", "memory://fleet-units/logs/", "--out", "memory://fleet-units/ds",
                                 "--format", "json", "--year", "2026"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["status"] == "done" and row["log"] == "memory://fleet-units/logs/gpustack-64k.log"
    assert memory.exists("/fleet-units/ds/run=gpustack-64k/_ingest.json")
    summary = runner.invoke(cli, ["summary", "memory://fleet-units/ds", "--brief"])
    assert summary.exit_code == 0 and summary.stdout.startswith("memory://fleet-units/ds: 1 runs")
    unknown = runner.invoke(cli, ["ingest", "nosuchscheme://x/y.log"])
    assert unknown.exit_code == 1 and "no file system for nosuchscheme://" in unknown.output
