"""The command line: help everywhere, clean errors, outputs that agree with the library."""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import LAZY_COMMANDS, cli

V1_STATS = ("(APIServer pid=719) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: 2870.5 "
            "tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV cache "
            "usage: 20.8%, Prefix cache hit rate: 0.0%")
SGL_DECODE = ("[2025-02-27 04:46:39 TP0] Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
              "gen throughput (token/s): 186.64, #queue-req: 0")


@pytest.fixture()
def vllm_log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text("\n".join([V1_STATS, "some line nobody knows", V1_STATS.replace("14:58:56", "14:59:06")]) + "\n")
    return path


def run(*args: str, input: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.mark.parametrize("command", sorted(LAZY_COMMANDS))
def test_every_command_has_help(command: str) -> None:
    import click

    listed = cli.list_commands(click.Context(cli))
    result = run(command, "--help")
    if command not in listed:
        pytest.skip(f"{command} is not built yet")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_ingest_writes_one_table_per_kind(vllm_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("ingest", str(vllm_log), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "coverage 66.7%" in result.output
    stats = pl.read_parquet(out / "engine_stats.parquet")
    assert stats["line_no"].to_list() == [1, 3]
    assert stats["gen_tps"].to_list() == [0.8, 0.8] and stats["rank"].to_list() == ["APIServer"] * 2
    assert stats.schema["time"] == pl.Datetime("us")
    unparsed = pl.read_parquet(out / "unparsed.parquet")
    assert unparsed["raw"].to_list() == ["some line nobody knows"]


def test_jsonl_streams_one_event_per_line(vllm_log: Path) -> None:
    result = run("ingest", str(vllm_log), "--format", "jsonl")
    assert result.exit_code == 0
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [e["line_no"] for e in events] == [1, 2, 3]
    assert [e["kind"] for e in events] == ["engine_stats", "unparsed", "engine_stats"]


def test_json_summary(vllm_log: Path) -> None:
    result = run("ingest", str(vllm_log), "--format", "json")
    facts = json.loads(result.stdout)
    assert facts["engine"] == "vllm" and facts["lines"] == 3 and facts["typed_lines"] == 2
    assert facts["ranks"] == ["APIServer"]


def test_stdin_and_gzip(tmp_path: Path) -> None:
    result = run("ingest", "-", "--format", "json", input=(SGL_DECODE + "\n").encode())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["engine"] == "sglang"
    gz = tmp_path / "s.log.gz"
    gz.write_bytes(gzip.compress(((SGL_DECODE + "\n") * 3).encode()))
    facts = json.loads(run("ingest", str(gz), "--format", "json").stdout)
    assert facts["lines_per_kind"] == {"decode_batch": 3}


@pytest.mark.parametrize(("content", "name"), [
    (b"", "empty.log"),
    (b"\x00" * 5000, "nul.log"),
    (bytes(range(256)) * 50, "binary.log"),
    (b"x" * (1 << 20) + b"\n", "mega.log"),
    ("INFO 06-05 14:58:46 caf\u00e9\r\n".encode() + b"\xff\xfe\r\n", "crlf.log"),
    (b"Loading: 10%|\r20%|\r30%|\n", "tqdm.log"),
])
def test_bad_input_is_an_error_or_unparsed_never_a_traceback(tmp_path: Path, content: bytes, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = run("ingest", str(path), "--engine", "vllm", "--out", str(tmp_path / "o"), "--format", "json")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["lines"] == content.count(b"\n") + (1 if content and not content.endswith(b"\n") else 0)


def test_engine_not_detected_names_the_option(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"hello\nworld\n")
    result = run("ingest", str(path))
    assert result.exit_code == 2
    assert "--engine vllm" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("target", ["missing.log", "."])
def test_missing_file_and_directory(tmp_path: Path, target: str) -> None:
    result = run("ingest", str(tmp_path / target))
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "Traceback" not in result.output


def test_out_refuses_foreign_folder_unless_forced(vllm_log: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    result = run("ingest", str(vllm_log), "--out", str(foreign))
    assert result.exit_code == 1 and "--force" in result.output
    assert run("ingest", str(vllm_log), "--out", str(foreign), "--force").exit_code == 0
    assert (foreign / "notes.txt").read_text() == "keep me"
    # a folder logparse wrote is reused without --force
    assert run("ingest", str(vllm_log), "--out", str(foreign)).exit_code == 0


def test_unknown_engine(vllm_log: Path) -> None:
    result = run("ingest", str(vllm_log), "--engine", "tgi")
    assert result.exit_code == 1 and "unknown engine 'tgi'" in result.output


def test_detect_command(vllm_log: Path) -> None:
    result = run("detect", str(vllm_log))
    assert result.exit_code == 0
    assert result.output.split(": ")[1].startswith("vllm 1.00")


def test_python_api_mirrors_cli(vllm_log: Path) -> None:
    import logparse

    result = logparse.ingest(vllm_log)
    assert set(result.tables) == {"engine_stats", "unparsed"}
    assert result.lines == 3 and result.coverage == pytest.approx(2 / 3)


def test_several_logs_make_a_dataset_partitioned_by_run_and_kind(vllm_log: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.log"
    other.write_text(SGL_DECODE + "\n")
    out = tmp_path / "multi"
    assert run("ingest", str(vllm_log), str(other), "--out", str(out), "--jobs", "1").exit_code == 0
    assert (out / "run=server" / "kind=engine_stats" / "part-00000.parquet").exists()
    assert (out / "run=other" / "kind=decode_batch" / "part-00000.parquet").exists()
    assert sorted(os.listdir(out / "run=other")) == ["kind=decode_batch"]
    assert (out / ".logparse").exists()
