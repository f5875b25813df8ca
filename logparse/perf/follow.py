"""What following a busy log costs: `python -m logparse.perf.follow [--engine E] [--rate N] [--seconds S]`.

A writer appends `make bench`'s emulated log (`bench.write_log`: the seed runs repeated, dates moved
on, so every copy is a new engine start) to a file at `rate` lines/s while `logparse follow
--format jsonl --serve-metrics` reads it and `/metrics` is scraped every second. Printed: the
follower's CPU time per wall second once warmed up (from /proc, user + system, every thread), and
the latency of each status update: from the moment its stats line was written to the moment its
JSON object was read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logparse.perf.bench import write_log

WARM_UP_S = 3.0
BATCH_S = 0.01  # the writer appends a batch of lines this often


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure(engine: str, rate: float, seconds: float, *, one_start: bool = False) -> dict[str, Any]:
    """Follow a log written at `rate` lines/s for `seconds`; CPU share and status latencies.
    `one_start`: every copy of the seed runs after the first keeps only its stats lines, so the
    log is one engine start serving on (the copies are otherwise each a new start)."""
    with tempfile.TemporaryDirectory(prefix="logparse-follow-perf-") as tmp:
        source = Path(tmp) / "source.log"
        write_log(source, engine, int(rate * seconds * 160))
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        if one_start:
            lines = _one_start(lines)
        lines = lines[: int(rate * seconds)]
        live = Path(tmp) / "live.log"
        live.write_text("")
        port = _port()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "logparse",
                "follow",
                str(live),
                "--format",
                "jsonl",
                "--serve-metrics",
                str(port),
            ],
            stdout=subprocess.PIPE,
            stderr=(Path(tmp) / "follow.err").open("w"),
            text=True,
        )
        arrivals: list[tuple[float, dict[str, object]]] = []

        def read() -> None:
            assert proc.stdout is not None
            for text in proc.stdout:
                arrivals.append((time.monotonic(), json.loads(text)))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        written: dict[int, float] = {}
        time.sleep(1.0)  # the follower's start-up (imports) is not following
        start = time.monotonic()
        cpu_from: float | None = None
        next_scrape = start
        with live.open("a", encoding="utf-8") as out:
            n = 0
            while n < len(lines):
                now = time.monotonic()
                due = min(len(lines), int((now - start) * rate))
                if due > n:
                    out.write("".join(lines[n:due]))
                    out.flush()
                    stamp = time.monotonic()
                    for k in range(n + 1, due + 1):
                        written[k] = stamp
                    n = due
                if cpu_from is None and now - start >= WARM_UP_S:
                    cpu_from, wall_from = _cpu_s(proc.pid), now
                if now >= next_scrape:
                    with contextlib.suppress(OSError):
                        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
                    next_scrape = now + 1.0
                time.sleep(BATCH_S)
        time.sleep(2.0)
        cpu_to, wall_to = _cpu_s(proc.pid), time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        reader.join(timeout=10)
        err_text = (Path(tmp) / "follow.err").read_text()
        own = [line for line in err_text.splitlines() if "CPU-s" in line]
    assert cpu_from is not None
    latencies = [
        at - written[int(obj["line_no"])]  # type: ignore[call-overload]
        for at, obj in arrivals
        if obj.get("type") == "status" and obj.get("line_no") in written
    ]
    latencies.sort()
    return {
        "lines": float(len(lines)),
        "rate": rate,
        "cpu_share": (cpu_to - cpu_from) / (wall_to - wall_from),
        "statuses": float(len(latencies)),
        "latency_median_s": statistics.median(latencies) if latencies else float("nan"),
        "latency_p99_s": latencies[int(0.99 * (len(latencies) - 1))] if latencies else float("nan"),
        "latency_max_s": latencies[-1] if latencies else float("nan"),
        "own": own[-1] if own else "",
    }


STATS_MARKERS = ("Decode batch", "Prefill batch", "Avg prompt throughput", "SpecDecoding metrics")


def _one_start(lines: list[str]) -> list[str]:
    """The first engine start's lines, then only the stats lines of the later ones."""
    starts = [
        i
        for i, line in enumerate(lines)
        if "server_args=" in line or "non-default args" in line or "args: Namespace" in line
    ]
    if len(starts) < 2:
        return lines
    later = (line for line in lines[starts[1] :] if any(m in line for m in STATS_MARKERS))
    return [*lines[: starts[1]], *later]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the measurement and print it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--engine", choices=["vllm", "sglang"], default="sglang")
    parser.add_argument("--rate", type=float, default=10_000.0, help="lines per second")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--one-start",
        action="store_true",
        help="one engine start serving on (later copies' stats lines only)",
    )
    args = parser.parse_args(argv)
    found = measure(args.engine, args.rate, args.seconds, one_start=args.one_start)
    print(
        f"{args.engine}{' (one engine start)' if args.one_start else ' (a new engine start every copy)'}: "
        f"{found['lines']:,.0f} lines at {found['rate']:,.0f} lines/s: follow used "
        f"{found['cpu_share']:.1%} of a core (after {WARM_UP_S:g} s); {found['statuses']:,.0f} status updates, "
        f"latency from write to JSON line median {found['latency_median_s'] * 1000:,.0f} ms, "
        f"p99 {found['latency_p99_s'] * 1000:,.0f} ms, max {found['latency_max_s'] * 1000:,.0f} ms"
    )
    if found["own"]:
        print(f"  (the follower's own account, start-up and the post-mortem included: {found['own']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
