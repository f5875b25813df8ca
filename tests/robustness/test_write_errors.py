"""Every command that writes fails on a file-system error with one line, `Error: cannot write PATH:
<reason>` (exit 1, no traceback), and leaves nothing new behind: a matrix command x failure.

The failures are real ones, not mocks: a file where a parent folder should be (ENOTDIR), a folder
of /proc, a read-only tmpfs (EROFS) and a full tiny tmpfs (ENOSPC) where this machine lets us
mount them, and a folder without write permission for a user who is not root (EACCES).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT

from logparse.cli import cli

LOG = FIXTURES / "vllm" / "gpustack-64k.log"
BENCH = FIXTURES / "bench" / "vllm_bench_serve_c16.json"
NOBODY = 65534


@dataclass(frozen=True)
class Writer:
    """A command that writes `target` (a folder, or a file), given its inputs and a spare folder."""

    argv: Callable[[Path, Path, Path, Path], list[str]]  # (log, bench, target, spare) -> arguments
    file: bool = False
    needs: str | None = None  # a program the command runs


WRITERS = {
    "ingest": Writer(lambda log, bench, t, spare: ["ingest", str(log), "--out", str(t)]),
    "summary": Writer(lambda log, bench, t, spare: ["summary", str(log), "--out", str(t)]),
    "windows": Writer(lambda log, bench, t, spare: ["windows", str(log), "--out", str(t)]),
    "compare": Writer(lambda log, bench, t, spare: ["compare", str(log), "--out", str(t)]),
    "report": Writer(lambda log, bench, t, spare: ["report", str(log), "-o", str(t), "--no-images"]),
    "report-bench": Writer(lambda log, bench, t, spare: ["report", "--bench", str(bench), "-o", str(t)]),
    "bench": Writer(lambda log, bench, t, spare: ["bench", str(bench), "-o", str(t)]),
    "emulate": Writer(lambda log, bench, t, spare: ["emulate", "--engine", "vllm", "-o", str(t)], file=True),
    # the log could be written, its truth cannot: neither appears
    "emulate-truth": Writer(
        lambda log, bench, t, spare: [
            "emulate",
            "--engine",
            "sglang",
            "-o",
            str(spare / "e.log"),
            "--truth",
            str(t),
        ],
        file=True,
    ),
    "export-openmetrics": Writer(
        lambda log, bench, t, spare: ["export", "openmetrics", str(log), "-o", str(t)], file=True
    ),
    "export-prometheus": Writer(
        lambda log, bench, t, spare: ["export", "prometheus", str(log), "--tsdb", str(t)], needs="promtool"
    ),
}

REASONS = {
    "enotdir": "not a directory (a file is in the way of a folder)",
    "proc": "/proc is a virtual file system of the kernel (it takes no files)",
    "erofs": "read-only file system",
    "enospc": "no space left on the device",
    "eacces": "permission denied",
}


def tree(folder: Path) -> dict[str, bytes | None]:
    """Everything below `folder` (folders as None), by relative path, hidden scratch names included."""
    return {
        str(p.relative_to(folder)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
    }


def _mount(options: str) -> Iterator[Path]:
    if not shutil.which("mount"):
        pytest.skip("no `mount` program on this machine")
    point = Path(tempfile.mkdtemp(prefix="logparse-write-test-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        point.rmdir()
        pytest.skip(
            f"`mount -t tmpfs -o {options}` failed (needs root and CAP_SYS_ADMIN): "
            f"{done.stderr.strip() or done.returncode}"
        )
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=False)
        point.rmdir()


@pytest.fixture(scope="module")
def read_only_fs() -> Iterator[Path]:
    yield from _mount("ro,size=64k")


@pytest.fixture(scope="module")
def full_fs() -> Iterator[Path]:
    for point in _mount("size=64k"):
        fd = os.open(point / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 4096):  # until the device is full: no output gets a byte
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield point


def _run_here(argv: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, argv)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"uncaught {result.exception!r}\n{result.output}")
    return result.exit_code, result.stderr


@pytest.mark.parametrize("failure", ["enotdir", "proc", "erofs", "enospc"])
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_write_error_is_one_line_and_leaves_nothing(
    command: str, failure: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    writer = WRITERS[command]
    if writer.needs and not shutil.which(writer.needs):
        pytest.skip(f"{writer.needs} is not installed")
    name = f"{command}-out" + (".txt" if writer.file else "")
    if failure == "enotdir":
        watched = tmp_path
        (tmp_path / "a-file").write_text("in the way\n")
        target = tmp_path / "a-file" / name
    elif failure == "proc":
        watched = None
        target = Path("/proc") / f"logparse-write-test-{name}"
    else:
        watched = request.getfixturevalue("read_only_fs" if failure == "erofs" else "full_fs")
        target = watched / name
    spare = tmp_path / "spare"
    spare.mkdir()
    before = tree(watched) if watched else {}
    code, stderr = _run_here(writer.argv(LOG, BENCH, target, spare))
    assert code == 1, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines() == [f"Error: cannot write {target}: {REASONS[failure]}"]
    assert not target.exists()
    if watched:
        assert tree(watched) == before
    assert list(spare.iterdir()) == []  # emulate --truth: the log that could be written is not either


def _as_other_user() -> list[str]:
    """The command prefix that runs a program as a user without root's override of permissions."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and there is no `setpriv` to run as another user")
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import logparse.cli"],
        capture_output=True,
        text=True,
        cwd="/",
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip(f"user {NOBODY} cannot run this Python and logparse: {probe.stderr.strip()[-200:]}")
    return prefix


@pytest.fixture(scope="module")
def locked_folder() -> Iterator[tuple[Path, Path, Path, Path, list[str]]]:
    """A copy of the inputs another user may read, a folder they may not write and one they may."""
    prefix = _as_other_user()
    base = Path(tempfile.mkdtemp(prefix="logparse-write-test-"))
    try:
        base.chmod(0o755)
        log, bench = base / LOG.name, base / BENCH.name
        shutil.copy(LOG, log)
        shutil.copy(BENCH, bench)
        for path in (log, bench):
            path.chmod(0o644)
        locked = base / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        yield base, log, bench, locked, prefix
    finally:
        locked.chmod(0o755)
        shutil.rmtree(base)


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_no_permission_is_one_line_and_leaves_nothing(
    command: str, locked_folder: tuple[Path, Path, Path, Path, list[str]]
) -> None:
    base, log, bench, locked, prefix = locked_folder
    writer = WRITERS[command]
    if writer.needs and not shutil.which(writer.needs):
        pytest.skip(f"{writer.needs} is not installed")
    target = locked / (f"{command}-out" + (".txt" if writer.file else ""))
    spare = Path(tempfile.mkdtemp(prefix="spare-", dir=base))
    spare.chmod(0o777)
    before = tree(base)
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "logparse", *writer.argv(log, bench, target, spare)],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        check=False,
        env={**os.environ, "HOME": str(base)},
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"Error: cannot write {target}: {REASONS['eacces']}"]
    assert tree(base) == before
    spare.rmdir()
