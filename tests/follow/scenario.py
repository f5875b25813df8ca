"""The followed test runs: an emulated vLLM run with a recovered OOM, a preemption burst, a stall
and an engine restart, and a writer thread that appends a log to a file at accelerated speed."""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from logparse.emulate.core import emulate
from logparse.emulate.params import PhaseParams, RunParams, StartupParams

STALL_LINES = 4  # stats lines cut from the middle of phase 1: the engine printed nothing for 50 s


def scenario_lines() -> list[str]:
    """Two starts of vLLM 0.11.2 one after the other (a restarted container's log): the first runs
    two phases, the first of which retries out-of-memory (recovered), preempts three requests
    within 3 s and stalls (four stats lines cut from its middle: the emulator's engine never
    hangs, so the hang is made by removing what a hung engine would not have printed); the second
    runs one phase."""
    small = StartupParams(pre_load_s=9.0, weight_load_s=6.5, shards=4, init_s=30.0, cuda_graph_s=9.0)
    first = RunParams(
        engine="vllm", era="0.11.2", seed=11, startup=small,
        phases=(
            PhaseParams(concurrency=8, input_len=2048, output_len=6000, decode_tps=30.0, gap_s=12.0,
                        oom_retries=3, preemptions=(60.0, 61.0, 62.0)),
            PhaseParams(concurrency=4, input_len=2048, output_len=3000, decode_tps=30.0, gap_s=40.0),
        ),
    )
    second = replace(first, seed=12, start="2026-07-28T19:00:00", phases=first.phases[1:])
    lines = _with_stall(emulate(first).lines)
    return [*lines, *emulate(second).lines]


def _with_stall(lines: Sequence[str]) -> list[str]:
    stats = [i for i, line in enumerate(lines) if "Avg generation throughput" in line and "Running: 8 reqs" in line]
    middle = stats[len(stats) // 2: len(stats) // 2 + STALL_LINES]
    return [line for i, line in enumerate(lines) if i not in set(middle)]


class Writer(threading.Thread):
    """Appends `lines` to `path` at `rate` lines/s, pausing `pause_s` after each line number in
    `pauses` (for the follower to catch up); `done` is set when every line is written."""

    def __init__(self, path: Path, lines: Sequence[str], *, rate: float = 2000.0,
                 pauses: Sequence[int] = (), pause_s: float = 0.0, partial_at: int | None = None) -> None:
        super().__init__(daemon=True)
        self.path, self.lines, self.rate = path, list(lines), rate
        self.pauses, self.pause_s, self.partial_at = set(pauses), pause_s, partial_at
        self.done = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        with self.path.open("a", encoding="utf-8") as out:
            for n, line in enumerate(self.lines, 1):
                if n == self.partial_at:  # half a line, its newline a moment later
                    half = len(line) // 2
                    out.write(line[:half])
                    out.flush()
                    time.sleep(0.5)
                    out.write(line[half:] + "\n")
                else:
                    out.write(line + "\n")
                out.flush()
                if n in self.pauses:
                    time.sleep(self.pause_s)
                    start += self.pause_s
                delay = start + n / self.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        self.done.set()


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
