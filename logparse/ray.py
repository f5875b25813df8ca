"""logparse on Ray: a fleet of logs ingested as Ray tasks, and a dataset's events as a Ray Dataset.

>>> import logparse.ray                                                     # doctest: +SKIP
>>> results = logparse.ray.ingest(["s3://logs/sweep/"], out="s3://lake/sweep")  # doctest: +SKIP
>>> decode = logparse.ray.read_events("s3://lake/sweep", "decode_batch")   # doctest: +SKIP
>>> decode.groupby("run").mean("gen_tps").show()                           # doctest: +SKIP

Needs the `ray` extra (`pip install 'logparse[ray]'`); importing this module does not import Ray,
calling it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logparse.errors import InputError
from logparse.escape import for_terminal
from logparse.fleet import RunResult, ingest_fleet
from logparse.fleet.on_ray import import_ray
from logparse.fleet.publish import completed
from logparse.fleet.task import RUN_PREFIX
from logparse.store.listing import list_entries, list_files
from logparse.store.remote import locate


def ingest(
    paths: Sequence[str | Path] | str | Path,
    *,
    out: str | Path,
    address: str | None = None,
    concurrency: int | None = None,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    force: bool = False,
) -> list[RunResult]:
    """Ingest the logs `paths` name (files, folders, globs, URIs) into the dataset `out`, one Ray
    task per log, as `logparse ingest PATHS --out OUT --executor ray` does; the per-run results,
    in the order of the runs. Ray is the session this process has, else `address` (or
    `RAY_ADDRESS`), else a local Ray started for the call and shut down after it."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    return ingest_fleet(
        [str(p) for p in given],
        str(out),
        executor="ray",
        address=address,
        concurrency=concurrency,
        engine=engine,
        year=year,
        tz=tz,
        patterns=patterns,
        force=force,
    )


def complete_runs(dataset: str | Path) -> list[str]:
    """The names of the runs of `dataset` (a path or URI) whose completion marker exists."""
    loc = locate(str(dataset))
    names = [n for n in list_entries(loc) if n.startswith(RUN_PREFIX)]
    return [n[len(RUN_PREFIX) :] for n in names if completed(loc.join(n)) is not None]


def read_events(dataset: str | Path, kind: str, **read_options: Any) -> Any:
    """The events of `kind` across the complete runs of `dataset` (a path or URI) as one
    `ray.data.Dataset`, with the columns of the kind's table and `run` (the run's name); runs
    still without their completion marker are left out. `read_options` go to
    `ray.data.read_parquet`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ray = import_ray()
    loc = locate(str(dataset))
    runs = complete_runs(dataset)
    if not runs:
        raise InputError(f"{for_terminal(str(dataset))}: no complete run in this dataset")
    files: list[tuple[str, str]] = []
    for run in runs:
        folder = loc.join(f"{RUN_PREFIX}{run}", f"kind={kind}")
        files += [(run, folder.join(rel).path) for rel, _ in list_files(folder) if rel.endswith(".parquet")]
    if not files:
        raise InputError(f"{for_terminal(str(dataset))}: no run has {kind} events")
    # One schema for the kind across runs (a grammar of your own may add columns in some runs).
    schema = pa.unify_schemas([pq.read_schema(path, filesystem=loc.fs) for _, path in files])
    run_of = {path: run for run, path in files}

    def with_run(batch: pa.Table) -> pa.Table:
        paths = batch.column("path").to_pylist()
        return batch.drop_columns(["path"]).append_column("run", pa.array([run_of[p] for p in paths]))

    data = ray.data.read_parquet(
        [path for _, path in files],
        filesystem=loc.fs,
        schema=schema,
        include_paths=True,
        partitioning=None,
        **read_options,
    )
    return data.map_batches(with_run, batch_format="pyarrow")


__all__ = ["complete_runs", "ingest", "read_events"]
