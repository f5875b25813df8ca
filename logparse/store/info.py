"""What ingesting a log found, kept beside its tables (`_ingest.json`): the engine, the reading
problems, how its times were made, the keys no rule knew. Commands that read the tables later
(`summary`, `report`, a dataset's runs) warn from it as `ingest` did.

The file is written after the tables, so it is also a run's completion marker: a `run=<name>`
folder of a dataset is complete once it holds it (an object store has no rename, so a run written
there appears file by file; `logparse.fleet` writes this file last)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from logparse.store.folder import STATS_FILE

OLD_STATS_FILE = "_read_stats.json"  # written before the ingest facts had a file of their own


def save_info(folder: Path, info: dict[str, Any]) -> None:
    """Keep `info` (plain data) with the tables written into `folder`."""
    (folder / STATS_FILE).write_text(json.dumps(info, default=str) + "\n", encoding="utf-8")


def is_complete(run: Path) -> bool:
    """Whether the run folder `run` holds its completion marker (its ingest facts)."""
    return any((run / name).is_file() for name in (STATS_FILE, OLD_STATS_FILE))


def load_info(folder: Path) -> dict[str, Any] | None:
    """The facts saved in `folder`, or None (none saved, or unreadable: they only add warnings)."""
    for name in (STATS_FILE, OLD_STATS_FILE):
        try:
            saved = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(saved, dict):
            return saved if name == STATS_FILE else {"read": saved}
    return None
