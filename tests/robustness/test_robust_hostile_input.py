"""Hostile input ends cleanly and in bounded memory: huge lines, gzip bombs, NUL files, FIFOs,
files that grow or shrink while read, and random bytes."""
from __future__ import annotations

import re

import gzip
import io
import json
import os
import subprocess
import sys
import threading
import tracemalloc
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.ingest import reader
from logparse.cli import cli
from logparse.ingest import ingest
from logparse.ingest.reader import ReadStats, iter_lines, read_lines

GIB = 1 << 30
MIB = 1 << 20
STATS = ("(APIServer pid=719) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: 2870.5 "
         "tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV cache "
         "usage: 20.8%, Prefix cache hit rate: 0.0%")
UNSAFE = ["\x1b", "\x07", "\x00", "\r", "\x7f", "\x9b", "\u202e"]


def run(*args: str, input: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), input=input, color=True)


class Endless(io.RawIOBase):
    """`size` bytes of one repeated byte, produced lazily, then `tail`: nothing large is ever held."""

    def __init__(self, size: int, tail: bytes = b"", byte: bytes = b"a") -> None:
        self.left, self.tail, self.chunk = size, tail, byte * MIB

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        if self.left > 0:
            k = min(self.left, MIB, n if n > 0 else MIB)
            self.left -= k
            return self.chunk if k == MIB else self.chunk[:k]
        tail, self.tail = self.tail, b""
        return tail

    read = read1  # type: ignore[assignment]


# -- long lines ----------------------------------------------------------------------------------
def test_a_1_gib_line_streams_in_bounded_memory() -> None:
    stats = ReadStats()
    tracemalloc.start()
    try:
        got = [(n, len(text), text[:3]) for n, text in
               iter_lines(Endless(GIB, tail=b"\r\nnext\n"), stats, name="big.log")]  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    limit = reader.MAX_LINE_BYTES
    assert got == [(1, limit, "aaa"), (2, 4, "nex")]
    assert stats.long_lines == 1 and stats.long_line_bytes_skipped == GIB - limit + 1  # and its \r
    assert stats.bytes_read == GIB + 7 and stats.lines == 2
    assert any("1 line(s) longer than 64 MiB cut to their first 64 MiB" in n for n in stats.notes)
    # the kept head, its text and one block in flight: about 2 x 64 MiB, never the 1 GiB line
    assert peak < 2 * limit + 16 * MIB, f"peak {peak / MIB:.0f} MiB"


@pytest.mark.parametrize("cut", [5, 8, 13])
def test_the_cap_is_exact_whatever_the_block_boundaries(monkeypatch: pytest.MonkeyPatch, cut: int) -> None:
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 10)
    monkeypatch.setattr(reader, "BLOCK_SIZE", cut)
    stats = ReadStats()
    data = b"short\n" + b"x" * 25 + b"\n" + b"y" * 10 + b"\nlast" + b"z" * 30
    got = list(iter_lines(io.BytesIO(data), stats))
    assert got == [(1, "short"), (2, "x" * 10), (3, "y" * 10), (4, "lastzzzzzz")]
    assert stats.long_lines == 2 and stats.long_line_bytes_skipped == 15 + 24 and stats.truncated_last_line


PEAK_RSS_SCRIPT = (
    "import sys\n"
    "from logparse.ingest import reader\n"
    "reader.MAX_LINE_BYTES = 4 << 20  # a small cap keeps CI light; the reader test uses the real one\n"
    "from logparse.cli import main\n"
    "try:\n"
    "    main(['ingest', '--engine', 'vllm', '-'])\n"
    "finally:\n"
    "    status = open('/proc/self/status').read()  # VmHWM: this process's own peak, not its parent's\n"
    "    print('maxrss_kib', int(status.split('VmHWM:')[1].split()[0]), file=sys.stderr)\n"
)


def ingest_stdin_in_a_process(long_line_bytes: int) -> tuple[str, float]:
    """Pipe one line of `long_line_bytes` nines and a stats line into `logparse ingest -`;
    return its stdout and its peak RSS in MiB."""
    with subprocess.Popen([sys.executable, "-c", PEAK_RSS_SCRIPT], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        chunk = b"9" * MIB
        for _ in range(long_line_bytes // MIB):
            proc.stdin.write(chunk)
        proc.stdin.write(b"9" * (long_line_bytes % MIB) + b"\n" + STATS.encode() + b"\n")
        proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=120) == 0, err.decode()
    return out.decode(), int(err.decode().split("maxrss_kib")[1].split()[0]) / 1024


def test_the_cli_streams_a_1_gib_line_from_stdin_in_bounded_memory() -> None:
    """A real process reads 1 GiB without a newline from a pipe. Its peak RSS grows by far less
    than the line over the same process fed a 1-byte line (the libraries' own footprint varies by
    machine, so the bound is on the growth, not on the total)."""
    _, baseline_mib = ingest_stdin_in_a_process(1)
    text, rss_mib = ingest_stdin_in_a_process(GIB)
    assert re.search(r"^lines +2 \(1 typed", text, re.M)
    assert "1 line(s) longer than 4 MiB cut to their first 4 MiB (1,069,547,520 bytes skipped)" in text
    assert rss_mib - baseline_mib < GIB / MIB / 4, (
        f"peak RSS {rss_mib:.0f} MiB for a 1 GiB line against {baseline_mib:.0f} MiB for a 1-byte line")


def test_a_gzip_that_expands_1000_times_into_one_line(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 4 * MIB)
    path = tmp_path / "bomb.log.gz"
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
    block = b"\x00" * MIB
    with path.open("wb") as fh:
        for _ in range(128):
            fh.write(comp.compress(block))
        fh.write(comp.flush())
    assert path.stat().st_size * 1000 < 128 * MIB  # it expands 1000x
    result = ingest(path, engine="sglang")
    assert result.counts == {"unparsed": 1} and result.stats.nul_lines == 1
    assert result.stats.bytes_read == 128 * MIB and len(result["unparsed"]["raw"][0]) == 4 * MIB
    cli = run("ingest", "--engine", "sglang", str(path))
    assert cli.exit_code == 0, cli.output
    assert f"longer than 4 MiB cut to their first 4 MiB ({124 * MIB:,} bytes skipped)" in cli.output
    assert "1 line(s) with NUL bytes" in cli.output and "\x00" not in cli.output


# -- NUL-filled files ------------------------------------------------------------------------------
def test_nul_filled_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 4 * MIB)
    zeros = tmp_path / "zeros.log"
    zeros.write_bytes(b"\x00" * (3 * MIB))
    sparse = tmp_path / "sparse.log"  # a preallocated log after a crash: 64 MiB of holes, no disk used
    with sparse.open("wb") as fh:
        fh.truncate(64 * MIB)
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(b"\x00" * 1000 + b"\n" + STATS.encode() + b"\n\x00\x00\n")
    for path in (zeros, sparse):
        result = run("ingest", "--engine", "vllm", str(path))
        assert result.exit_code == 0, result.output
        assert re.search(r"^lines +1 \(0 typed", result.output, re.M) and "1 line(s) with NUL bytes" in result.output
        unknown = run("unknown", "--engine", "vllm", str(path))
        assert unknown.exit_code == 0 and "1 of 1 lines unparsed" in unknown.output
        assert "\x00" not in unknown.output and "\\x00" in unknown.output
        auto = run("ingest", str(path))  # nothing to detect an engine from: a clean usage error
        assert auto.exit_code == 2 and "could not tell which engine wrote" in auto.output
        assert "Traceback" not in auto.output
    result = ingest(mixed)
    assert result.engine == "vllm" and result.counts == {"unparsed": 2, "engine_stats": 1}
    assert result.stats.nul_lines == 2


# -- FIFOs, growing and shrinking files ---------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_written_by_a_thread(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    lines = [STATS] * 500 + ["not a rule", "partial last line without newline"]
    payload = "\n".join(lines).encode()

    def writer() -> None:
        with fifo.open("wb") as fh:
            for i in range(0, len(payload), 4096):  # in pieces, as a live process would
                fh.write(payload[i:i + 4096])
                fh.flush()

    for args in (["ingest", "--format", "json", str(fifo)], ["unknown", str(fifo), "--format", "json"]):
        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        result = run(*args)
        thread.join(timeout=30)
        assert result.exit_code == 0, result.output
        facts = json.loads(result.stdout)
        if args[0] == "ingest":
            assert facts["lines"] == 502 and facts["lines_per_kind"] == {"engine_stats": 500, "unparsed": 2}
            assert facts["input"]["truncated_last_line"] is True
        else:
            assert facts["unparsed"] == 2 and sum(t["count"] for t in facts["templates"]) == 2


def test_a_file_that_grows_while_read_ends_at_its_size_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "live.log"
    path.write_text(f"{STATS}\n" * 10, encoding="utf-8")
    grown: list[int] = []

    def append(done: int, total: int | None) -> None:
        with path.open("a", encoding="utf-8") as fh:  # the server keeps writing, faster than we read
            fh.write(f"{STATS}\n" * 1000 + "half a li")
        grown.append(done)

    result = ingest(path, engine="vllm", progress=append)
    assert result.lines == 10 and grown
    assert any("grew by" in note and "while being read" in note for note in result.stats.notes)


def test_a_file_grown_by_a_thread_still_ends(tmp_path: Path) -> None:
    path = tmp_path / "live.log"
    path.write_text(f"{STATS}\n" * 2000, encoding="utf-8")
    stop = threading.Event()

    def writer() -> None:
        with path.open("a", encoding="utf-8") as fh:
            while not stop.is_set():
                fh.write(f"{STATS}\n" * 100)
                fh.flush()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        result = run("ingest", "--format", "json", str(path))
    finally:
        stop.set()
        thread.join(timeout=10)
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["lines"] >= 2000 and facts["lines_per_kind"].get("unparsed", 0) <= 1


def test_a_file_that_shrinks_while_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "rotated.log"
    path.write_text(f"{STATS}\n" * 20_000, encoding="utf-8")
    monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", str(64 << 10))  # many read blocks
    size = path.stat().st_size

    def truncate(done: int, total: int | None) -> None:
        os.truncate(path, 0)  # logrotate's copytruncate, after the first block

    result = ingest(path, progress=truncate, workers=1)
    assert 0 < result.lines < 20_000
    assert any("shrank while being read" in note and f"of {size:,} bytes" in note
               for note in result.stats.notes)


# -- random bytes ------------------------------------------------------------------------------------
pieces = st.sampled_from([
    STATS.encode(), b"[2025-02-27 04:46:39 TP0] Decode batch. #running-req: 8, #token: 62531, token usage: 0.12, "
    b"gen throughput (token/s): 186.64, #queue-req: 0", b"\x00" * 50, b"\xff\xfe\xfd", b"\x1b[31m", b"\x1b]0;x\x07",
    b"\r", b"\n", b"\r\n", b"9" * 5000, b"(" * 2000, b"[" * 500 + b"]", b"\xe2\x80\xae", b"\xc2\x9b", b"\xef\xbb\xbf",
    b"(EngineCore pid=1) ", b"Avg prompt throughput: ", b"Decode batch. ", b"'''\"\\",
])
hostile_bytes = st.lists(pieces | st.binary(max_size=40), max_size=30).map(b"".join)


@settings(max_examples=30)
@given(data=hostile_bytes, engine=st.sampled_from(["vllm", "sglang"]))
def test_hostile_bytes_give_one_event_per_line_and_clean_output(tmp_path_factory: pytest.TempPathFactory,
                                                                 data: bytes, engine: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.log"
    path.write_bytes(data)
    expected = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert [n for n, _ in read_lines(path)] == list(range(1, expected + 1))
    result = ingest(path, engine=engine)
    assert result.lines == expected
    text = run("ingest", "--engine", engine, str(path))
    assert text.exit_code == 0, text.output
    assert not [ch for ch in UNSAFE if ch in text.output]
    unknown = run("unknown", "--engine", engine, "--format", "json", "--top", "3", str(path))
    assert unknown.exit_code == 0, unknown.output
    found = json.loads(unknown.stdout)
    assert found["unparsed"] == result.counts.get("unparsed", 0)
    assert sum(t["count"] for t in found["templates"]) + found["more_lines"] == found["unparsed"]
    for args in ([], ["--rule"]):
        shown = run("unknown", "--engine", engine, str(path), *args)
        assert shown.exit_code == 0, shown.output
        assert not [ch for ch in UNSAFE if ch in shown.output]
    if result.counts.get("unparsed"):
        import tomllib

        tomllib.loads(run("unknown", "--engine", engine, "--rule", str(path)).stdout)  # valid TOML


def test_gzip_of_hostile_bytes_and_a_cut_gzip(tmp_path: Path) -> None:
    data = b"\x00\xff\x1b[2J\n" * 1000 + STATS.encode()
    whole = gzip.compress(data)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    result = run("ingest", "--engine", "vllm", str(path))
    assert result.exit_code == 0 and "ends early or is corrupt" in result.output
    assert "\x1b" not in result.output
