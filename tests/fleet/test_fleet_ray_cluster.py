"""`--ray-address`: the fleet runs on a Ray cluster that is already up (a head node started here
with `ray start --head --block` on 127.0.0.1, stopped by its process group at the end), from a
`logparse` process that only connects to it."""
from __future__ import annotations

import importlib.util
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet_helpers import assert_same_dataset, fleet_logs, free_port

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the ray extra is installed by `make test`"),
]
YEAR = "2026"
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # the head's servers on 127.0.0.1 only


@pytest.fixture(scope="module")
def cluster_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the head and of its clients: loopback only, and Ray's token
    authentication with a token of this test's own (a client of a running cluster names the mode)."""
    token = tmp_path_factory.mktemp("ray-auth") / "token"
    token.write_text(secrets.token_hex(32))
    env = {**os.environ, **LOOPBACK, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
           "LOGPARSE_NO_PROGRESS": "1"}
    env.pop("RAY_ADDRESS", None)
    return env


@pytest.fixture(scope="module")
def head(cluster_env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    ray = Path(sys.executable).with_name("ray")
    process = subprocess.Popen(
        [str(ray), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cluster_env, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        probe = "import ray, sys; ray.init(address=sys.argv[1], logging_level='error'); ray.shutdown()"
        while subprocess.run([sys.executable, "-c", probe, address], env=cluster_env, capture_output=True,
                             timeout=60).returncode != 0:
            assert process.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(1)
        yield address
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the head's own process group: what it started
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        current = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"  # Ray's note of the head it started
        if current.exists() and current.read_text().strip() == address:
            current.unlink()


def test_the_fleet_runs_on_the_cluster_at_the_address(head: str, cluster_env: dict[str, str], tmp_path: Path) -> None:
    logs = fleet_logs(tmp_path / "logs")
    reference = tmp_path / "ref"
    env = cluster_env
    threads = subprocess.run([sys.executable, "-m", "logparse", "ingest", str(logs), "--out", str(reference),
                              "--year", YEAR], capture_output=True, text=True, env=env, timeout=300)
    assert threads.returncode == 0, threads.stderr
    out = tmp_path / "ds"
    done = subprocess.run([sys.executable, "-m", "logparse", "ingest", str(logs), "--out", str(out), "--executor",
                           "ray", "--ray-address", head, "--concurrency", "3", "--year", YEAR, "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert {r["status"] for r in rows} == {"done"} and len(rows) == len(list(logs.iterdir()))
    assert_same_dataset(reference, out)
    again = subprocess.run([sys.executable, "-m", "logparse", "ingest", str(logs), "--out", str(out), "--executor",
                            "ray", "--year", YEAR], capture_output=True, text=True, env={**env, "RAY_ADDRESS": head},
                           timeout=300)  # RAY_ADDRESS, as Ray's own tools read it
    assert again.returncode == 0 and f"0 written, {len(rows)} already complete" in again.stdout
    wrong = subprocess.run([sys.executable, "-m", "logparse", "ingest", str(logs), "--out", str(tmp_path / "x"),
                            "--executor", "ray", "--ray-address", f"127.0.0.1:{free_port()}"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert wrong.returncode == 1 and "Traceback" not in wrong.stderr
    assert "cannot start or reach the Ray cluster at 127.0.0.1:" in wrong.stderr
