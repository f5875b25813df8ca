"""`make bench`'s fleet line (`python -m logparse.perf.bench --fleet`): many small logs ingested
into one dataset on a local Ray (`--executor ray`, the Ray started for the call and shut down
after it) and on this machine's threads (`--jobs 2`), each as its own process, and the ratio of
their wall times. The logs are the repository's fixture runs (emulated and real), copied until
there are `count` of them. CPU seconds are those of the processes the command waited for: a Ray
run's workers are not among them (its process-tree RSS does count them).

    python -m logparse.perf.fleet_bench [--logs 200] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from logparse.perf.bench import Measurement, measure

FIXTURE_LOGS = (
    "vllm/gpustack-64k.log",
    "vllm/emulated-0.10-multirank-docker.log",
    "vllm/emulated-0.6-spec-two-phases.log",
    "sglang/gpustack-200k.log",
    "sglang/emulated-0.5.14-tp1-color.log",
    "sglang/emulated-0.4-docker-retract.log",
    "real/vllm/stern-pod-uvicorn-access.log",
    "real/sglang/pr17985_loading_weights_took.log",
)
RAY_START = (
    "import os, time; os.environ.setdefault('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER', '0'); t = time.perf_counter(); "
    "import ray; ray.init(include_dashboard=False, logging_level='warning'); ray.shutdown(); "
    "print(f'{time.perf_counter() - t:.2f}')"
)


def small_logs(folder: Path, count: int) -> tuple[int, int]:
    """`count` small logs in `folder` (the fixture runs in turn); their bytes and lines."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    folder.mkdir(parents=True, exist_ok=True)
    nbytes = lines = 0
    for k in range(count):
        source = fixtures / FIXTURE_LOGS[k % len(FIXTURE_LOGS)]
        data = source.read_bytes()
        (folder / f"run{k:04d}-{source.name}").write_bytes(data)
        nbytes += len(data)
        lines += data.count(b"\n")
    return nbytes, lines


def fleet_step(
    work: Path, *, count: int = 200, python: str = sys.executable
) -> tuple[list[Measurement], str]:
    """Time the fleet ingest of `count` small logs on a local Ray and on `--jobs 2`; the
    measurements and the fleet line."""
    logs = work / "fleet-logs"
    nbytes, lines = small_logs(logs, count)
    logparse = [python, "-m", "logparse", "ingest", str(logs), "--format", "json"]
    threads = measure(
        f"logparse ingest {count} small logs --out DATASET --jobs 2",
        [*logparse, "--out", str(work / "fleet-threads"), "--jobs", "2"],
        nbytes=nbytes,
        lines=lines,
    )
    on_ray = measure(
        f"logparse ingest {count} small logs --out DATASET --executor ray (a local Ray, started for the call)",
        [*logparse, "--out", str(work / "fleet-ray"), "--executor", "ray"],
        nbytes=nbytes,
        lines=lines,
    )
    started = measure("starting and stopping a local Ray alone", [python, "-c", RAY_START], nbytes=0, lines=0)
    start_s = float(started.output.splitlines()[-1]) if started.returncode == 0 and started.output else None
    line = (
        f"fleet: {count} small logs ({nbytes / 1e6:,.1f} MB): Ray local {on_ray.wall_s:.1f} s vs --jobs 2 "
        f"{threads.wall_s:.1f} s wall, ratio {on_ray.wall_s / threads.wall_s:.2f}x"
        + (f" (of which starting and stopping Ray about {start_s:.1f} s)" if start_s is not None else "")
    )
    return [threads, on_ray, started], line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m logparse.perf.fleet_bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--logs", type=int, default=200, help="how many small logs (default 200)")
    parser.add_argument(
        "--json", action="store_true", help="the measurements and the line as JSON (for bench)"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="logparse-fleet-bench-"))
    try:
        t0 = time.perf_counter()
        results, line = fleet_step(work, count=args.logs)
        if args.json:
            print(json.dumps({"line": line, "results": [dataclasses.asdict(m) for m in results]}))
            return 0 if all(m.returncode == 0 for m in results) else 1
        for m in results:
            status = "" if m.returncode == 0 else f" ({'; '.join(m.notes)})"
            print(f"{m.label}: {m.wall_s:.2f} s, CPU {m.cpu_s:.1f} s, RSS {m.tree_rss_mb:,.0f} MB{status}")
        print(line)
        print(f"({time.perf_counter() - t0:.0f} s in all)", file=sys.stderr)
        return 0 if all(m.returncode == 0 for m in results) else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
