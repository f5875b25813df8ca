"""Score logparse against the labelled real-log excerpts in ../shared (when present)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REAL_LOGS, SHARED

SCORER = SHARED / "tools" / "conformance.py"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_real_logs_conformance(engine: str) -> None:
    corpus = REAL_LOGS / engine
    if not SCORER.is_file() or not corpus.is_dir():
        pytest.skip("../shared/real-logs is not beside this checkout")
    proc = subprocess.run([sys.executable, str(SCORER), str(corpus)], capture_output=True, text=True,
                          timeout=600, check=False)
    summary = proc.stdout.strip().splitlines()[-1]
    m = re.search(r"core kinds ([0-9.]+)%.*fields ([0-9.]+)%.*ingest failures ([0-9]+)", summary)
    assert m, proc.stdout + proc.stderr
    core, fields, failures = float(m[1]), float(m[2]), int(m[3])
    assert failures == 0, proc.stdout
    assert core == 100.0, proc.stdout
    assert fields >= 98.0, proc.stdout
