"""Logs and datasets on object storage: `s3://`, `gs://`, `hdfs://`, `file://` through `pyarrow.fs`,
any other scheme through fsspec when it is installed.

A URI names a file (a log, a client result) or a folder (a prefix: logs under it, a dataset). The
standard environment configures the stores, as their own tools read it: for S3 the credentials
chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, instance roles), `AWS_REGION`
(or `AWS_DEFAULT_REGION`) and `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` for S3-compatible stores
(MinIO, Ceph, moto, ...); for GCS the application default credentials; for HDFS `HADOOP_HOME` and
libhdfs. Object stores have no rename, so what must appear whole (a run of a dataset) is written
file by file with its completion marker last (`logparse.fleet`), and readers count a run only
once that marker is there.

Errors of a store (no such bucket, access denied, the store unreachable) become one `InputError`
or `OutputError` naming the URI and the store's reason.
"""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logparse.errors import InputError, OutputError
from logparse.escape import for_terminal
from logparse.store.uri import is_uri, scheme_of


@dataclass(frozen=True)
class Location:
    """A file or folder on a file system: `fs` (a `pyarrow.fs.FileSystem`) and the `path` inside
    it; `uri` is how it is named in messages; `local` the same place as a local path, when it is
    one (`file://` and plain paths)."""

    uri: str
    fs: Any
    path: str
    local: Path | None = None

    def join(self, *names: str) -> Location:
        """The location of `names` under this one."""
        local = None if self.local is None else self.local.joinpath(*names)
        uri = "/".join([self.uri.rstrip("/"), *names])
        return Location(uri, self.fs, posixpath.join(self.path, *names), local)

    @property
    def name(self) -> str:
        """The last component of the path."""
        return posixpath.basename(self.path.rstrip("/"))


def locate(target: str | Path) -> Location:
    """The `Location` of a URI or a local path."""
    text = str(target)
    if not is_uri(text):
        path = Path(os.path.abspath(text))
        return Location(text, _local_fs(), str(path), path)
    scheme = scheme_of(text)
    rest = text[len(scheme) + 3 :]
    if scheme == "file":
        path = Path(os.path.abspath(rest or "/"))
        return Location(text, _local_fs(), str(path), path)
    if scheme in ("s3", "s3a"):
        bucket, _, key = rest.partition("/")
        if not bucket:
            raise InputError(f"{for_terminal(text)}: no bucket in the URI")
        return Location(text.rstrip("/"), _s3_fs(), posixpath.join(bucket, key).rstrip("/") or bucket)
    fs, inside = _other_fs(text, scheme)
    return Location(text.rstrip("/"), fs, inside.rstrip("/") or inside)


@functools.cache
def _local_fs() -> Any:
    import pyarrow.fs as pafs

    return pafs.LocalFileSystem()


def s3_options(env: os._Environ[str] | dict[str, str] | None = None) -> dict[str, Any]:
    """The `pyarrow.fs.S3FileSystem` options the standard AWS environment gives: the endpoint of an
    S3-compatible store (`AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`) and the region
    (`AWS_REGION`, else `AWS_DEFAULT_REGION`). Credentials are left to the SDK's own chain."""
    env = os.environ if env is None else env
    options: dict[str, Any] = {}
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        if host:
            options["scheme"] = scheme
            options["endpoint_override"] = host.rstrip("/")
        else:
            options["endpoint_override"] = endpoint.rstrip("/")
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        options["region"] = region
    elif endpoint:
        options["region"] = "us-east-1"  # an S3-compatible store ignores it; the SDK wants one
    return options


def _s3_fs() -> Any:
    return _s3_fs_for(tuple(sorted(s3_options().items())))


@functools.cache
def _s3_fs_for(options: tuple[tuple[str, Any], ...]) -> Any:
    import pyarrow.fs as pafs

    return pafs.S3FileSystem(**dict(options))


def _other_fs(uri: str, scheme: str) -> tuple[Any, str]:
    """`gs://`, `hdfs://`, ... through pyarrow; else fsspec's implementation of the scheme."""
    import pyarrow.fs as pafs

    if scheme in ("gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"):
        try:
            fs, path = pafs.FileSystem.from_uri(uri)
        except (OSError, ValueError, ImportError) as exc:
            raise InputError(f"{for_terminal(uri)}: cannot open the store: {_reason(exc)}") from None
        return fs, path
    try:
        import fsspec
    except ImportError:
        raise InputError(
            f"{for_terminal(uri)}: no file system for {scheme}:// (pyarrow has none; install fsspec and "
            f"the package for {scheme}://)"
        ) from None
    try:
        impl, path = fsspec.core.url_to_fs(uri)
    except (ImportError, ValueError) as exc:
        raise InputError(f"{for_terminal(uri)}: no file system for {scheme}:// ({exc})") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(impl)), path


def _reason(exc: BaseException) -> str:
    """The store's reason, in one line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


def store_error(exc: BaseException, loc: Location, *, writing: bool = False) -> InputError | OutputError:
    """The one error a store's failure gives: `cannot read|write URI: <reason>`."""
    if writing:
        return OutputError(f"cannot write {for_terminal(loc.uri)}: {_reason(exc)}")
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{for_terminal(loc.uri)}: no such file or folder")
    return InputError(f"cannot read {for_terminal(loc.uri)}: {_reason(exc)}")


# -- what is there ---------------------------------------------------------------------------------
def kind_of(loc: Location) -> str:
    """``file``, ``folder`` or ``missing``."""
    import pyarrow.fs as pafs

    try:
        info = loc.fs.get_file_info(loc.path)
    except OSError as exc:
        raise store_error(exc, loc) from None
    if info.type == pafs.FileType.File:
        return "file"
    if info.type == pafs.FileType.Directory:
        return "folder"
    return "missing"


def file_facts(uri: str) -> tuple[int | None, Any]:
    """(size in bytes, modification time as an aware datetime or None) of a file at `uri`."""
    import pyarrow.fs as pafs

    loc = locate(uri)
    try:
        info = loc.fs.get_file_info(loc.path)
    except OSError as exc:
        raise store_error(exc, loc) from None
    if info.type == pafs.FileType.NotFound:
        raise InputError(f"{for_terminal(uri)}: no such file")
    if info.type != pafs.FileType.File:
        raise InputError(f"{for_terminal(uri)}: is a folder, not a log file")
    mtime = info.mtime
    if mtime is not None and mtime.tzinfo is None:
        import datetime as dt

        mtime = mtime.replace(tzinfo=dt.UTC)
    return info.size, mtime


def open_input(uri: str) -> Any:
    """A binary input stream over the file at `uri`, its bytes as stored (a `.gz` is not
    decompressed here: the core knows gzip by its magic bytes)."""
    loc = locate(uri)
    try:
        return loc.fs.open_input_stream(loc.path, compression=None)
    except FileNotFoundError:
        raise InputError(f"{for_terminal(uri)}: no such file") from None
    except OSError as exc:
        raise store_error(exc, loc) from None


# -- writing ---------------------------------------------------------------------------------------
def write_bytes(loc: Location, data: bytes) -> None:
    """Write a whole small file at `loc` (its folder made as needed)."""
    try:
        if loc.local is not None:
            loc.local.parent.mkdir(parents=True, exist_ok=True)
        with loc.fs.open_output_stream(loc.path) as out:
            out.write(data)
    except OSError as exc:
        raise store_error(exc, loc, writing=True) from None


def read_bytes(loc: Location) -> bytes | None:
    """The bytes of the file at `loc`, or None when there is none."""
    try:
        with loc.fs.open_input_stream(loc.path, compression=None) as stream:
            data: bytes = stream.read()
            return data
    except FileNotFoundError:
        return None
    except OSError as exc:
        if kind_of(loc) == "missing":
            return None
        raise store_error(exc, loc) from None


def delete_file(loc: Location) -> None:
    """Remove the file at `loc`; missing is fine."""
    try:
        loc.fs.delete_file(loc.path)
    except FileNotFoundError:
        return
    except OSError as exc:
        if kind_of(loc) != "missing":
            raise store_error(exc, loc, writing=True) from None


def delete_folder(loc: Location) -> None:
    """Remove the folder at `loc` and everything under it; missing is fine."""
    try:
        loc.fs.delete_dir_contents(loc.path, missing_dir_ok=True)
        loc.fs.delete_dir(loc.path)
    except FileNotFoundError:
        return
    except OSError as exc:
        if kind_of(loc) != "missing":
            raise store_error(exc, loc, writing=True) from None


def upload_folder(local: Path, loc: Location, *, skip: Sequence[str] = ()) -> None:
    """Copy every file under the local folder `local` to the folder `loc` (the names in `skip`,
    relative to `local`, left for the caller to write afterwards)."""
    import pyarrow.fs as pafs

    left_out = set(skip)
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = path.relative_to(local).as_posix()
        if rel in left_out:
            continue
        target = loc.join(*rel.split("/"))
        try:
            if target.local is not None:
                target.local.parent.mkdir(parents=True, exist_ok=True)
            pafs.copy_files(
                str(path), target.path, source_filesystem=_local_fs(), destination_filesystem=loc.fs
            )
        except OSError as exc:
            raise store_error(exc, target, writing=True) from None


def download_folder(loc: Location, local: Path) -> None:
    """Copy every file under the folder `loc` into the local folder `local`."""
    import pyarrow.fs as pafs

    local.mkdir(parents=True, exist_ok=True)
    try:
        pafs.copy_files(loc.path, str(local), source_filesystem=loc.fs, destination_filesystem=_local_fs())
    except OSError as exc:
        raise store_error(exc, loc) from None


__all__ = [
    "Location",
    "delete_file",
    "delete_folder",
    "download_folder",
    "file_facts",
    "is_uri",
    "kind_of",
    "locate",
    "open_input",
    "read_bytes",
    "s3_options",
    "scheme_of",
    "store_error",
    "upload_folder",
    "write_bytes",
]
