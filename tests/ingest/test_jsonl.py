"""`ingest --format jsonl`: every event as one JSON line, in line order, the same from the compiled
core and from the reference parser, byte for byte; `time` as ISO-8601 UTC beside `ts`."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.cli import cli

from ingest_helpers import FIXTURES, REAL_LOGS
from test_core_equality import generated_log
from test_streaming import _late_year_log, _modest_log

INPUTS = [(p, ("auto", "vllm", "sglang")) for p in sorted(FIXTURES.rglob("*.log"))]
INPUTS += [(p, (p.parent.name,)) for p in sorted(REAL_LOGS.glob("*/*.log"))]


def run(*args: str, input: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=input)


def _same(want: str, got: str, label: str) -> None:
    if got != want:
        for i, (a, b) in enumerate(zip(want.splitlines(), got.splitlines())):
            assert b == a, f"{label}: line {i + 1} differs"
        assert got == want, f"{label}: {len(got.splitlines())} lines instead of {len(want.splitlines())}"


@pytest.mark.parametrize(("path", "engines"), INPUTS, ids=[str(p.relative_to(p.parents[1])) for p, _ in INPUTS])
def test_core_jsonl_is_the_reference_output_byte_for_byte(path: Path, engines: tuple[str, ...],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for engine in engines:
        args = ["ingest", str(path), "--format", "jsonl", "--engine", engine]
        ref = run(*args, "--reference")
        for block_bytes in (None, "2048"):
            with monkeypatch.context() as m:
                if block_bytes:
                    m.setenv("LOGPARSE_BLOCK_BYTES", block_bytes)
                got = run(*args)
            label = f"{path} --engine {engine} blocks {block_bytes}"
            assert got.exit_code == ref.exit_code, (label, got.output, ref.output)
            _same(ref.stdout, got.stdout, label)
            assert got.stderr_bytes == ref.stderr_bytes, label


def test_one_line_per_event_in_line_order_with_iso_time() -> None:
    path = FIXTURES / "vllm" / "gpustack-64k.log"
    got = run("ingest", str(path), "--format", "jsonl")
    events = [json.loads(line) for line in got.stdout.splitlines()]
    assert [e["line_no"] for e in events] == list(range(1, path.read_bytes().count(b"\n") + 1))
    timed = [e for e in events if e["time"] is not None]
    assert timed and all(e["time"].endswith("+00:00") and "T" in e["time"] for e in timed)
    assert all(e["ts"] is not None for e in timed)
    assert sorted(e["time"] for e in timed)[0] <= timed[-1]["time"]  # sortable as text


@pytest.mark.parametrize(("name", "content"), [
    ("empty.log", b""),
    ("nul.log", b"\x00" * 5000),
    ("binary.log", bytes(range(256)) * 50),
    ("mega.log", b"x" * (1 << 20) + b"\n" + (FIXTURES / "vllm" / "gpustack-64k.log").read_bytes()),
    ("crlf.log", "INFO 06-05 14:58:46 caf\u00e9\r\n".encode() + b"\xff\xfe\r\n"),
    ("tqdm.log", b"Loading: 10%|\r20%|\r30%|\n"),
    ("fixture.log.gz", gzip.compress((FIXTURES / "sglang" / "gpustack-64k.log").read_bytes())),
])
def test_odd_inputs_and_stdin(tmp_path: Path, name: str, content: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", "4096")  # the 1 MiB line is a block of its own
    path = tmp_path / name
    path.write_bytes(content)
    for source in (str(path), "-"):
        args = ["ingest", source, "--format", "jsonl", "--engine", "vllm"]
        got, ref = run(*args, input=content), run(*args, "--reference", input=content)
        assert got.exit_code == ref.exit_code == 0, got.output + ref.output
        assert got.stdout_bytes == ref.stdout_bytes and got.stderr_bytes == ref.stderr_bytes, source


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None,
          max_examples=25)
@given(data=generated_log("vllm"))
def test_generated_logs(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "gen.log"
    path.write_bytes(data)
    args = ["ingest", str(path), "--format", "jsonl", "--engine", "vllm"]
    got, ref = run(*args), run(*args, "--reference")
    assert got.exit_code == ref.exit_code == 0
    assert got.stdout_bytes == ref.stdout_bytes
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)  # an empty file has no line
    assert len(got.stdout.splitlines()) == lines


def test_a_year_found_late_does_not_print_lines_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _late_year_log(tmp_path)
    monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", "4096")  # the full date comes many blocks in: a restart
    got = run("ingest", str(path), "--format", "jsonl", "--engine", "vllm")
    numbers = [json.loads(line)["line_no"] for line in got.stdout.splitlines()]
    assert numbers == list(range(1, path.read_bytes().count(b"\n") + 1))
    assert json.loads(got.stdout.splitlines()[0])["time"].startswith("2019-12-31")


def test_out_and_jsonl_give_both_one_log_and_several(tmp_path: Path) -> None:
    log = _modest_log(tmp_path, "sglang")
    one = run("ingest", str(log), "--format", "jsonl", "--out", str(tmp_path / "one"))
    assert one.exit_code == 0 and (tmp_path / "one" / "decode_batch.parquet").exists()
    assert len(one.stdout.split("\n")) - 1 == log.read_bytes().count(b"\n")
    two = run("ingest", str(log), str(FIXTURES / "vllm" / "gpustack-64k.log"), "--format", "jsonl",
              "--out", str(tmp_path / "two"))
    assert two.exit_code == 0 and len(list((tmp_path / "two").glob("run=*"))) == 2


def test_help_says_jsonl_streams_and_combines_with_out() -> None:
    text = " ".join(run("ingest", "--help").output.split())
    assert "every event as a JSON line" in text and "ISO-8601" in text and "with --out the tables are written too" in text


def test_a_closed_stdout_ends_quietly(tmp_path: Path) -> None:
    path = _modest_log(tmp_path, "vllm")
    proc = subprocess.run(f"{sys.executable} -m logparse ingest {path} --format jsonl | head -1",
                          shell=True, capture_output=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.count(b"\n") == 1
    assert b"Traceback" not in proc.stderr and b"Error" not in proc.stderr
