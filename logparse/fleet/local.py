"""The runs of a fleet on this machine's threads (the compiled core parses with the GIL released)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from logparse.fleet.task import FAILED, NOT_RUN, RunResult, RunTask, ingest_run, store_down
from logparse.ingest.run import usable_cores


def run_on_threads(
    tasks: Sequence[RunTask],
    *,
    jobs: int | None = None,
    on_done: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Run `tasks` on `jobs` threads (default: the cores), a run per thread; fewer runs than
    threads share the threads among their blocks. Once the output store is down (`store_down`)
    the runs not yet started are left out (``not run``)."""
    jobs = jobs or usable_cores()
    per_run = max(1, jobs // max(1, len(tasks)))
    stop = threading.Event()

    def one(task: RunTask) -> RunResult:
        if stop.is_set():
            return not_run(task, stop_reason[0])
        try:
            result = ingest_run(_with_workers(task, per_run))
        except Exception as exc:  # a bug: its run's row says so, the others go on (as on Ray)
            if os.environ.get("LOGPARSE_DEBUG"):
                raise
            result = RunResult(
                task.run,
                task.log,
                FAILED,
                error=f"internal error ({type(exc).__name__}: {exc})",
                cause="other",
            )
        down = None if stop.is_set() else store_down(task, result)
        if down is not None:
            stop_reason[0] = down
            stop.set()
        return result

    stop_reason = [""]
    results: list[RunResult] = []
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="logparse-run") as pool:
        for future in as_completed([pool.submit(one, task) for task in tasks]):
            result = future.result()
            results.append(result)
            if on_done is not None:
                on_done(result)
    return results


def _with_workers(task: RunTask, workers: int) -> RunTask:
    from dataclasses import replace

    return replace(task, workers=workers)


def not_run(task: RunTask, reason: str) -> RunResult:
    """The result of a run left out because writing the dataset failed on another run."""
    return RunResult(
        task.run,
        task.log,
        NOT_RUN,
        bytes=None,
        error=f"not started: writing the dataset failed ({reason})",
        cause="write",
    )


__all__ = ["not_run", "run_on_threads"]
