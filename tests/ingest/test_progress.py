"""The progress bar: drawn on a terminal for a large input, never on a pipe."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.ingest import progress

from ingest_helpers import FIXTURES


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_wanted_only_for_a_terminal_and_a_large_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOGPARSE_NO_PROGRESS", raising=False)
    big = progress.MIN_BYTES
    assert progress.wanted(big, FakeTTY())
    assert not progress.wanted(big - 1, FakeTTY())
    assert not progress.wanted(None, FakeTTY())  # stdin: size unknown
    assert not progress.wanted(big, io.StringIO())  # a pipe or a file
    monkeypatch.setenv("LOGPARSE_NO_PROGRESS", "1")
    assert not progress.wanted(big, FakeTTY())


def test_the_bar_shows_bytes_rate_and_eta_and_clears_its_line() -> None:
    tty = FakeTTY()
    bar = progress.Progress(stream=tty)
    bar(50 << 20, 200 << 20)
    bar(200 << 20, 200 << 20)
    text = tty.getvalue()
    assert text.startswith("\r") and "MB/s" in text and "ETA" in text and "/210 MB" in text
    bar.close()
    assert tty.getvalue().endswith("\r\x1b[K")


def test_nothing_on_a_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "MIN_BYTES", 0)  # any input counts as large
    log = FIXTURES / "sglang" / "gpustack-64k.log"
    result = CliRunner().invoke(cli, ["ingest", str(log), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0
    assert "\r" not in result.output and "MB/s" not in result.output
    proc = subprocess.run([sys.executable, "-m", "logparse", "ingest", str(log), "--format", "json"],
                          capture_output=True, timeout=120, check=True)
    assert b"\r" not in proc.stderr and b"MB/s" not in proc.stderr


def test_a_terminal_gets_the_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.headline import ingest_headlines

    monkeypatch.setattr(progress, "MIN_BYTES", 0)
    monkeypatch.delenv("LOGPARSE_NO_PROGRESS", raising=False)
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    ingest_headlines([str(FIXTURES / "sglang" / "gpustack-64k.log")], out=tmp_path / "o")
    assert "MB/s" in tty.getvalue() and tty.getvalue().endswith("\r\x1b[K")
