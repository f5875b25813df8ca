"""The runs of a fleet as Ray tasks: one task per log, on the cluster the user already runs (an
address, `RAY_ADDRESS`, a session this process opened), else on a local Ray started for the call
and shut down after it.

A task asks for one CPU, a large log for several (its blocks are parsed on that many threads).
Ray retries a task whose worker process died (`max_retries`); `ingest_run` clears the run before
writing it and writes its completion marker last, so a retry gives the run whole, once. A task
that raised is not retried: its log or its store failed, and the result says why. Ray is imported
here only, and only when this executor is asked for.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from logparse.errors import LogparseError
from logparse.fleet.local import not_run
from logparse.fleet.task import FAILED, RunResult, RunTask, ingest_run, store_down
from logparse.ingest.run import PARALLEL_MIN_BYTES

RETRIES = 3  # a task whose worker died is run again this many times
IN_FLIGHT_PER_CPU = 2  # runs submitted ahead of the cluster's CPUs
LARGE_LOG_CPUS = 4  # a log of PARALLEL_MIN_BYTES or more: its blocks on this many threads (at most a node's)
INSTALL_HINT = "pip install 'logparse[ray]'"


def import_ray() -> Any:
    """The `ray` module, or a `LogparseError` that says what to install."""
    try:
        import ray
    except ImportError:
        raise LogparseError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


@contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, connected: the session this process already has, else `address` (or `RAY_ADDRESS`),
    else a local Ray started now (on the loopback interface, no dashboard) and shut down at the end."""
    if "ray" not in sys.modules and not (address or os.environ.get("RAY_ADDRESS")):
        # A Ray started for one command serves this machine only: its servers listen on
        # 127.0.0.1, not on every interface (Ray reads this when it is imported).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    target = address or os.environ.get("RAY_ADDRESS")
    if target:
        _check_reachable(target)
    try:
        if target:
            ray.init(address=target, logging_level="warning", log_to_driver=False)
        else:
            # "local": a new instance, even when a cluster was started on this machine with `ray start`
            ray.init(
                address="local",
                num_cpus=num_cpus,
                include_dashboard=False,
                logging_level="warning",
                log_to_driver=False,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {target}" if target else "a local Ray"
        raise LogparseError(f"cannot start or reach {where}: {exc}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_reachable(address: str) -> None:
    """A `host:port` (or `ray://host:port`) nobody listens on is said at once: Ray itself retries
    for minutes before it gives up. Other forms (`auto`, ...) are left to Ray."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise LogparseError(
            f"cannot start or reach the Ray cluster at {address}: {exc.strerror or exc}"
        ) from None


def run_on_ray(
    tasks: Sequence[RunTask],
    *,
    address: str | None = None,
    concurrency: int | None = None,
    on_done: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Run `tasks` as Ray tasks, at most `concurrency` at a time (default: twice the cluster's
    CPUs, so that the cluster never waits and a stop is quick), calling `on_done` in this thread as
    each ends. Once the output store is down (`store_down`) the runs not yet started are left out
    and those queued are cancelled (``not run``)."""
    with ray_session(address) as ray:
        remote = ray.remote(ingest_run)
        largest = _largest_node_cpus(ray)
        if concurrency is None:
            concurrency = IN_FLIGHT_PER_CPU * max(1, int(ray.cluster_resources().get("CPU", 1)))
        waiting = list(tasks)
        running: dict[Any, RunTask] = {}
        results: list[RunResult] = []
        stop_reason: str | None = None

        def submit(task: RunTask) -> None:
            cpus = min(LARGE_LOG_CPUS, largest) if (task.size or 0) >= PARALLEL_MIN_BYTES else 1
            ref = remote.options(
                num_cpus=cpus, max_retries=RETRIES, retry_exceptions=False, name=f"logparse:{task.run}"
            ).remote(dataclasses.replace(task, workers=cpus))
            running[ref] = task

        while waiting or running:
            while waiting and stop_reason is None and len(running) < concurrency:
                submit(waiting.pop(0))
            if not running:
                break
            ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in ready:
                task = running.pop(ref)
                result = _result_of(ray, ref, task, stop_reason)
                if stop_reason is None:
                    stop_reason = store_down(task, result)
                    if stop_reason is not None:
                        for queued in running:  # cancelled: no marker written, a rerun writes the run
                            ray.cancel(queued)
                results.append(result)
                if on_done is not None:
                    on_done(result)
        for task in waiting:  # left out after a store failure
            result = not_run(task, stop_reason or "")
            results.append(result)
            if on_done is not None:
                on_done(result)
        return results


def _largest_node_cpus(ray: Any) -> int:
    try:
        return max(1, int(max(float(n["Resources"].get("CPU", 1)) for n in ray.nodes() if n.get("Alive"))))
    except (ValueError, KeyError, TypeError):
        return 1


def _result_of(ray: Any, ref: Any, task: RunTask, stopped: str | None) -> RunResult:
    """The task's result; a task cancelled after the store failed (`stopped` says why) is not
    run; a task Ray gave up on (its worker died every time, or it raised) is a failed run saying
    so."""
    try:
        result: RunResult = ray.get(ref)
        return result
    except ray.exceptions.TaskCancelledError:
        return not_run(task, stopped or "cancelled")
    except ray.exceptions.RayTaskError as exc:
        text = _first_line(exc)
        if "No module named 'logparse" in str(exc):
            text = f"logparse is not installed where Ray runs its tasks ({text}): install it there (or in the job's runtime_env)"
        return RunResult(task.run, task.log, FAILED, error=f"internal error: {text}", cause="other")
    except ray.exceptions.RayError as exc:
        return RunResult(
            task.run,
            task.log,
            FAILED,
            error=f"its Ray worker died {RETRIES + 1} times ({type(exc).__name__}: {_first_line(exc)})",
            cause="worker",
        )


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(exc).__name__


__all__ = ["INSTALL_HINT", "import_ray", "ray_session", "run_on_ray"]
