"""Collect events into one typed polars table per kind, and write them as Parquet."""
from __future__ import annotations

import datetime as dt
import os
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.grammar import COMMON_FIELDS, FieldType, Grammar
from logparse.reader import STATS_FILE
from logparse.timeparse import parse_times

POLARS_TYPES: dict[str, pl.DataType] = {
    "int": pl.Int64(),
    "float": pl.Float64(),
    "str": pl.String(),
    "bool": pl.Boolean(),
    "floats": pl.List(pl.Float64()),
}
COMMON_ORDER = ["line_no", "ts", "time", "engine", "rank", "pid", "level", "rule"]
CHUNK_ROWS = 50_000
MARKER_FILE = ".logparse"
_SOURCE_KEY = "source: "


class LineCounts:
    """Line totals derived from `counts` (events per kind) for any ingested-log result."""

    counts: dict[str, int]

    @property
    def lines(self) -> int:
        """Number of input lines (= number of events)."""
        return sum(self.counts.values())

    @property
    def typed_lines(self) -> int:
        """Lines that became a kind other than `unparsed`."""
        return self.lines - self.counts.get("unparsed", 0)

    @property
    def coverage(self) -> float:
        """Typed lines over all lines (1.0 for an empty log)."""
        return self.typed_lines / self.lines if self.lines else 1.0


def kind_schema(grammar: Grammar, kind: str) -> dict[str, pl.DataType]:
    """The polars schema of a kind's table: common columns, then the kind's fields."""
    schema: dict[str, pl.DataType] = {}
    for name in COMMON_ORDER:
        schema[name] = pl.Datetime("us") if name == "time" else POLARS_TYPES[COMMON_FIELDS[name]]
    fields: Mapping[str, FieldType] = grammar.schema(kind)
    for name, typ in fields.items():
        schema[name] = POLARS_TYPES[typ]
    return schema


class TableBuilder:
    """Accumulates events (dicts) per kind in bounded chunks; `finish` returns the tables."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._chunks: dict[str, list[pl.DataFrame]] = {}
        self._stamps: list[str | None] = []
        self.counts: dict[str, int] = {}

    def add(self, event: Mapping[str, Any]) -> None:
        """Add one event (its `kind` key picks the table)."""
        kind = event["kind"]
        rows = self._rows.setdefault(kind, [])
        rows.append(event)  # type: ignore[arg-type]
        self._stamps.append(event.get("ts"))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if len(rows) >= CHUNK_ROWS:
            self._flush(kind)

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Add many events."""
        for event in events:
            self.add(event)

    def _flush(self, kind: str) -> None:
        rows = self._rows.get(kind)
        if not rows:
            return
        schema = kind_schema(self.grammar, kind)
        schema_no_time = {k: v for k, v in schema.items() if k != "time"}
        frame = pl.from_dicts(rows, schema=schema_no_time, strict=False)
        self._chunks.setdefault(kind, []).append(frame)
        self._rows[kind] = []

    def finish(self, *, year: int | None = None, fallback_time: dt.datetime | None = None) -> dict[str, pl.DataFrame]:
        """One DataFrame per kind present, with `time` parsed from `ts` in line order."""
        for kind in list(self._rows):
            self._flush(kind)
        times = parse_times(self._stamps, year=year, fallback=fallback_time)
        time_of_line = pl.DataFrame(
            {"line_no": pl.Series(range(1, len(times) + 1), dtype=pl.Int64),
             "time": pl.Series(times, dtype=pl.Datetime("us"))}
        )
        tables: dict[str, pl.DataFrame] = {}
        for kind in sorted(self._chunks):
            frame = pl.concat(self._chunks[kind], how="vertical")
            schema = kind_schema(self.grammar, kind)
            frame = frame.join(time_of_line, on="line_no", how="left").select(list(schema))
            tables[kind] = frame.sort("line_no")
        return tables


def write_tables(tables: Mapping[str, pl.DataFrame], out: Path, *, force: bool = False,
                 sources: Sequence[str] | None = None) -> list[Path]:
    """Write `out/<kind>.parquet` for each table, atomically; refuse to clobber foreign folders.

    All tables are written into a temporary folder beside `out`, which then takes `out`'s place, so
    an interrupted run leaves the previous output as it was. Files in `out` that are not tables
    logparse wrote (e.g. the user's notes) are carried over. `sources` as for `table_folder`.
    """
    with table_folder(out, force=force, sources=sources) as tmp:
        for kind, frame in tables.items():
            frame.write_parquet(tmp / f"{kind}.parquet", compression="zstd", row_group_size=CHUNK_ROWS * 2)
    return [out / f"{kind}.parquet" for kind in tables]


@contextmanager
def table_folder(out: Path, *, force: bool = False, sources: Sequence[str] | None = None) -> Iterator[Path]:
    """A fresh temporary folder beside `out` to write tables into; it replaces `out` atomically.

    When the block ends normally the folder gets the `.logparse` marker and takes `out`'s place
    (files of `out` that are not logparse's are carried over); when it raises, `out` stays as it
    was and the temporary folder is removed. `--force` is needed for a non-empty foreign `out`, and
    for an `out` that holds the tables of logs other than `sources` (the logs being written, which
    the marker records): replacing them would lose those logs' tables.
    """
    _check_out_dir(out, force=force)
    recorded = None if sources is None else sorted({source_id(s) for s in sources})
    if recorded is not None and not force:
        _check_same_sources(out, recorded)
    target = Path(os.path.abspath(out))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _sibling(target, "tmp")
    tmp.mkdir()  # honours the umask, as a plain mkdir of `out` would
    try:
        yield tmp
        (tmp / MARKER_FILE).write_text(_marker_text(recorded), encoding="utf-8")
        kinds = {p.stem for p in tmp.glob("*.parquet")}
        _swap_into_place(tmp, target, kinds)
    finally:
        remove_tree(tmp)


def _swap_into_place(tmp: Path, out: Path, kinds: set[str]) -> None:
    """Make the finished folder `tmp` the new `out`, keeping what the user put in the old one."""
    if not out.exists() and not out.is_symlink():
        os.rename(tmp, out)
        return
    ours = (out / MARKER_FILE).exists()

    def carried(entry: Path) -> bool:
        if entry.name in (MARKER_FILE, STATS_FILE) or (
                entry.suffix == ".parquet" and (ours or entry.stem in kinds)):
            return False  # our marker and read stats, and tables (stale ones of an earlier run go too)
        if ours and entry.is_dir() and entry.name.startswith(("run=", "kind=")):
            return False  # the runs of an earlier dataset
        return True

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
        if not carried(entry) and entry.is_file():
            entry.unlink()
    for entry in tmp.iterdir():
        os.replace(entry, out / entry.name)


def source_id(log: str | Path) -> str:
    """How the marker names a log: its absolute path, or `<stdin>`."""
    return "<stdin>" if str(log) == "-" else os.path.abspath(log)


def _marker_text(sources: Sequence[str] | None) -> str:
    return "written by logparse\n" + "".join(f"{_SOURCE_KEY}{s}\n" for s in sources or ())


def marker_sources(out: Path) -> list[str]:
    """The logs whose tables `out` holds, as its marker records them (none for older markers)."""
    try:
        text = (out / MARKER_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line[len(_SOURCE_KEY):] for line in text.splitlines() if line.startswith(_SOURCE_KEY)]


def _check_same_sources(out: Path, sources: Sequence[str]) -> None:
    others = [s for s in marker_sources(out) if s not in set(sources)]
    if others:
        shown = ", ".join(for_terminal(s) for s in others[:3])
        if len(others) > 3:
            shown += f" and {len(others) - 3} more"
        raise InputError(f"{for_terminal(str(out))}: holds the tables of other logs ({shown}), which this run "
                         "would replace; choose another --out, ingest all the logs together, or pass --force")


def _check_out_dir(out: Path, *, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"{for_terminal(str(out))}: exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not (out / MARKER_FILE).exists() and not force:
        raise InputError(f"{for_terminal(str(out))}: folder is not empty and was not written by logparse; "
                         "choose another --out or pass --force")


def read_tables(folder: Path) -> dict[str, pl.DataFrame]:
    """Read `folder/<kind>.parquet` tables written by `write_tables`."""
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of logparse tables")
    return {p.stem: pl.read_parquet(p, glob=False) for p in sorted(folder.glob("*.parquet"))}


def remove_tree(path: Path) -> None:
    """Remove a folder tree (used for temporary outputs)."""
    shutil.rmtree(path, ignore_errors=True)
