"""The runs of a fleet ingest: which logs the arguments name, each run's name, and the dataset
claimed for them (its marker written first, so every command reads it as a dataset)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.fleet.task import RunTask
from logparse.store import MARKER_FILE, expand_inputs, run_names
from logparse.store.listing import list_entries as entries
from logparse.store.remote import Location, file_facts, is_uri, kind_of, locate, read_bytes, write_bytes

MARKER_TEXT = (
    b"written by logparse\nlayout: fleet (runs appear whole: a run counts once its _ingest.json is written)\n"
)


def plan_runs(
    paths: Sequence[str],
    out: str | Path,
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    force: bool = False,
) -> list[RunTask]:
    """One `RunTask` per log that `paths` name (files, folders, globs, URIs of object storage),
    named as `logparse ingest` names a dataset's runs, into the dataset `out` (a path or URI).

    Claims `out` first (`claim_dataset`). Local paths become absolute, so that a task reads the
    same file from whatever folder its worker runs in."""
    files, _ = expand_inputs(list(paths))
    if "-" in files:
        raise InputError("standard input (-) cannot be read by a fleet's workers: give files or URIs")
    target = str(out) if is_uri(str(out)) else os.path.abspath(out)
    claim_dataset(target, force=force)
    grammar_files = tuple(os.path.abspath(p) for p in patterns)
    return [
        RunTask(
            log=log if is_uri(log) else os.path.abspath(log),
            out=target,
            run=name,
            size=_size(log),
            engine=engine,
            year=year,
            tz=tz,
            patterns=grammar_files,
            force=force,
        )
        for log, name in zip(files, run_names(files))
    ]


def _size(log: str) -> int | None:
    if is_uri(log):
        return file_facts(log)[0]
    try:
        return os.stat(log).st_size
    except OSError:
        return None  # the task says why it cannot be read


def claim_dataset(out: str, *, force: bool = False) -> Location:
    """Make `out` a dataset of logparse's (its `.logparse` marker), unless it is one already. A
    folder that holds other files and no marker is refused without `force`."""
    loc = locate(out)
    what = kind_of(loc)
    if what == "file":
        raise InputError(f"{for_terminal(out)}: a file is in the way (a folder is needed)")
    marker = loc.join(MARKER_FILE)
    if what == "folder" and read_bytes(marker) is not None:
        return loc
    if what == "folder" and entries(loc) and not force:
        raise InputError(
            f"{for_terminal(out)}: folder is not empty and was not written by logparse; "
            "choose another --out or pass --force"
        )
    write_bytes(marker, MARKER_TEXT)
    return loc


__all__ = ["MARKER_TEXT", "claim_dataset", "plan_runs"]
