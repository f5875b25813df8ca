"""Backfill OpenMetrics text into a Prometheus TSDB with Prometheus's own `promtool`."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

from logparse.errors import InputError
from logparse.store import scratch_folder, write_error, writing

INSTALL_HINT = (
    "install Debian's `prometheus` package (apt-get install prometheus), or name the binary with --promtool"
)


def find_promtool(name: str = "promtool") -> str:
    """The path of `name` (a path or a command on PATH), or an error saying how to install it."""
    found = shutil.which(name)
    if found is None:
        raise InputError(f"promtool not found ({name!r}): {INSTALL_HINT}")
    return found


def create_blocks(promtool: str, openmetrics_file: Path, tsdb: Path) -> str:
    """Run `promtool tsdb create-blocks-from openmetrics FILE DIR`; its report of the blocks it wrote.

    The blocks are made in a scratch folder beside `tsdb` and each renamed into it once all are
    made: a failure leaves `tsdb` as it was. Raises `OutputError` when promtool could not write
    (a full disk, ...), `InputError` with promtool's own message when it refuses the input.
    """
    with scratch_folder(tsdb) as scratch:
        done = subprocess.run(
            [promtool, "tsdb", "create-blocks-from", "openmetrics", str(openmetrics_file), str(scratch)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            last = detail[-1] if detail else str(done.returncode)
            code = next((c for c, text in _GO_ERRORS.items() if text in last.lower()), None)
            if code is not None:
                raise write_error(tsdb, OSError(code, os.strerror(code)))
            raise InputError(f"promtool could not write blocks to {tsdb}: {last}")
        with writing(tsdb):
            tsdb.mkdir(parents=True, exist_ok=True)
            for block in sorted(scratch.iterdir()):
                os.rename(block, tsdb / block.name)
    return done.stdout.replace(str(scratch), str(tsdb))


# How promtool (Go) words the file-system errors it meets.
_GO_ERRORS = {
    errno.ENOSPC: "no space left on device",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.ENOTDIR: "not a directory",
}
