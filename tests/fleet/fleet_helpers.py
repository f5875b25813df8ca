"""Shared parts of the fleet tests: a real S3-compatible server (moto's server mode) on 127.0.0.1,
a folder of emulated and real logs, and datasets read back and compared run by run."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

# Ray's servers on 127.0.0.1, not on every interface: Ray reads this when it is first imported, and
# every fleet test module imports this one before Ray.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
REAL_LOGS = ROOT.parent / "shared" / "real-logs"

# Emulated runs (with their truth) and real logs (fixtures/real: excerpts of logs users posted, their
# sources in SOURCES.tsv; fixtures/fulllength: whole real runs, their sources in SOURCES.md).
FLEET_LOGS = (
    FIXTURES / "vllm" / "emulated-0.10-multirank-docker.log",
    FIXTURES / "sglang" / "emulated-0.5.14-tp1-color.log",
    FIXTURES / "vllm" / "gpustack-64k.log",
    FIXTURES / "sglang" / "gpustack-200k.log",
    FIXTURES / "real" / "vllm" / "stern-pod-uvicorn-access.log",
    FIXTURES / "real" / "sglang" / "pr17985_loading_weights_took.log",
    FIXTURES / "fulllength" / "server" / "k8s-lws-run-1.log.gz",
)


def fleet_logs(folder: Path) -> Path:
    """`folder` holding a copy of each of `FLEET_LOGS` (a .gz among them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for log in FLEET_LOGS:
        shutil.copy(log, folder / log.name)
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class S3Server:
    """A moto S3 server on 127.0.0.1 and the bucket the tests use."""

    process: subprocess.Popen[bytes]
    endpoint: str
    bucket: str

    def fs(self):  # type: ignore[no-untyped-def]
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(endpoint_override=self.endpoint.removeprefix("http://"), scheme="http",
                                 region="us-east-1", allow_bucket_creation=True)

    def upload(self, local: Path, key: str) -> str:
        """Copy a local file or folder to `s3://bucket/key`; its URI."""
        import pyarrow.fs as pafs

        pafs.copy_files(str(local), f"{self.bucket}/{key}", source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=self.fs())
        return f"s3://{self.bucket}/{key}"

    def download(self, key: str, local: Path) -> Path:
        import pyarrow.fs as pafs

        pafs.copy_files(f"{self.bucket}/{key}", str(local), source_filesystem=self.fs(),
                        destination_filesystem=pafs.LocalFileSystem())
        return local

    def keys(self, prefix: str) -> dict[str, int]:
        """Every object under `prefix` and its size."""
        import pyarrow.fs as pafs

        infos = self.fs().get_file_info(pafs.FileSelector(f"{self.bucket}/{prefix}", recursive=True,
                                                          allow_not_found=True))
        return {i.path.removeprefix(f"{self.bucket}/"): i.size for i in infos if i.type == pafs.FileType.File}


@contextlib.contextmanager
def s3_server() -> Iterator[S3Server]:
    """Start moto's S3 server on a free loopback port, point the AWS environment at it, make a
    bucket; stop it at the end."""
    pytest.importorskip("moto", reason="moto[server] is in the test extra")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                            "AWS_REGION", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION")}
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("moto's S3 server did not start")
            time.sleep(0.1)
        os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                          AWS_REGION="us-east-1")
        os.environ.pop("AWS_ENDPOINT_URL_S3", None)
        server = S3Server(process, endpoint, "fleet")
        server.fs().create_dir(server.bucket)
        yield server
    finally:
        process.kill()
        process.wait()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def dataset_tables(root: Path) -> dict[str, dict[str, pl.DataFrame]]:
    """{run: {kind: table}} of a local dataset, every part of a kind read in order."""
    out: dict[str, dict[str, pl.DataFrame]] = {}
    for run in sorted(root.glob("run=*")):
        kinds = {}
        for kind in sorted(run.glob("kind=*")):
            parts = sorted(kind.glob("*.parquet"))
            kinds[kind.name.removeprefix("kind=")] = pl.concat([pl.read_parquet(p) for p in parts])
        out[run.name.removeprefix("run=")] = kinds
    return out


def assert_same_dataset(want: Path, got: Path) -> None:
    """The same runs, the same kinds, every table equal row for row, the same part files."""
    def parts(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.glob("run=*/kind=*/*.parquet"))

    assert parts(got) == parts(want)
    a, b = dataset_tables(want), dataset_tables(got)
    for run, kinds in a.items():
        assert sorted(b[run]) == sorted(kinds), run
        for kind, frame in kinds.items():
            assert_frame_equal(b[run][kind], frame), (run, kind)
