"""Fleet ingest on object storage, against a real S3-compatible server (moto's server mode on
127.0.0.1, started here): logs read from the store as they stream, the dataset written run by
run with its completion markers last, reruns, failures that stay rows, and every command reading
the dataset back from the store."""
from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli

from fleet_helpers import S3Server, assert_same_dataset, fleet_logs, s3_server

YEAR = "2026"  # the same year for stamps that print none, whatever the files' modification times
pytestmark = pytest.mark.slow  # a server and a dataset per module: seconds, not milliseconds


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        yield server


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fleet_logs(tmp_path_factory.mktemp("fleet") / "logs")


@pytest.fixture(scope="module")
def threaded(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dataset the threaded ingest writes, the reference."""
    out = tmp_path_factory.mktemp("threaded") / "ds"
    result = run("ingest", str(logs), "--out", str(out), "--year", YEAR, "--format", "json")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def on_s3(s3: S3Server, logs: Path) -> str:
    """The logs uploaded, ingested from the store into the store; the dataset's URI."""
    source = s3.upload(logs, "logs")
    result = run("ingest", source, "--out", f"s3://{s3.bucket}/ds", "--year", YEAR, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["status"] for r in rows] == ["done"] * len(rows) and len(rows) == len(list(logs.iterdir()))
    return f"s3://{s3.bucket}/ds"


def test_the_dataset_on_s3_is_the_threaded_one_row_for_row(s3: S3Server, on_s3: str, threaded: Path,
                                                         tmp_path: Path) -> None:
    local = s3.download("ds", tmp_path / "ds")
    assert_same_dataset(threaded, local)
    for run_dir in local.glob("run=*"):  # every run has its marker, naming its log on the store
        info = json.loads((run_dir / "_ingest.json").read_text())
        assert info["source"].startswith(f"s3://{s3.bucket}/logs/")
    assert (local / ".logparse").read_text().startswith("written by logparse")


def test_a_rerun_skips_the_complete_runs_and_force_redoes_them(s3: S3Server, on_s3: str) -> None:
    before = s3.keys("ds")
    again = run("ingest", f"s3://{s3.bucket}/logs", "--out", on_s3, "--year", YEAR, "--format", "json")
    assert again.exit_code == 0, again.output
    rows = json.loads(again.stdout)
    assert {r["status"] for r in rows} == {"skipped"} and all(r["lines"] > 0 for r in rows)
    assert s3.keys("ds") == before
    forced = run("ingest", f"s3://{s3.bucket}/logs", "--out", on_s3, "--year", YEAR, "--force")
    assert forced.exit_code == 0, forced.output
    assert f"{len(rows)} written, 0 already complete" in forced.stdout
    assert s3.keys("ds") == before  # the same files again: nothing left over, nothing doubled


def test_summary_and_the_other_commands_read_the_dataset_on_s3(s3: S3Server, on_s3: str, threaded: Path) -> None:
    remote = run("summary", on_s3, "--json")
    local = run("summary", str(threaded), "--json")
    assert remote.exit_code == local.exit_code == 0, remote.output
    got, want = json.loads(remote.stdout), json.loads(local.stdout)
    assert got["fleet"] == want["fleet"]
    assert [r["source"] for r in got["runs"]] == [f"{on_s3}/run={r['run']}" for r in got["runs"]]
    strip = [{k: v for k, v in r.items() if k != "source"} for r in got["runs"]]
    assert strip == [{k: v for k, v in r.items() if k != "source"} for r in want["runs"]]
    brief = run("summary", on_s3, "--brief")
    assert brief.exit_code == 0 and brief.stdout.startswith(f"{on_s3}: {len(got['runs'])} runs")
    one = run("windows", f"{on_s3}/run=gpustack-200k")
    assert one.exit_code == 0 and one.stdout == run("windows", str(threaded / "run=gpustack-200k")).stdout
    compared = run("compare", f"{on_s3}/run=gpustack-64k", f"{on_s3}/run=gpustack-200k", "--json")
    assert compared.exit_code == 0, compared.output
    assert {r["source"] for r in json.loads(compared.stdout)["rows"]} == {f"{on_s3}/run=gpustack-64k",
                                                                        f"{on_s3}/run=gpustack-200k"}


def test_a_log_a_client_file_and_a_report_read_from_s3(s3: S3Server, logs: Path, tmp_path: Path) -> None:
    log = f"s3://{s3.bucket}/logs/gpustack-64k.log"
    client = Path(__file__).parents[2] / "fixtures" / "bench" / "vllm_bench_serve_c16.json"
    bench = s3.upload(client, f"bench/{client.name}")
    streamed = run("summary", log, "--json", "--year", YEAR)
    assert streamed.exit_code == 0, streamed.output
    assert json.loads(streamed.stdout)["source"] == log
    local = run("summary", str(logs / "gpustack-64k.log"), "--json", "--year", YEAR)
    assert {k: v for k, v in json.loads(streamed.stdout).items() if k != "source"} == \
        {k: v for k, v in json.loads(local.stdout).items() if k != "source"}
    fetched = run("bench", bench, "--json")
    assert fetched.exit_code == 0 and bench in fetched.stdout  # named by its URI
    assert fetched.stdout.replace(bench, str(client)) == run("bench", str(client), "--json").stdout
    reconciled = run("reconcile", log, bench, "--json", "--year", YEAR)
    assert json.loads(reconciled.stdout)["server_phase"]["engine"] == "vllm"
    report = run("report", f"s3://{s3.bucket}/ds/run=gpustack-64k", "--bench", bench, "-o", str(tmp_path / "r"),
                 "--no-images")
    assert report.exit_code == 0, report.output
    assert (tmp_path / "r" / "index.html").exists()
    missing = run("summary", f"s3://{s3.bucket}/nope.log")
    assert missing.exit_code == 1 and "s3://fleet/nope.log: no such file" in missing.output
    assert "Traceback" not in missing.output


def test_a_corrupt_gz_and_an_undetectable_log_are_rows_while_the_others_land(s3: S3Server, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "vllm", folder, ignore=shutil.ignore_patterns(
        "*.events", "*.json", "emulated-*"))
    (folder / "corrupt.log.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"not deflate at all" * 50)
    (folder / "notes.log").write_text("a shopping list\nmilk\neggs\n")
    whole = gzip.compress((folder / "gpustack-64k.log").read_bytes())
    (folder / "cut.log.gz").write_bytes(whole[: len(whole) * 2 // 3])
    source = s3.upload(folder, "mixed")
    out = f"s3://{s3.bucket}/mixed-ds"
    result = run("ingest", source, "--out", out, "--year", YEAR, "--format", "json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    assert rows["gpustack-64k"]["status"] == rows["gpustack-200k"]["status"] == "done"
    assert rows["corrupt"]["status"] == "failed" and rows["corrupt"]["cause"] == "unread"
    assert "compressed stream ends early or is corrupt" in rows["corrupt"]["error"]
    assert rows["notes"]["status"] == "failed" and "could not tell which engine" in rows["notes"]["error"]
    assert rows["cut"]["status"] == "done" and "compressed stream ends early" in rows["cut"]["problems"][0]
    assert "2 of 5 runs were not written: 1 could not be read, 1 not recognised" in result.stderr
    keys = s3.keys("mixed-ds")
    assert not any(k.startswith(("mixed-ds/run=corrupt/", "mixed-ds/run=notes/")) for k in keys)
    assert {k.split("/")[1] for k in keys if k.endswith("_ingest.json")} == {
        "run=gpustack-64k", "run=gpustack-200k", "run=cut"}
    table = run("ingest", source, "--out", out, "--year", YEAR)
    assert table.exit_code == 1 and "3 already complete (skipped), 2 failed" in table.stdout
    strict = run("ingest", f"{source}/cut.log.gz", "--out", out, "--year", YEAR, "--strict")
    assert strict.exit_code == 1 and "1 of 1 log(s) had problems reading the input (--strict)" in strict.output
    assert "compressed stream ends early" in strict.stdout  # the complete run's problems, from its marker


def test_an_incomplete_run_is_not_counted_and_a_rerun_completes_it(s3: S3Server, logs: Path, tmp_path: Path) -> None:
    source = s3.upload(logs / "gpustack-64k.log", "one/gpustack-64k.log")
    out = f"s3://{s3.bucket}/part-ds"
    assert run("ingest", source, "--out", out, "--year", YEAR).exit_code == 0
    s3.fs().delete_file(f"{s3.bucket}/part-ds/run=gpustack-64k/_ingest.json")  # as if stopped before the end
    shown = run("summary", out, "--json")
    assert shown.exit_code == 1 and "an incomplete run (no completion marker _ingest.json)" in shown.output
    again = run("ingest", source, "--out", out, "--year", YEAR, "--format", "json")
    assert again.exit_code == 0 and json.loads(again.stdout)[0]["status"] == "done"
    assert run("summary", out, "--brief").exit_code == 0


def test_a_foreign_prefix_is_refused_and_a_run_name_taken_by_another_log_is_a_conflict(
        s3: S3Server, logs: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("mine")
    foreign = s3.upload(tmp_path / "mine.txt", "foreign/mine.txt").rsplit("/", 1)[0]
    refused = run("ingest", str(logs / "gpustack-64k.log"), "--out", foreign)
    assert refused.exit_code == 1 and "not empty and was not written by logparse" in refused.output
    out = f"s3://{s3.bucket}/names"
    first = tmp_path / "a" / "server.log"
    second = tmp_path / "b" / "server.log"
    for path, log in ((first, "gpustack-64k.log"), (second, "gpustack-200k.log")):
        path.parent.mkdir()
        shutil.copy(logs / log, path)
    assert run("ingest", str(first), "--out", out, "--year", YEAR).exit_code == 0
    clash = run("ingest", str(second), "--out", out, "--year", YEAR, "--format", "json")
    assert clash.exit_code == 1
    (row,) = json.loads(clash.stdout)
    assert row["cause"] == "conflict" and str(first) in row["error"] and "--force" in row["error"]


def test_globs_of_keys(s3: S3Server, logs: Path) -> None:
    s3.upload(logs, "globbed/a")
    s3.upload(logs / "gpustack-64k.log", "globbed/b/deep/x.log")
    from logparse.store import expand_inputs

    files, several = expand_inputs([f"s3://{s3.bucket}/globbed/**/*.log"])
    assert several and f"s3://{s3.bucket}/globbed/b/deep/x.log" in files
    assert not any(f.endswith(".gz") for f in files)
    files, _ = expand_inputs([f"s3://{s3.bucket}/globbed/a/gpustack-*.log"])
    assert files == [f"s3://{s3.bucket}/globbed/a/gpustack-200k.log", f"s3://{s3.bucket}/globbed/a/gpustack-64k.log"]
    none = run("ingest", f"s3://{s3.bucket}/globbed/*.nothing", "--out", f"s3://{s3.bucket}/g-ds")
    assert none.exit_code == 1 and "the pattern matches no file" in none.output


def test_a_scratch_folder_that_cannot_be_written_stops_the_fleet_with_its_reason(
        s3: S3Server, logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a-file").write_text("in the way")
    monkeypatch.setenv("LOGPARSE_SCRATCH", str(tmp_path / "a-file"))
    result = run("ingest", str(logs), "--out", f"s3://{s3.bucket}/no-scratch", "--jobs", "1", "--format", "json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    rows = json.loads(result.stdout)
    assert rows[0]["status"] == "failed" and rows[0]["cause"] == "write"
    assert f"cannot write {tmp_path / 'a-file'}" in rows[0]["error"]
    assert {r["status"] for r in rows[1:]} == {"not run"}
    assert "writing the dataset failed (cannot write" in result.stderr
    assert not any(k.endswith("_ingest.json") for k in s3.keys("no-scratch"))


def test_outputs_written_to_s3(s3: S3Server, on_s3: str, tmp_path: Path) -> None:
    client = Path(__file__).parents[2] / "fixtures" / "bench" / "vllm_bench_serve_c16.json"
    summary = run("summary", on_s3, "--brief", "--out", f"s3://{s3.bucket}/out/summary")
    assert summary.exit_code == 0, summary.output
    assert {"out/summary/fleet.csv", "out/summary/fleet.parquet", "out/summary/.logparse"} <= set(s3.keys("out/summary"))
    one = run("summary", f"{on_s3}/run=gpustack-64k", "--out", f"s3://{s3.bucket}/out/one")
    assert one.exit_code == 0 and "out/one/summary.json" in s3.keys("out/one")
    report = run("report", f"{on_s3}/run=gpustack-64k", "-o", f"s3://{s3.bucket}/out/report", "--no-images")
    assert report.exit_code == 0, report.output
    assert report.stdout.startswith(f"s3://{s3.bucket}/out/report/index.html: ")
    assert "out/report/index.html" in s3.keys("out/report")
    bench = run("bench", str(client), "-o", f"s3://{s3.bucket}/out/bench")
    assert bench.exit_code == 0 and any(k.endswith(".parquet") for k in s3.keys("out/bench"))
    for command in (["windows", f"{on_s3}/run=gpustack-200k"], ["compare", f"{on_s3}/run=gpustack-200k"]):
        written = run(*command, "--out", f"s3://{s3.bucket}/out/{command[0]}")
        assert written.exit_code == 0 and s3.keys(f"out/{command[0]}"), written.output


def test_a_run_left_half_written_is_cleared_before_it_is_written_again(s3: S3Server, logs: Path,
                                                                       threaded: Path, tmp_path: Path) -> None:
    """What a killed attempt leaves on the store (parts, no marker) is never mixed into the retry."""
    source = s3.upload(logs / "gpustack-200k.log", "half/logs/gpustack-200k.log")
    out = f"s3://{s3.bucket}/half/ds"
    assert run("ingest", source, "--out", out, "--year", YEAR).exit_code == 0
    stale = threaded / "run=gpustack-64k" / "kind=engine_stats" / "part-00000.parquet"
    s3.upload(stale, "half/ds/run=gpustack-200k/kind=decode_batch/part-00007.parquet")  # another attempt's part
    s3.upload(stale, "half/ds/run=gpustack-200k/kind=engine_stats/part-00000.parquet")  # a kind this log has not
    s3.fs().delete_file(f"{s3.bucket}/half/ds/run=gpustack-200k/_ingest.json")
    again = run("ingest", source, "--out", out, "--year", YEAR, "--format", "json")
    assert again.exit_code == 0 and json.loads(again.stdout)[0]["status"] == "done"
    local = s3.download("half/ds", tmp_path / "ds")
    expected = tmp_path / "want"
    (expected / "run=gpustack-200k").parent.mkdir()
    shutil.copytree(threaded / "run=gpustack-200k", expected / "run=gpustack-200k")
    assert_same_dataset(expected, local)
