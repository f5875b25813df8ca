"""Shared inputs of the export tests (pytest fixtures the test modules import): emulated runs of
every era, real excerpts, Prometheus's tools. Not a conftest.py: tests elsewhere import theirs as
`conftest`."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-logs"
# (engine, era or None, preset or None): every era `logparse emulate` renders, plus the presets
# that print speculative decoding, preemptions, idle gaps between phases and hybrid pools.
EMULATED = [
    ("vllm", "0.6", None), ("vllm", "0.10", None), ("vllm", "0.11", None), ("vllm", "0.26", None),
    ("vllm", "0.31", None), ("vllm", None, "emulated-0.6-spec-two-phases"),
    ("vllm", None, "emulated-0.10-multirank-docker"), ("vllm", None, "emulated-0.11-preemptions-compose"),
    ("sglang", "0.4", None), ("sglang", "0.5.6", None), ("sglang", "0.5.14", None),
    ("sglang", None, "emulated-0.5.6-hybrid-spec"), ("sglang", None, "emulated-0.4-docker-retract"),
]
# Real excerpts with several timestamped stats lines of one kind (V0, V1, spec decode; SGLang
# decode, prefill, both, DP ranks).
REAL_EXCERPTS = ["vllm/001.log", "vllm/008.log", "vllm/013.log", "vllm/046.log", "vllm/052.log", "vllm/049.log",
                 "vllm/086.log", "sglang/002.log", "sglang/005.log", "sglang/023.log", "sglang/031.log",
                 "sglang/062.log"]


def emulated_name(engine: str, era: str | None, preset: str | None) -> str:
    return f"{engine}-{preset or era}.log"


@pytest.fixture(scope="session")
def emulated_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One emulated log per entry of EMULATED, by file name."""
    folder = tmp_path_factory.mktemp("emulated")
    logs = {}
    for engine, era, preset in EMULATED:
        path = folder / emulated_name(engine, era, preset)
        args = ["emulate", "--engine", engine, "-o", str(path)]
        args += ["--era", era] if era else ["--preset", str(preset)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        logs[path.name] = path
    return logs


@pytest.fixture(scope="session")
def real_logs() -> dict[str, Path]:
    """The real excerpts of REAL_EXCERPTS, by their `run` label (file names repeat across engines)."""
    if not REAL.is_dir():
        pytest.skip(f"needs the real excerpts in {REAL}")
    return {name: REAL / name for name in REAL_EXCERPTS}


def prometheus_tool(name: str) -> str:
    """Path of `promtool` / `prometheus`, installing Debian's `prometheus` when missing and possible."""
    found = shutil.which(name)
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "prometheus"], env=env, capture_output=True,
                       timeout=600, check=False)
        found = shutil.which(name)
    if found is None:
        pytest.skip(f"needs {name} from Debian's `prometheus` package (`make test` installs it; "
                    "apt-get install failed here or we are not root)")
    return found


@pytest.fixture(scope="session")
def promtool() -> str:
    return prometheus_tool("promtool")


@pytest.fixture(scope="session")
def prometheus_server_binary() -> str:
    return prometheus_tool("prometheus")
