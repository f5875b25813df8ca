"""`ingest --format jsonl`: every event as one JSON line, in line order, the ingest's tables row for
row, byte for byte the same whatever the blocks; `time` as ISO-8601 UTC beside `ts`."""
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

import logparse
from logparse.cli import cli

from ingest_helpers import FIXTURES, REAL_LOGS
from test_block_invariance import generated_log
from test_streaming import _late_year_log, _modest_log

CORPUS = FIXTURES / "real" / "corpus"  # excerpts too short to name their engine: read as their folder's
INPUTS = [
    (p, (p.parent.name,) if CORPUS in p.parents else ("auto", "vllm", "sglang")) for p in sorted(FIXTURES.rglob("*.log"))
]
INPUTS += [(p, (p.parent.name,)) for p in sorted(REAL_LOGS.glob("*/*.log"))]


def run(*args: str, input: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=input)


def _same(want: str, got: str, label: str) -> None:
    if got != want:
        for i, (a, b) in enumerate(zip(want.splitlines(), got.splitlines())):
            assert b == a, f"{label}: line {i + 1} differs"
        assert got == want, f"{label}: {len(got.splitlines())} lines instead of {len(want.splitlines())}"


def _rows(path: Path, engine: str) -> list[tuple[int, str, str | None, dict[str, object]]]:
    """(line_no, kind, rule, the non-null fields) of every row of the ingest's tables, in line order."""
    rows = []
    for kind, frame in logparse.ingest(path, engine=engine).tables.items():
        for row in frame.iter_rows(named=True):
            fields = {k: v for k, v in row.items() if v is not None and k not in ("line_no", "rule", "time")}
            rows.append((row["line_no"], kind, row["rule"], fields))
    return sorted(rows, key=lambda r: r[0])


@pytest.mark.parametrize(("path", "engines"), INPUTS, ids=[str(p.relative_to(p.parents[1])) for p, _ in INPUTS])
def test_jsonl_is_the_tables_whatever_the_blocks(path: Path, engines: tuple[str, ...],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for engine in engines:
        args = ["ingest", str(path), "--format", "jsonl", "--engine", engine]
        whole = run(*args)
        with monkeypatch.context() as m:
            m.setenv("LOGPARSE_BLOCK_BYTES", "2048")
            small = run(*args)
        label = f"{path} --engine {engine}"
        assert small.exit_code == whole.exit_code == 0, (label, small.output, whole.output)
        _same(whole.stdout, small.stdout, label)
        assert small.stderr_bytes == whole.stderr_bytes, label
        events = [json.loads(line) for line in whole.stdout.splitlines()]
        rows = _rows(path, engine)
        assert len(events) == len(rows), label
        for event, (line_no, kind, rule, fields) in zip(events, rows):
            assert (event["line_no"], event["kind"], event["rule"]) == (line_no, kind, rule), label
            shown = {k: v for k, v in event.items() if v is not None and k not in ("line_no", "kind", "rule", "time")}
            assert shown.keys() == {k for k, v in fields.items() if v != []} | (shown.keys() & {"extra"}), label
            for key, value in fields.items():
                if isinstance(value, float | int | str | bool):
                    assert shown[key] == value, (label, line_no, key)


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
    args = ["ingest", "--format", "jsonl", "--engine", "vllm"]
    from_file, from_stdin = run(*args, str(path)), run(*args, "-", input=content)
    assert from_file.exit_code == from_stdin.exit_code == 0, from_file.output + from_stdin.output
    assert from_file.stdout_bytes == from_stdin.stdout_bytes
    assert from_file.stderr.replace(str(path), "standard input") == from_stdin.stderr
    text = gzip.decompress(content) if name.endswith(".gz") else content  # stdin's gzip is read too
    lines = text.count(b"\n") + (0 if text.endswith(b"\n") or not text else 1)
    assert len(from_file.stdout.split("\n")) - 1 == lines


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None,
          max_examples=25)
@given(data=generated_log("vllm"))
def test_generated_logs(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "gen.log"
    path.write_bytes(data)
    args = ["ingest", str(path), "--format", "jsonl", "--engine", "vllm"]
    got = run(*args)
    with pytest.MonkeyPatch.context() as m:
        m.setenv("LOGPARSE_BLOCK_BYTES", "64")
        small = run(*args)
    assert got.exit_code == small.exit_code == 0
    assert got.stdout_bytes == small.stdout_bytes
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
