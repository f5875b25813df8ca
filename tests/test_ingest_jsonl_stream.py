"""`logparse ingest --format jsonl` streams: block by block through the fast path, in bounded memory,
and prints byte for byte what the reference path (`--reference --format jsonl`) prints."""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logparse.fastpath.jsonl as jsonl
from logparse.cli import cli
from logparse.escape import json_default, json_line
from logparse.fastpath.jsonl import JsonlOutput, dumps, encode, unfaithful
from logparse.fastpath.plan import FAST_KINDS
from logparse.fastpath.stream import stream_log
from logparse.grammar import load_grammar
from logparse.ingest import ingest

from conftest import FIXTURES, REAL_LOGS

sys.path.insert(0, str(Path(__file__).parent / "speed"))
from speed_helpers import sample_lines  # noqa: E402
from test_speed_equality import generated_log  # noqa: E402
from test_speed_streaming import _late_year_log, _modest_log  # noqa: E402

GRAMMAR = load_grammar()
ALL_KINDS = frozenset(GRAMMAR.kinds)
# every fixture (logs, truths, client bench files, malformed ones) with each engine; real-log excerpts
INPUTS = [(p, ("auto", "vllm", "sglang")) for p in sorted(FIXTURES.rglob("*")) if p.is_file()]
INPUTS += [(p, (p.parent.name,)) for p in sorted(REAL_LOGS.glob("*/*.log"))]


def run(*args: str, input: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=input)


def reference_jsonl(path: Path | str, engine: str, year: int | None = None) -> str:
    """What `ingest --reference --format jsonl` prints: every event of `LineParser`, in line order."""
    lines: list[str] = []
    ingest(path, engine=engine, year=year, reference=True,
           on_event=lambda e: lines.append(json_line(e, ensure_ascii=False, default=json_default)))
    return "".join(line + "\n" for line in lines)


def streamed_jsonl(path: Path | str, engine: str, **options) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    stream_log(path, GRAMMAR, JsonlOutput(GRAMMAR, out).sink, engine=engine, **options)
    return out.getvalue()


def _same(want: str, got: str, label: str) -> None:
    if got != want:
        for i, (a, b) in enumerate(zip(want.splitlines(), got.splitlines())):
            assert b == a, f"{label}: line {i + 1} differs"
        assert got == want, f"{label}: {len(got.splitlines())} lines instead of {len(want.splitlines())}"


# -- every fixture, through the command line ------------------------------------------------------
@pytest.mark.parametrize(("path", "engines"), INPUTS,
                         ids=[str(p.relative_to(p.parents[1])) for p, _ in INPUTS])
def test_streamed_jsonl_is_the_reference_output_byte_for_byte(path: Path, engines: tuple[str, ...],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """4 MiB blocks (frames of few rows are written row by row), then 2 KiB blocks with every frame
    written by the vectorised encoder."""
    for engine in engines:
        args = ["ingest", str(path), "--format", "jsonl", "--engine", engine]
        ref = run(*args, "--reference")
        for block_bytes, python_rows in ((None, jsonl.PYTHON_ROWS), (2048, 0)):
            with monkeypatch.context() as m:
                if block_bytes:
                    m.setenv("LOGPARSE_BLOCK_BYTES", str(block_bytes))
                m.setattr(jsonl, "PYTHON_ROWS", python_rows)
                got = run(*args)
            label = f"{path} --engine {engine} blocks {block_bytes}"
            assert got.exit_code == ref.exit_code, (label, got.output, ref.output)
            _same(ref.stdout, got.stdout, label)
            assert got.stdout_bytes == ref.stdout_bytes, label
            assert got.stderr_bytes == ref.stderr_bytes, label


@pytest.mark.parametrize(("name", "content"), [
    ("empty.log", b""),
    ("nul.log", b"\x00" * 5000),
    ("binary.log", bytes(range(256)) * 50),
    ("mega.log", b"x" * (1 << 20) + b"\n" + (FIXTURES / "vllm" / "gpustack-64k.log").read_bytes()),
    ("crlf.log", "INFO 06-05 14:58:46 caf\u00e9\r\n".encode() + b"\xff\xfe\r\n"),
    ("tqdm.log", b"Loading: 10%|\r20%|\r30%|\n"),
    ("fixture.log.gz", gzip.compress((FIXTURES / "sglang" / "gpustack-64k.log").read_bytes())),
])
def test_odd_inputs_and_stdin(tmp_path: Path, name: str, content: bytes,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", "4096")  # the 1 MiB line is a block of its own
    path = tmp_path / name
    path.write_bytes(content)
    for source in (str(path), "-"):
        args = ["ingest", source, "--format", "jsonl", "--engine", "vllm"]
        got, ref = run(*args, input=content), run(*args, "--reference", input=content)
        assert got.exit_code == ref.exit_code == 0, got.output + ref.output
        assert got.stdout_bytes == ref.stdout_bytes and got.stderr_bytes == ref.stderr_bytes, source


def test_the_fixtures_are_not_a_vacuous_comparison() -> None:
    got = run("ingest", str(FIXTURES / "sglang" / "gpustack-200k.log"), "--format", "jsonl")
    assert got.exit_code == 0
    lines = got.stdout.splitlines()
    assert len(lines) > 200 and all(line.startswith('{"kind": ') for line in lines)
    log = FIXTURES / "sglang" / "gpustack-200k.log"
    assert got.stderr == f"{log}: {len(lines):,} events (sglang, coverage 96.9%)\n"


def test_the_builtin_grammars_stream_every_rule() -> None:
    assert unfaithful(GRAMMAR) == []


# -- fields present as null, absent, constants: every sample line, every number broken ------------
def _broken_numbers(line: str) -> list[str]:
    """`line` with one of its numbers at a time replaced by one that overflows an Int64."""
    return [line[: m.start()] + "99999999999999999999" + line[m.end():] for m in re.finditer(r"[0-9]+", line)]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_samples_with_unreadable_numbers_every_kind_vectorised(engine: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A number that overflows Int64 makes a field the event holds as None; an optional group that
    did not take part, a field it lacks. Both are null in a table."""
    monkeypatch.setattr(jsonl, "PYTHON_ROWS", 0)
    lines = sample_lines(engine)
    lines += [broken for line in lines for broken in _broken_numbers(line)]
    path = tmp_path / "samples.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want = reference_jsonl(path, engine)
    fields = [list(json.loads(line).items())[8:] for line in want.splitlines()]  # after the common keys
    assert sum(any(v is None for _, v in f) for f in fields) > 10  # fields present as null
    out = io.StringIO()
    outcome, _ = stream_log(path, GRAMMAR, JsonlOutput(GRAMMAR, out).sink, engine=engine, kinds=ALL_KINDS,
                            block_bytes=8192)
    assert outcome.fast_lines > len(lines) // 4
    _same(want, out.getvalue(), engine)
    _same(want, streamed_jsonl(path, engine), engine)


# -- generated logs (the generator of the fast-path equality tests) --------------------------------
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(engine=st.sampled_from(["vllm", "sglang"]), data=st.data(), block=st.integers(32, 4096),
       year=st.sampled_from([None, None, 2019]), every_kind=st.booleans(),
       python_rows=st.sampled_from([0, 48, 10**9]))
def test_generated_logs(tmp_path: Path, engine: str, data: st.DataObject, block: int, year: int | None,
                        every_kind: bool, python_rows: int) -> None:
    log = data.draw(generated_log(engine))
    path = tmp_path / f"gen-{engine}.log"
    path.write_bytes(log)
    want = reference_jsonl(path, engine, year)
    jsonl.PYTHON_ROWS, saved = python_rows, jsonl.PYTHON_ROWS
    try:
        got = streamed_jsonl(path, engine, year=year, block_bytes=block,
                             kinds=ALL_KINDS if every_kind else FAST_KINDS)
    finally:
        jsonl.PYTHON_ROWS = saved
    _same(want, got, engine)


# -- values: the vectorised encoder writes what json.dumps writes ----------------------------------
@given(values=st.lists(st.floats() | st.none(), max_size=30))
def test_floats_are_written_as_python_writes_them(values: list[float | None]) -> None:
    frame = pl.DataFrame({"v": values}, schema={"v": pl.Float64})
    assert encode(frame, ["v"]).get_column("v").to_list() == [dumps(v) for v in values]


@given(values=st.lists(st.text() | st.none(), max_size=20),
       ints=st.lists(st.integers(-2**63, 2**63 - 1), max_size=5))
def test_texts_and_integers_are_written_as_python_writes_them(values: list[str | None],
                                                              ints: list[int]) -> None:
    # polars strings hold no lone surrogates (nor do decoded log lines)
    texts = [v if v is None else v.encode("utf-8", "replace").decode("utf-8") for v in values]
    frame = pl.DataFrame({"s": texts}, schema={"s": pl.String})
    assert encode(frame, ["s"]).get_column("s").to_list() == [dumps(v) for v in texts]
    frame = pl.DataFrame({"i": ints, "b": [i % 2 == 0 for i in ints]},
                         schema={"i": pl.Int64, "b": pl.Boolean})
    encoded = encode(frame, ["i", "b"])
    assert encoded.get_column("i").to_list() == [dumps(i) for i in ints]
    assert encoded.get_column("b").to_list() == [dumps(i % 2 == 0) for i in ints]


# -- restarts, stdin, --out -----------------------------------------------------------------------
def test_a_year_found_late_does_not_print_lines_twice(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = _late_year_log(tmp_path)
    monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", "4096")
    out = io.StringIO()
    outcome, _ = stream_log(path, GRAMMAR, JsonlOutput(GRAMMAR, out).sink, engine="vllm", block_bytes=4096)
    assert outcome.restarts == 1
    _same(reference_jsonl(path, "vllm"), out.getvalue(), "restart")
    data = path.read_bytes()
    for i, source in enumerate((str(path), "-")):  # stdin: the restart replays the spooled blocks
        got = run("ingest", source, "--format", "jsonl", "--out", str(tmp_path / f"tables{i}"), input=data)
        ref = run("ingest", source, "--format", "jsonl", "--out", str(tmp_path / f"ref{i}"), "--reference",
                  input=data)
        assert got.exit_code == 0 and ref.exit_code == 0, got.output + ref.output
        assert got.stdout_bytes == ref.stdout_bytes and got.stderr_bytes == ref.stderr_bytes
        _same_folders(tmp_path / f"ref{i}", tmp_path / f"tables{i}")


def _same_folders(want: Path, got: Path) -> None:
    files = sorted(str(p.relative_to(want)) for p in want.rglob("*") if p.is_file())
    assert sorted(str(p.relative_to(got)) for p in got.rglob("*") if p.is_file()) == files
    for name in files:
        if name.endswith(".parquet"):
            assert pl.read_parquet(got / name).equals(pl.read_parquet(want / name)), name


def test_out_and_jsonl_give_both_one_log_and_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", "8192")
    logs = [str(_modest_log(tmp_path, "sglang")), str(_modest_log(tmp_path, "vllm"))]
    for args in (logs[:1], logs):
        got = run("ingest", *args, "--format", "jsonl", "--out", str(tmp_path / "got"), "--force")
        ref = run("ingest", *args, "--format", "jsonl", "--out", str(tmp_path / "ref"), "--force",
                  "--reference")
        assert got.exit_code == 0 and ref.exit_code == 0, got.output + ref.output
        assert got.stdout_bytes == ref.stdout_bytes and got.stderr_bytes == ref.stderr_bytes
        assert got.stderr.count(" events (") == len(args)  # one log after the other
        _same_folders(tmp_path / "ref", tmp_path / "got")
    assert (tmp_path / "got" / "run=sglang-all" / "kind=decode_batch" / "part-00000.parquet").is_file()


def test_help_says_jsonl_streams_and_combines_with_out() -> None:
    text = run("ingest", "--help").output
    text = " ".join(text.split())
    assert "streamed block by block" in text and "with --out the tables are written too" in text


# -- processes: a closed stdout, bounded memory ---------------------------------------------------
def _big_log(tmp_path: Path, copies: int) -> Path:
    one = _modest_log(tmp_path, "sglang").read_bytes()
    path = tmp_path / f"big-{copies}.log"
    with path.open("wb") as out:
        for _ in range(copies):
            out.write(one)
    return path


def _logparse(*args: str, env: dict[str, str] | None = None,
              **popen) -> subprocess.Popen:  # type: ignore[type-arg]
    command = [sys.executable, "-m", "logparse", *args]
    return subprocess.Popen(command, env={**os.environ, **(env or {})}, **popen)


def test_a_closed_stdout_ends_quietly(tmp_path: Path) -> None:
    path = _big_log(tmp_path, 10)  # some MB of JSON: far more than a pipe holds
    for extra in ([], ["--out", str(tmp_path / "out")]):
        proc = _logparse("ingest", str(path), "--format", "jsonl", *extra,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does
        err = proc.stderr.read()
        proc.stderr.close()
        assert proc.wait(timeout=120) == 141  # as a process killed by SIGPIPE; no "Error" text
        assert first.startswith(b'{"kind": ')
        assert err == b"", err.decode(errors="replace")
    assert not (tmp_path / "out").exists()  # an interrupted run leaves no tables


def _peak_rss_kb(path: Path, block_bytes: int) -> int:
    proc = _logparse("ingest", str(path), "--format", "jsonl", env={"LOGPARSE_BLOCK_BYTES": str(block_bytes)},
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss  # KiB on Linux


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_memory_stays_bounded_by_a_block(tmp_path: Path) -> None:
    """Peak RSS for a ~21 MB log against a log of 16 blocks (256 KiB ones): it must not grow with
    the log. Allowed: half the size added (measured: about 0, give or take 2 MB; the reference path,
    every event in memory, grows by about 7 times the size added; keeping the JSON text would add
    1.6 times it)."""
    block = 256 << 10
    big = _big_log(tmp_path, 100)
    small = tmp_path / "small.log"
    small.write_bytes(big.read_bytes()[: 16 * block])
    baseline = _peak_rss_kb(small, block)
    peak = _peak_rss_kb(big, block)
    grown_mb = (peak - baseline) / 1024
    added_mb = (big.stat().st_size - small.stat().st_size) / 2**20
    assert added_mb > 15
    assert grown_mb < added_mb / 2, f"peak RSS grew by {grown_mb:.0f} MB for {added_mb:.0f} MB more log"
