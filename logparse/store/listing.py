"""What a URI of object storage names: the files under a prefix, the entries of a folder, the
keys a glob (`*`, `?`, `[...]`, `**`) matches. An object store has folders only as prefixes of its
keys, so a glob is matched against the keys listed under its literal head."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Sequence

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.store.remote import Location, kind_of, locate, store_error
from logparse.store.uri import scheme_of

_MAGIC = re.compile(r"[*?\[]")


def list_files(loc: Location) -> list[tuple[str, int]]:
    """(path relative to `loc`, size) of every file under the folder `loc`, sorted."""
    import pyarrow.fs as pafs

    try:
        infos = loc.fs.get_file_info(pafs.FileSelector(loc.path, recursive=True, allow_not_found=True))
    except OSError as exc:
        raise store_error(exc, loc) from None
    base = loc.path.rstrip("/") + "/"
    return sorted(
        (info.path[len(base) :] if info.path.startswith(base) else info.path, int(info.size or 0))
        for info in infos
        if info.type == pafs.FileType.File
    )


def list_entries(loc: Location) -> list[str]:
    """The names directly under the folder `loc` (files and folders), sorted."""
    import pyarrow.fs as pafs

    try:
        infos = loc.fs.get_file_info(pafs.FileSelector(loc.path, recursive=False, allow_not_found=True))
    except OSError as exc:
        raise store_error(exc, loc) from None
    return sorted(posixpath.basename(info.path.rstrip("/")) for info in infos)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`**` any folders, `*` and `?` within one name, `[...]` as in `fnmatch`."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape("["))
                i += 1
            else:
                out.append(fnmatch.translate(pattern[i : end + 1])[4:-3])
                i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def expand_uri(uri: str, suffixes: Sequence[str]) -> tuple[list[str], bool]:
    """The files a URI names, and whether it names several: a file is itself; a folder (prefix)
    gives the files under it whose names end in `suffixes`, hidden ones left out; a glob
    (`*`, `?`, `[...]`, `**`) the files it matches."""
    scheme = scheme_of(uri)
    head = uri[len(scheme) + 3 :]
    magic = _MAGIC.search(head)
    if magic:
        base_text = head[: head.rfind("/", 0, magic.start()) + 1]
        base = locate(f"{uri[: len(scheme) + 3]}{base_text}")
        pattern = _glob_regex(head[len(base_text) :])
        found = [rel for rel, _ in list_files(base) if pattern.match(rel)]
        if not found:
            raise InputError(f"{for_terminal(uri)}: the pattern matches no file")
        return [base.join(*rel.split("/")).uri for rel in found], True
    loc = locate(uri)
    what = kind_of(loc)
    if what == "file":
        return [loc.uri], False
    if what == "missing":
        raise InputError(f"{for_terminal(uri)}: no such file or folder")
    logs = [
        loc.join(*rel.split("/")).uri
        for rel, _ in list_files(loc)
        if rel.endswith(tuple(suffixes)) and not any(part.startswith(".") for part in rel.split("/"))
    ]
    if not logs:
        raise InputError(f"{for_terminal(uri)}: no log files (*.log, *.txt, *.out, .gz) under this prefix")
    return logs, True


__all__ = ["expand_uri", "list_entries", "list_files"]
