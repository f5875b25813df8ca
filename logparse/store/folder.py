"""An output folder that appears whole or not at all, and refuses to clobber what it should not.

Everything `--out` writes goes into a temporary folder beside the target, which takes the target's
place when the writing ends without error (`output_folder`; `output_dir` for reports and other
folders that hold no tables); a single output file is written beside its name and renamed onto it
(`output_file`). The `.logparse` marker records the logs
whose tables the folder holds; writing the tables of other logs over them needs `--force`. Errors of
the file system (read-only, full, a file where a folder should be, no permission) become one
`OutputError` that names the folder and the reason.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from logparse.errors import InputError, OutputError
from logparse.escape import for_terminal
from logparse.store.uri import is_uri

MARKER_FILE = ".logparse"
STATS_FILE = "_ingest.json"  # what reading and parsing a log found, beside its tables
_SOURCE_KEY = "source: "
_REASONS = {
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "not a directory (a file is in the way of a folder)",
    # what mkdir(parents=True) meets where a parent folder is a file
    errno.EDQUOT: "disk quota exceeded",
    errno.EEXIST: "not a directory (a file is in the way of a folder)",
}


# Kernel file systems that take no new files: writes there fail with ENOENT or EACCES, which
# would read as "no such file" or "permission denied" for a folder the user can see.
_VIRTUAL_ROOTS = ("/proc", "/sys")


def reason(exc: OSError, target: Path | None = None) -> str:
    """A plain-words reason for a file-system error met writing `target`."""
    if target is not None:
        virtual = _virtual_root(target)
        if virtual is not None:
            return f"{virtual} is a virtual file system of the kernel (it takes no files)"
    code = exc.errno or _os_error_in(str(exc))
    return _REASONS.get(code or 0, exc.strerror or (os.strerror(code) if code else str(exc)))


def _os_error_in(message: str) -> int | None:
    """The errno a Rust library (polars) puts in its message as `(os error N)`, which Python's
    `errno` attribute then lacks."""
    found = re.search(r"\(os error (\d+)\)", message)
    return int(found.group(1)) if found else None


def _virtual_root(target: Path) -> str | None:
    resolved = os.path.realpath(target)
    for root in _VIRTUAL_ROOTS:
        if resolved == root or resolved.startswith(root + "/"):
            return root
    return None


def write_error(target: Path, exc: OSError) -> OutputError:
    """The one error every output gives: `cannot write TARGET: <reason>`."""
    return OutputError(f"cannot write {for_terminal(str(target))}: {reason(exc, target)}")


@contextmanager
def writing(target: Path) -> Iterator[None]:
    """Turn an `OSError` raised while writing `target` into an `OutputError`."""
    try:
        yield
    except OSError as exc:
        raise write_error(target, exc) from None


@contextmanager
def output_file(path: Path) -> Iterator[TextIO]:
    """A text file to write that appears as `path` only when the block ends without error.

    It is written beside `path` (same file system: the rename is atomic) and replaces it at the
    end; on any error the scratch file is removed, `path` stays as it was, and an `OSError`
    becomes the `OutputError` naming `path`."""
    target = Path(os.path.abspath(path))
    if target.is_dir():
        raise OutputError(f"cannot write {for_terminal(str(path))}: is a folder (a file name is needed)")
    scratch: Path | None = None
    try:
        with writing(Path(path)):
            target.parent.mkdir(parents=True, exist_ok=True)
            scratch = _sibling(target, "tmp")
            with scratch.open("x", encoding="utf-8", newline="") as handle:
                yield handle
            os.replace(scratch, target)
            scratch = None
    finally:
        if scratch is not None:
            scratch.unlink(missing_ok=True)


def write_file(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (see `output_file`)."""
    with output_file(path) as handle:
        handle.write(text)


def source_id(log: str | Path) -> str:
    """How the marker names a log: its absolute path, its URI, or `<stdin>`."""
    if str(log) == "-":
        return "<stdin>"
    return str(log) if is_uri(str(log)) else os.path.abspath(log)


def marker_sources(out: Path) -> list[str]:
    """The logs whose tables `out` holds, as its marker records them (none for older markers)."""
    try:
        text = (out / MARKER_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line[len(_SOURCE_KEY) :] for line in text.splitlines() if line.startswith(_SOURCE_KEY)]


@contextmanager
def output_folder(
    out: Path, *, force: bool = False, sources: Sequence[str] | None = None, tables: bool = True
) -> Iterator[Path]:
    """A fresh temporary folder beside `out` to write into; it replaces `out` when the block ends.

    When the block raises, `out` stays as it was and the temporary folder is removed. A non-empty
    `out` that logparse did not write needs `force`; so does an `out` holding the tables of logs
    other than `sources`. Files of `out` that are not logparse's are carried over. With `tables`,
    the folder gets the marker (it holds tables); reports and charts do not."""
    _check_out_dir(out, force=force)
    recorded = None if sources is None else sorted({source_id(s) for s in sources})
    if recorded is not None and not force:
        _check_same_sources(out, recorded)
    target = Path(os.path.abspath(out))
    with writing(out):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _sibling(target, "tmp")
        tmp.mkdir()
    try:
        with writing(out):
            yield tmp
            if tables:
                (tmp / MARKER_FILE).write_text(_marker_text(recorded), encoding="utf-8")
            _swap_into_place(tmp, target, {p.stem for p in tmp.glob("*.parquet")})
    finally:
        remove_tree(tmp)


@contextmanager
def scratch_folder(target: Path) -> Iterator[Path]:
    """A fresh hidden folder beside `target` (same file system: what is in it can be renamed into
    `target`), removed when the block ends."""
    with writing(target):
        path = Path(os.path.abspath(target))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _sibling(path, "tmp")
        tmp.mkdir()
    try:
        yield tmp
    finally:
        remove_tree(tmp)


@contextmanager
def output_dir(out: Path) -> Iterator[Path]:
    """`output_folder` for a folder of outputs that are not tables (a report, benchmark tables):
    it may be any folder, and of what it holds only the names written again are replaced."""
    with output_folder(out, force=True, tables=False) as tmp:
        yield tmp


def check_writable(out: Path, *, file: bool = False) -> None:
    """Raise the `OutputError` writing `out` (a folder, or a `file`) would meet: read-only, no
    permission, a file in the way, ... before the work whose result it is to hold. Creates nothing:
    the nearest folder that exists is probed."""
    target = Path(os.path.abspath(out))
    if file and target.is_dir():
        raise OutputError(f"cannot write {for_terminal(str(out))}: is a folder (a file name is needed)")
    if not file and target.exists() and not target.is_dir():
        raise OutputError(f"cannot write {for_terminal(str(out))}: a file is in the way (a folder is needed)")
    with writing(out):
        parent = target.parent
        while not parent.exists() and not parent.is_symlink() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(parent))
        probe = _sibling(parent / target.name, "probe")
        probe.mkdir()
        probe.rmdir()


def _swap_into_place(tmp: Path, out: Path, kinds: set[str]) -> None:
    """Make the finished folder `tmp` the new `out`, keeping what the user put in the old one."""
    if not out.exists() and not out.is_symlink():
        os.rename(tmp, out)
        return
    ours = (out / MARKER_FILE).exists()

    def carried(entry: Path) -> bool:
        if entry.name in (MARKER_FILE, STATS_FILE, "_read_stats.json") or (
            entry.suffix == ".parquet" and (ours or entry.stem in kinds)
        ):
            return False
        if ours and entry.is_dir() and entry.name.startswith(("run=", "kind=")):
            return False
        return not (tmp / entry.name).exists()

    if out.is_symlink() or not out.is_dir():
        _replace_files(tmp, out, carried)
        return
    old = _sibling(out, "old")
    try:
        os.rename(out, old)
    except OSError:
        _replace_files(tmp, out, carried)  # e.g. `out` is a mount point: file by file instead
        return
    try:
        os.rename(tmp, out)
    except BaseException:
        os.replace(old, out)
        raise
    for entry in sorted(old.iterdir()):
        if carried(entry) and not (out / entry.name).exists():
            os.rename(entry, out / entry.name)
    remove_tree(old)


def _sibling(out: Path, tag: str) -> Path:
    """A fresh hidden name beside `out` (same file system, so renames are atomic)."""
    while True:
        path = out.parent / f".{out.name}.{secrets.token_hex(4)}.logparse-{tag}"
        if not path.exists():
            return path


def _replace_files(tmp: Path, out: Path, carried: Callable[[Path], bool]) -> None:
    for entry in out.iterdir():
        if not carried(entry):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    for entry in tmp.iterdir():
        os.replace(entry, out / entry.name)


def _marker_text(sources: Sequence[str] | None) -> str:
    return "written by logparse\n" + "".join(f"{_SOURCE_KEY}{s}\n" for s in sources or ())


def _check_same_sources(out: Path, sources: Sequence[str]) -> None:
    others = [s for s in marker_sources(out) if s not in set(sources)]
    if others:
        shown = ", ".join(for_terminal(s) for s in others[:3])
        if len(others) > 3:
            shown += f" and {len(others) - 3} more"
        raise InputError(
            f"{for_terminal(str(out))}: holds the tables of other logs ({shown}), which this run "
            "would replace; choose another --out, ingest all the logs together, or pass --force"
        )


def _check_out_dir(out: Path, *, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"cannot write {for_terminal(str(out))}: a file is in the way (a folder is needed)")
    try:
        foreign = out.exists() and any(out.iterdir()) and not (out / MARKER_FILE).exists()
    except OSError as exc:
        raise write_error(out, exc) from None
    if foreign and not force:
        raise InputError(
            f"{for_terminal(str(out))}: folder is not empty and was not written by logparse; "
            "choose another --out or pass --force"
        )


def remove_tree(path: Path) -> None:
    """Remove a folder tree (temporary outputs); missing is fine."""
    shutil.rmtree(path, ignore_errors=True)
