"""A run of a dataset written whole, or not at all as readers see it.

The compiled core writes the run's tables into a scratch folder; on a local file system the folder
is renamed into place; on object storage (no rename) the run's old files are removed, the tables
uploaded, and the completion marker (`_ingest.json`, the ingest facts) written last. A run is
counted complete only once that marker exists, so a task killed at any point, then retried or
rerun, leaves neither a partial run counted nor a duplicate row: the retry clears the run's folder
before writing it again.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from logparse.errors import OutputError
from logparse.store import STATS_FILE, remove_tree
from logparse.store.folder import reason
from logparse.store.remote import Location, delete_file, delete_folder, read_bytes, upload_folder
from logparse.store.remote import write_bytes as put


def completed(run: Location) -> dict[str, Any] | None:
    """The completion marker of the run at `run` (its ingest facts), or None while it has none."""
    data = read_bytes(run.join(STATS_FILE))
    if data is None:
        return None
    try:
        info = json.loads(data)
    except ValueError:
        return None  # a marker cut short is no marker
    return info if isinstance(info, dict) else None


@contextmanager
def scratch(dest: Location) -> Iterator[Path]:
    """A fresh local folder for the core to write the run into: beside the run on a local file
    system (so that it can be renamed into place), else in the temporary folder
    (`LOGPARSE_SCRATCH`, else `TMPDIR`); removed at the end. The scratch folders an earlier
    attempt at this run left (its process killed) are removed first: one task at a time writes a
    run (Ray retries a task after its worker died)."""
    if dest.local is not None:
        parent, prefix = dest.local.parent, f".{dest.local.name}."
        suffix = ".logparse-tmp"
    else:
        parent = Path(os.environ.get("LOGPARSE_SCRATCH") or tempfile.gettempdir())
        prefix = f"logparse-run-{hashlib.sha1(dest.uri.encode()).hexdigest()[:16]}-"
        suffix = ""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in parent.glob(f"{glob.escape(prefix)}*{suffix}"):
            remove_tree(stale)
        folder = parent / f"{prefix}{secrets.token_hex(4)}{suffix}"
        folder.mkdir()
    except OSError as exc:
        where = dest.uri if dest.local is not None else str(parent)
        raise OutputError(f"cannot write {where}: {reason(exc)}") from None
    try:
        yield folder
    finally:
        remove_tree(folder)


def publish(folder: Path, dest: Location) -> None:
    """Make the finished local run `folder` the run at `dest`, whole: renamed into place on a local
    file system; else the old run's marker and files removed, the tables uploaded, the marker
    (`_ingest.json`) last."""
    if dest.local is not None:
        _rename_into_place(folder, dest)
        return
    marker = (folder / STATS_FILE).read_bytes()
    delete_file(dest.join(STATS_FILE))  # first: from here on the run is not counted complete
    delete_folder(dest)
    upload_folder(folder, dest, skip=[STATS_FILE])
    put(dest.join(STATS_FILE), marker)


def _rename_into_place(folder: Path, dest: Location) -> None:
    assert dest.local is not None
    target = dest.local
    old = target.parent / f".{target.name}.{secrets.token_hex(4)}.logparse-old"
    moved = False
    try:
        if target.exists():
            os.rename(target, old)
            moved = True
        os.rename(folder, target)
    except OSError as exc:
        if moved and not target.exists():
            os.rename(old, target)  # the run as it was
        raise OutputError(f"cannot write {dest.uri}: {reason(exc)}") from None
    if moved:
        shutil.rmtree(old, ignore_errors=True)


__all__ = ["completed", "publish", "scratch"]
