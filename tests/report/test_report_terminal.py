"""`logparse report` with stderr on a terminal: progress is drawn and every log is read by the
compiled core in one call (a progress callback once switched an interactive report to a slow path)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

import logparse.ingest.run as run
from logparse.cli import cli


def test_report_on_a_terminal_reads_with_the_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen: list[str] = []
    original = run.compiled

    def spy(grammar: Any, engine: str) -> Any:
        chosen.append(engine)
        return original(grammar, engine)

    monkeypatch.setattr(run, "compiled", spy)
    leader, follower = os.openpty()
    with os.fdopen(follower, "w", buffering=1) as terminal:
        assert terminal.isatty()
        monkeypatch.setattr(sys, "stderr", terminal)
        logs = [FIXTURES / "vllm" / "gpustack-64k.log", FIXTURES / "sglang" / "gpustack-64k.log"]
        cli.main(["report", *map(str, logs), "-o", str(tmp_path / "r"), "--no-images"], standalone_mode=False)
    drawn = os.read(leader, 1 << 16).decode()
    os.close(leader)
    assert "reading" in drawn and "gpustack-64k.log" in drawn, drawn  # progress went to the terminal
    assert chosen == ["vllm", "sglang"]
    assert (tmp_path / "r" / "index.html").is_file()
