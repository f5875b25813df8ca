"""Backfill OpenMetrics text into a Prometheus TSDB with Prometheus's own `promtool`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from logparse.errors import InputError
from logparse.store import writing

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

    Raises InputError with promtool's own message when it refuses the input or the folder.
    """
    with writing(tsdb):
        tsdb.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(openmetrics_file), str(tsdb)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise InputError(
            f"promtool could not write blocks to {tsdb}: {detail[-1] if detail else done.returncode}"
        )
    return done.stdout
