"""Many logs: one hive-partitioned Parquet dataset (run=, kind=) that polars reads as is."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from logparse.cli import cli
from logparse.ingest import ingest

from ingest_helpers import FIXTURES


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


@pytest.fixture()
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("gpustack-64k.log", "emulated-0.4-docker-retract.log"):
        shutil.copy(FIXTURES / "sglang" / name, folder / f"sglang-{name}")
    shutil.copy(FIXTURES / "vllm" / "gpustack-64k.log", folder / "vllm-gpustack-64k.log")
    (folder / "notes.md").write_text("not a log")
    return folder


def test_a_folder_becomes_a_dataset_polars_reads_as_is(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    result = run("ingest", str(logs), "--out", str(out), "--jobs", "1", "--format", "json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert [f["run"] for f in facts] == ["sglang-emulated-0.4-docker-retract", "sglang-gpustack-64k",
                                         "vllm-gpustack-64k"]
    assert sorted(os.listdir(out)) == [".logparse", "run=sglang-emulated-0.4-docker-retract",
                                       "run=sglang-gpustack-64k", "run=vllm-gpustack-64k"]
    decode = pl.scan_parquet(str(out / "run=*" / "kind=decode_batch" / "*.parquet"), hive_partitioning=True).collect()
    assert set(decode["run"].unique()) == {"sglang-emulated-0.4-docker-retract", "sglang-gpustack-64k"}
    assert set(decode["kind"].unique()) == {"decode_batch"}
    one = decode.filter(pl.col("run") == "sglang-gpustack-64k").drop("run", "kind")
    assert_frame_equal(one, ingest(logs / "sglang-gpustack-64k.log").tables["decode_batch"])
    everything = pl.scan_parquet(str(out / "**" / "*.parquet"), hive_partitioning=True,
                                 missing_columns="insert", extra_columns="ignore")
    assert everything.select(pl.len()).collect().item() > 0


def test_a_glob_and_several_paths_and_a_log_that_cannot_be_read(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    result = run("ingest", str(logs / "sglang-*.log"), str(logs / "notes.md"), "--engine", "sglang",
                 "--out", str(out), "--jobs", "1")
    assert result.exit_code == 0, result.output  # notes.md read as an (all unparsed) sglang log
    assert (out / "run=notes.md" / "kind=unparsed" / "part-00000.parquet").exists()
    bad = run("ingest", str(logs / "sglang-*.log"), str(logs / "notes.md"), "--out", str(tmp_path / "ds2"),
              "--jobs", "1")
    assert bad.exit_code == 1 and "could not tell which engine wrote" in bad.output
    assert (tmp_path / "ds2" / "run=sglang-gpustack-64k").is_dir()  # the others are written
    assert not (tmp_path / "ds2" / "run=notes.md").exists()


def test_a_second_ingest_replaces_the_dataset_and_foreign_folders_are_refused(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert run("ingest", str(logs), "--out", str(out), "--jobs", "1").exit_code == 0
    (out / "README.txt").write_text("mine")
    fewer = [str(logs / "vllm-gpustack-64k.log"), str(logs / "sglang-gpustack-64k.log")]
    kept = run("ingest", *fewer, "--out", str(out), "--jobs", "1")  # would drop the other runs
    assert kept.exit_code == 1 and "holds the tables of other logs" in kept.output
    assert len(list(out.glob("run=*"))) > 2
    assert run("ingest", *fewer, "--out", str(out), "--jobs", "1", "--force").exit_code == 0
    assert sorted(os.listdir(out)) == [".logparse", "README.txt", "run=sglang-gpustack-64k", "run=vllm-gpustack-64k"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x").write_text("x")
    refused = run("ingest", str(logs), "--out", str(foreign), "--jobs", "1")
    assert refused.exit_code == 1 and "--force" in refused.output


def test_summary_reads_a_run_of_the_dataset(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert run("ingest", str(logs), "--out", str(out), "--jobs", "1").exit_code == 0
    listed = sorted(cmd for cmd in cli.list_commands(None))  # type: ignore[arg-type]
    if "summary" not in listed:
        pytest.skip("summary is not built")
    direct = run("summary", str(logs / "sglang-gpustack-64k.log"), "--json")
    from_ds = run("summary", str(out / "run=sglang-gpustack-64k"), "--json")
    assert direct.exit_code == 0 and from_ds.exit_code == 0, from_ds.output
    a, b = json.loads(direct.stdout), json.loads(from_ds.stdout)
    a.pop("source", None), b.pop("source", None)
    assert a == b
    several = run("summary", str(out), "--brief")  # the whole dataset: a fleet table, one row per run
    assert several.exit_code == 0, several.output
    assert f"{out}: 3 runs" in several.stdout and "sglang-gpustack-64k  " in several.stdout


def test_logs_in_parallel_threads_give_the_tables_of_one_at_a_time(logs: Path, tmp_path: Path) -> None:
    one = tmp_path / "one"
    two = tmp_path / "two"
    assert run("ingest", str(logs), "--out", str(one), "--jobs", "1").exit_code == 0
    result = run("ingest", str(logs), "--out", str(two), "--jobs", "2")
    assert result.exit_code == 0, result.output
    for part in sorted(one.glob("run=*/kind=*/*.parquet")):
        other = two / part.relative_to(one)
        assert pl.read_parquet(part).equals(pl.read_parquet(other)), part


def test_tables_under_a_path_with_glob_characters_read_back(logs: Path, tmp_path: Path) -> None:
    """`[`, `*` and `?` in a folder name are names, not patterns, when the tables are read back."""
    odd = tmp_path / "out [a]*?"
    log = logs / "vllm-gpustack-64k.log"
    assert run("ingest", str(log), "--out", str(odd)).exit_code == 0
    direct = run("summary", str(log), "--json")
    again = run("summary", str(odd), "--json")
    assert again.exit_code == 0, again.output
    a, b = json.loads(direct.stdout), json.loads(again.stdout)
    assert a["phases"] == b["phases"] and a["startup"]["kv_pool_tokens"] == b["startup"]["kv_pool_tokens"]
    ds = tmp_path / "ds"
    assert run("ingest", str(logs), "--out", str(ds)).exit_code == 0
    (ds / "run=vllm-gpustack-64k").rename(ds / "run=vllm[1]")
    fleet = run("summary", str(ds), "--json")
    assert fleet.exit_code == 0, fleet.output
    rows = {r["run"]: r for r in json.loads(fleet.stdout)["fleet"]}
    assert "error" not in rows["vllm[1]"] or not rows["vllm[1]"]["error"], rows["vllm[1]"]
