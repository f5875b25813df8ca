"""Where an ingest spends its CPU time, by stage (`LOGPARSE_PROFILE=1`; used by `make bench`).

Off by default: `stage()` then costs one attribute lookup. On, it adds the process CPU time of each
stage to `TIMES` and `report()` prints the table on stderr at the end of the run.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

ENABLED = bool(os.environ.get("LOGPARSE_PROFILE"))
TIMES: Counter[str] = Counter()


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the CPU time spent inside the block under `name` (when profiling is on)."""
    if not ENABLED:
        yield
        return
    start = time.process_time()
    try:
        yield
    finally:
        TIMES[name] += time.process_time() - start


def report(total_bytes: int | None = None) -> None:
    """Print the stages, largest first, on stderr."""
    if not ENABLED or not TIMES:
        return
    total = sum(TIMES.values())
    print("logparse profile (CPU s by stage):", file=sys.stderr)
    for name, seconds in TIMES.most_common():
        rate = f"  {total_bytes / 1e6 / seconds:8,.0f} MB/s" if total_bytes and seconds else ""
        print(f"  {name:<34} {seconds:8.2f} s {seconds / total:6.1%}{rate}", file=sys.stderr)
    print(f"  {'total':<34} {total:8.2f} s", file=sys.stderr)


__all__ = ["ENABLED", "TIMES", "report", "stage"]
