"""Fleet ingest: many logs, one run each, into a dataset on a local file system or on object
storage, on this machine's threads or on Ray.

* `plan_runs(paths, out)`: the runs (`RunTask`, plain data), the dataset claimed;
* `ingest_run(task)`: one run, the engine-neutral unit of work (Ray, Dask, Spark, a process pool);
* `run_tasks(tasks, executor=...)`: the runs on this machine's threads or on Ray;
* `ingest_fleet(paths, out, executor=...)`: both, with the results in the order of the runs.

The dataset is the one `logparse ingest DIR --out DATASET` writes (`run=<name>/kind=<kind>/
part-NNNNN.parquet`, row for row), except that it is written run by run: each run appears whole
(its `_ingest.json` last), a rerun skips the complete runs and redoes the others, and `force`
redoes every run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from logparse.errors import InputError, LogparseError, PartialFailure
from logparse.fleet.local import run_on_threads
from logparse.fleet.plan import claim_dataset, plan_runs
from logparse.fleet.task import DONE, FAILED, NOT_RUN, SKIPPED, RunResult, RunTask, ingest_run

EXECUTORS = ("threads", "ray")


def ingest_fleet(
    paths: Sequence[str],
    out: str | Path,
    *,
    executor: str = "threads",
    address: str | None = None,
    concurrency: int | None = None,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    force: bool = False,
    on_done: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Ingest every log `paths` name into the dataset `out`, a run per log, on `executor`
    (``threads``: `concurrency` threads of this machine, default its cores; ``ray``: Ray tasks,
    at most `concurrency` at a time, on the cluster at `address`, `RAY_ADDRESS`, or a local one).
    `on_done` is called as each run ends. Returns every run's result, in the order of the runs."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r}; known: {', '.join(EXECUTORS)}")
    tasks = plan_runs(paths, out, engine=engine, year=year, tz=tz, patterns=patterns, force=force)
    return run_tasks(tasks, executor=executor, address=address, concurrency=concurrency, on_done=on_done)


def run_tasks(
    tasks: Sequence[RunTask],
    *,
    executor: str = "threads",
    address: str | None = None,
    concurrency: int | None = None,
    on_done: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Run planned `tasks` on `executor` (as `ingest_fleet`); the results in the order of `tasks`."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r}; known: {', '.join(EXECUTORS)}")
    if executor == "ray":
        from logparse.fleet.on_ray import run_on_ray

        results = run_on_ray(tasks, address=address, concurrency=concurrency, on_done=on_done)
    else:
        results = run_on_threads(tasks, jobs=concurrency, on_done=on_done)
    order = {task.run: k for k, task in enumerate(tasks)}
    return sorted(results, key=lambda r: order.get(r.run, len(order)))


def fleet_failure(results: Sequence[RunResult]) -> LogparseError | None:
    """The error a fleet ends with, or None when no run failed: `PartialFailure` when some runs
    were written, else an error saying none was."""
    bad = [r for r in results if r.status in (FAILED, NOT_RUN)]
    if not bad:
        return None
    left_out = next((r.error for r in bad if r.status == NOT_RUN and r.error), None)
    write = next((r.error for r in bad if r.cause == "write" and r.status == FAILED), None)
    store = (
        left_out.removeprefix("not started: ")
        if left_out
        else write and f"writing the dataset failed ({write})"
    )
    causes = [r.cause for r in bad if r.status == FAILED]
    parts = [
        f"{causes.count('unread')} could not be read" if "unread" in causes else "",
        f"{causes.count('engine')} not recognised as an engine's log (pass --engine)"
        if "engine" in causes
        else "",
        f"{causes.count('write')} could not be written" if "write" in causes else "",
        f"{causes.count('conflict')} named like another log's run" if "conflict" in causes else "",
        f"{causes.count('worker') + causes.count('other')} failed"
        if {"worker", "other"} & set(causes)
        else "",
        f"{len(bad) - len(causes)} not started" if len(bad) > len(causes) else "",
    ]
    message = f"{len(bad)} of {len(results)} runs were not written: {', '.join(p for p in parts if p)}"
    if store:
        message += f"; {store}: run the ingest again once the store is back (complete runs are skipped)"
    if len(bad) == len(results):
        return InputError(message)
    return PartialFailure(message, len(bad), len(results))


__all__ = [
    "DONE",
    "EXECUTORS",
    "FAILED",
    "NOT_RUN",
    "SKIPPED",
    "RunResult",
    "RunTask",
    "claim_dataset",
    "fleet_failure",
    "ingest_fleet",
    "ingest_run",
    "plan_runs",
    "run_tasks",
]
