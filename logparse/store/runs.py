"""Which logs a command line names, and the one name each log has as a run of a dataset."""

from __future__ import annotations

import glob
import re
from collections.abc import Sequence
from pathlib import Path

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.store.listing import expand_uri
from logparse.store.tables import is_table_folder
from logparse.store.uri import is_uri

LOG_SUFFIXES = (".log", ".log.gz", ".txt", ".txt.gz", ".out", ".out.gz")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def expand_inputs(args: Sequence[str]) -> tuple[list[str], bool]:
    """The log files named by `args` (files, folders, globs, URIs of object storage) and whether
    they form a dataset.

    A folder (or a URI's prefix) gives the files under it whose names end in .log, .txt, .out (optionally .gz); a glob
    gives the files it matches. One plain file argument keeps the single-log layout."""
    files: list[str] = []
    several = len(args) > 1
    for arg in args:
        path = Path(arg)
        if is_uri(arg):  # object storage: a file, a prefix or a glob of its keys
            found, many = expand_uri(arg, LOG_SUFFIXES)
            files.extend(found)
            several = several or many
        elif arg != "-" and path.is_dir() and not is_table_folder(path):
            found = sorted(
                str(p)
                for p in path.rglob("*")
                if p.is_file()
                and p.name.endswith(LOG_SUFFIXES)
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise InputError(
                    f"{for_terminal(arg)}: no log files (*.log, *.txt, *.out, .gz) in this folder"
                )
            files.extend(found)
            several = True
        elif arg != "-" and not path.exists() and glob.has_magic(arg):
            found = sorted(p for p in glob.glob(arg, recursive=True) if Path(p).is_file())
            if not found:
                raise InputError(f"{for_terminal(arg)}: the pattern matches no file")
            files.extend(found)
            several = True
        else:
            files.append(arg)
    return list(dict.fromkeys(files)), several


def run_name(log: str) -> str:
    """A log's name as a run: its file name without .log/.txt/.out/.gz, safe in a path
    (`server.out` is `server`, in a dataset, a report and a fleet table alike)."""
    text = str(log)
    if text.startswith("run=") or Path(text).name.startswith("run="):
        return Path(text).name[len("run=") :]
    name = "stdin" if text == "-" else Path(text).name
    for suffix in (".gz", ".log", ".txt", ".out"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return _UNSAFE.sub("_", name).strip("._") or "log"


def run_names(logs: Sequence[str]) -> list[str]:
    """Unique run names for `logs` (a parent folder is added, then a counter, on collisions)."""
    names = [run_name(log) for log in logs]
    if len(set(names)) != len(names):
        names = [
            _UNSAFE.sub("_", f"{Path(log).parent.name}_{name}").strip("._") if log != "-" else name
            for log, name in zip(logs, names)
        ]
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out
