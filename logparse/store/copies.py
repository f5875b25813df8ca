"""Local copies of what a command reads from object storage: a dataset, one of its runs, a client
file, fetched into a scratch folder for the command's time and named by their URI in messages."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.store.folder import MARKER_FILE
from logparse.store.remote import Location, download_folder, kind_of, locate, read_bytes
from logparse.store.uri import is_uri

_COPIES: dict[str, str] = {}  # local copy -> the URI it was fetched from, while it exists


def shown_name(path: str | Path) -> str:
    """How `path` is named in messages: a file or folder inside a local copy made by
    `local_copies` by the URI it came from, anything else as it is."""
    text = str(path)
    for local, uri in _COPIES.items():
        if text == local or text.startswith(local + os.sep):
            return uri + text[len(local) :].replace(os.sep, "/")
    return text


@contextmanager
def local_copies(args: Sequence[str], *, stream_files: bool = False) -> Iterator[list[str]]:
    """`args` with each URI replaced by a local copy in a scratch folder (removed at the end): a
    folder (a dataset, one of its runs, a log's tables) is downloaded whole, a file too unless
    `stream_files` (the ingest reads a log at a URI as it streams). Paths are kept as they are."""
    import shutil
    import tempfile

    if not any(is_uri(a) for a in args):
        yield list(args)
        return
    scratch = Path(tempfile.mkdtemp(prefix="logparse-fetch-"))
    try:
        out = []
        for k, arg in enumerate(args):
            if not is_uri(arg):
                out.append(arg)
                continue
            loc = locate(arg)
            what = kind_of(loc)
            if what == "missing":
                raise InputError(f"{for_terminal(arg)}: no such file or folder")
            if loc.local is not None:
                out.append(str(loc.local))
                continue
            if what == "file" and stream_files:
                out.append(arg)
                continue
            copy = str(_fetch(loc, scratch / str(k), what))
            _COPIES[copy] = loc.uri
            out.append(copy)
        yield out
    finally:
        for copy in [c for c in _COPIES if c.startswith(str(scratch) + os.sep)]:
            del _COPIES[copy]
        shutil.rmtree(scratch, ignore_errors=True)


def _fetch(loc: Location, into: Path, what: str) -> Path:
    """Download the file or folder `loc` under `into`, named as it is; a run of a dataset comes
    with its dataset's marker, so that it reads back as a run."""
    if what == "file":
        into.mkdir(parents=True)
        target = into / (loc.name or "input")
        data = read_bytes(loc)
        target.write_bytes(data or b"")
        return target
    if loc.name.startswith("run="):
        parent = Location(loc.uri.rsplit("/", 1)[0], loc.fs, posixpath.dirname(loc.path))
        dataset = into / (parent.name or "dataset")
        marker = read_bytes(parent.join(MARKER_FILE))
        if marker is not None:
            dataset.mkdir(parents=True)
            (dataset / MARKER_FILE).write_bytes(marker)
        download_folder(loc, dataset / loc.name)
        return dataset / loc.name
    target = into / (loc.name or "dataset")
    download_folder(loc, target)
    return target


__all__ = ["local_copies", "shown_name"]
