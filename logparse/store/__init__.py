"""Everything `ingest --out` writes and every command reads back: the output folder (marker,
atomic swap), tables (Parquet, flat or as a dataset), run names, the ingest facts."""

from __future__ import annotations

from logparse.store.folder import (
    MARKER_FILE,
    STATS_FILE,
    check_writable,
    marker_sources,
    output_dir,
    output_file,
    output_folder,
    remove_tree,
    scratch_folder,
    source_id,
    write_error,
    write_file,
    writing,
)
from logparse.store.info import is_complete, load_info, save_info
from logparse.store.runs import expand_inputs, run_name, run_names
from logparse.store.tables import (
    is_table_folder,
    part_file,
    read_tables,
    runs_of,
    scan_tables,
    table_paths,
    write_csv,
    write_parquet,
    write_tables,
)

__all__ = [
    "MARKER_FILE",
    "STATS_FILE",
    "check_writable",
    "expand_inputs",
    "is_complete",
    "is_table_folder",
    "load_info",
    "marker_sources",
    "output_dir",
    "output_file",
    "output_folder",
    "part_file",
    "read_tables",
    "remove_tree",
    "run_name",
    "run_names",
    "runs_of",
    "save_info",
    "scan_tables",
    "scratch_folder",
    "source_id",
    "table_paths",
    "write_csv",
    "write_error",
    "write_file",
    "write_parquet",
    "write_tables",
    "writing",
]
