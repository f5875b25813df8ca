"""`make bench`: how fast `logparse ingest` is, next to `grep -cE` and a naive Python loop.

    python -m logparse.perf.bench [--size 500M] [--rss-size 1G,2G,5G] [--out reports/bench.md]

1. Generates a mixed-engine corpus of at least `--size` in a temporary folder (never kept): an
   SGLang log and a vLLM log rendered by the emulator (several eras, docker / compose wrappers,
   colour codes, access lines), each repeated with its dates moved on by a day per copy until the
   corpus is large enough.
2. Times, each as its own process, on the same files in one run: `logparse ingest` of the folder
   (all kinds typed, the Parquet dataset written, the logs side by side on threads), `logparse
   ingest` of each log alone (the single-log layout; parsing threads, and on one thread, with the
   core's seconds per stage: `LOGPARSE_PROFILE=1`), `cat`, `grep -cE` with one full Decode regex,
   `rg` when installed, and a naive per-line Python `re` loop extracting two line kinds (decode
   batches and access lines); and counts the Python function calls per extra line of ingest
   (100 k against 400 k lines, a profiler hook on every thread).
3. Prints MB/s, lines/s, CPU seconds and peak RSS (`/usr/bin/time -v`, and the sum over the
   process tree sampled from /proc, which would count any child process) and the
   ratios, and writes them to `--out`. `--rss-size 1G,2G,5G` adds runs on SGLang logs of those
   sizes (the first bytes of one log) for the memory claims: at most 300 MB, and flat as the input
   grows.

Numbers depend on the machine and on what else runs on it: the report says how many cores there
are and the load average before and after.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

DECODE_ERE = (
    r"\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}( [A-Z]+[0-9]+)*\] Decode batch[.,] "
    r"#running-req: [0-9]+, (#token: [0-9]+, token usage: [0-9.]+|#full token: [0-9]+, full token usage: "
    r"[0-9.]+(, mamba num: [0-9]+, mamba usage: [0-9.]+)?), (accept len: [0-9.]+, (accept rate: "
    r"[0-9.]+, )?)?((cuda|CUDA) graph: (True|False), )?gen throughput \(token/s\): [0-9.]+, "
    r"#queue-req: [0-9]+,? *$"
)
NAIVE_SCRIPT = r"""
import re, sys
DECODE = re.compile(r"Decode batch[.,] #running-req: (\d+), (?:#token: (\d+), token usage: ([\d.]+)|#full token: (\d+), full token usage: ([\d.]+)).*?gen throughput \(token/s\): ([\d.]+), #queue-req: (\d+)")
ACCESS = re.compile(r'INFO:\s+(\S+) - "([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3})')
decode, access = [], []
for path in sys.argv[1:]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = DECODE.search(line)
            if m:
                decode.append(m.groups())
                continue
            m = ACCESS.search(line)
            if m:
                access.append(m.groups())
print(len(decode), len(access))
"""
SIZE_RE = re.compile(r"^([0-9.]+)\s*([KMGT]?)B?$", re.I)


def parse_size(text: str) -> int:
    """`500M`, `2G`, `123456` -> bytes (powers of 1000, as MB/s are)."""
    m = SIZE_RE.match(text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    return int(float(m[1]) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}[m[2].upper()])


def parse_sizes(text: str) -> list[int]:
    """`1G,2G,5G` -> bytes, ascending."""
    return sorted(parse_size(part) for part in text.split(",") if part.strip())


# -- the corpus ---------------------------------------------------------------------------------
def _seed_runs(engine: str) -> list[object]:
    from logparse.emulate import LogStyle, PhaseParams, RunParams

    if engine == "sglang":
        return [
            RunParams(
                engine="sglang",
                era="0.5.14",
                seed=11,
                decode_log_interval=1,
                phases=tuple(
                    PhaseParams(concurrency=32, input_len=4096, output_len=3000, gap_s=5, decode_tps=40.0)
                    for _ in range(6)
                ),
                style=LogStyle(wrapper="docker", health_poll_s=2.0, metrics_poll_s=1.0),
            ),
            RunParams(
                engine="sglang",
                era="0.4",
                seed=12,
                decode_log_interval=1,
                phases=tuple(
                    PhaseParams(concurrency=16, input_len=2048, output_len=3000, gap_s=5, decode_tps=40.0)
                    for _ in range(6)
                ),
                style=LogStyle(wrapper="compose", metrics_poll_s=1.0),
            ),
            RunParams(
                engine="sglang",
                era="0.5.6",
                seed=13,
                decode_log_interval=1,
                phases=tuple(
                    PhaseParams(concurrency=24, input_len=8192, output_len=2000, gap_s=5, decode_tps=40.0)
                    for _ in range(6)
                ),
                style=LogStyle(health_poll_s=1.0),
            ),
        ]
    return [
        RunParams(
            engine="vllm",
            era="0.26",
            seed=21,
            stats_interval_s=0.5,
            spec_tokens=3,
            phases=tuple(
                PhaseParams(
                    concurrency=64,
                    input_len=1024,
                    output_len=300,
                    gap_s=2,
                    decode_tps=40.0,
                    spec_accept_len=2.0,
                )
                for _ in range(120)
            ),
            style=LogStyle(health_poll_s=0.25, metrics_poll_s=0.5),
        ),
        RunParams(
            engine="vllm",
            era="0.10",
            seed=22,
            stats_interval_s=0.5,
            phases=tuple(
                PhaseParams(concurrency=64, input_len=1024, output_len=300, gap_s=2, decode_tps=40.0)
                for _ in range(120)
            ),
            style=LogStyle(wrapper="docker", color=True, health_poll_s=0.25, metrics_poll_s=0.5),
        ),
        RunParams(
            engine="vllm",
            era="0.11",
            seed=23,
            stats_interval_s=0.5,
            phases=tuple(
                PhaseParams(concurrency=48, input_len=2048, output_len=400, gap_s=2, decode_tps=40.0)
                for _ in range(120)
            ),
            style=LogStyle(wrapper="compose", health_poll_s=0.25, metrics_poll_s=0.5),
        ),
    ]


_DATES = re.compile(
    r"(?<![0-9-])([0-9]{4}-[0-9]{2}-[0-9]{2})(?=[T ][0-9]{2}:)|(?<![0-9-])([0-9]{2}-[0-9]{2})(?= [0-9]{2}:[0-9]{2}:[0-9]{2})"
)


def _seed_text(engine: str) -> str:
    from logparse.emulate import emulate

    return "".join(emulate(params).text for params in _seed_runs(engine))  # type: ignore[arg-type]


def write_log(path: Path, engine: str, size: int) -> tuple[int, int]:
    """An emulated `engine` log of at least `size` bytes at `path`: (bytes, lines).

    The seed runs are repeated; copy k has every date moved on by k days (a month-day stamp keeps
    its form), so the log covers weeks of uptime and its timestamps keep moving forward.
    """
    seed = _seed_text(engine)
    pieces = _DATES.split(seed)  # text, full date or None, month-day or None, text, ...
    texts = pieces[0::3]
    full = pieces[1::3]
    short = pieces[2::3]
    written = lines = 0
    per_copy = seed.count("\n")
    copy = 0
    with path.open("w", encoding="utf-8", newline="") as out:
        while written < size:
            cache: dict[str, str] = {}
            shift = dt.timedelta(days=copy)

            def moved(
                date: str | None, md: str | None, cache: dict[str, str] = cache, shift: dt.timedelta = shift
            ) -> str:
                key = date or md or ""
                found = cache.get(key)
                if found is None:
                    if date:
                        found = (dt.date.fromisoformat(date) + shift).isoformat()
                    else:
                        month, day = (int(x) for x in key.split("-"))
                        when = dt.date(2025 if (month, day) != (2, 29) else 2024, month, day) + shift
                        found = f"{when.month:02d}-{when.day:02d}"
                    cache[key] = found
                return found

            parts = [texts[0]]
            for i, text in enumerate(texts[1:]):
                parts.append(moved(full[i], short[i]))
                parts.append(text)
            chunk = "".join(parts)
            out.write(chunk)
            written += len(chunk.encode("utf-8")) if not chunk.isascii() else len(chunk)
            lines += per_copy
            copy += 1
    return written, lines


# -- measuring a process ------------------------------------------------------------------------
@dataclass
class Measurement:
    """One timed command."""

    label: str
    command: list[str]
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float | None = None  # /usr/bin/time -v: the largest single process
    tree_rss_mb: float = 0.0  # sum over the process tree, sampled
    bytes: int = 0
    lines: int = 0
    output: str = ""
    returncode: int = 0
    profile: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def mb_s(self) -> float:
        return self.bytes / 1e6 / self.wall_s if self.wall_s else 0.0

    @property
    def lines_s(self) -> float:
        return self.lines / self.wall_s if self.wall_s else 0.0


def _tree_rss_kb(pid: int) -> int:
    """Resident KiB of `pid` and all its descendants."""
    total = 0
    stack = [pid]
    seen: set[int] = set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


def measure(
    label: str,
    command: list[str],
    *,
    nbytes: int,
    lines: int,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Measurement:
    """Run `command`, timing it and sampling its memory."""
    m = Measurement(label=label, command=command, bytes=nbytes, lines=lines)
    time_v = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    argv = ([time_v, "-v"] if time_v else []) + command
    full_env = {**os.environ, "LOGPARSE_NO_PROGRESS": "1", **(env or {})}
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, cwd=cwd)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    m.wall_s = time.perf_counter() - start
    stop.set()
    sampler.join()
    after = os.times()
    m.cpu_s = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    m.returncode = proc.returncode
    m.tree_rss_mb = peak / 1024
    text = err.decode("utf-8", "replace")
    if "logparse profile" in text:
        table = text[text.index("logparse profile") :]
        m.profile = "\n".join(
            line for line in table.splitlines() if line.startswith(("logparse profile", "  "))
        )
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if found:
        m.max_rss_mb = int(found[1]) / 1024
    else:  # no /usr/bin/time: the largest child the kernel saw
        import resource

        m.max_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    m.output = out.decode("utf-8", "replace").strip()[-400:]
    if proc.returncode != 0:
        m.notes.append(f"exit status {proc.returncode}: {text.strip()[-600:]}")
    return m


# -- the report ---------------------------------------------------------------------------------
def _load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _row(m: Measurement) -> str:
    rss = f"{m.max_rss_mb:,.0f}" if m.max_rss_mb is not None else "-"
    return (
        f"| {m.label} | {m.bytes / 1e6:,.0f} | {m.wall_s:,.2f} | {m.cpu_s:,.2f} | {m.mb_s:,.0f} | "
        f"{m.lines_s / 1e6:,.2f} M | {rss} | {m.tree_rss_mb:,.0f} |"
    )


def render(results: Sequence[Measurement], info: dict[str, str], ratios: list[str], notes: list[str]) -> str:
    lines = ["# logparse ingest benchmark (`make bench`)", ""]
    lines += [f"- {k}: {v}" for k, v in info.items()]
    lines += [
        "",
        "| run | MB | wall s | CPU s | MB/s | lines/s | max RSS MB (time -v) | peak RSS MB (process tree) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_row(m) for m in results]
    lines += ["", "## Ratios", ""] + [f"- {r}" for r in ratios]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    for m in results:
        for n in m.notes:
            lines.append(f"- {m.label}: {n}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m logparse.perf.bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--size", type=parse_size, default=parse_size("500M"), help="corpus size (default 500M)"
    )
    parser.add_argument(
        "--rss-size",
        type=parse_sizes,
        default=[],
        help="also ingest SGLang logs of these sizes (e.g. 1G,2G,5G) for the memory claims",
    )
    parser.add_argument("--out", type=Path, default=Path("reports/bench.md"), help="markdown report")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate (default: a temp dir)")
    parser.add_argument(
        "--fleet",
        action="store_true",
        help="also time 200 small logs on a local Ray against --jobs 2 (logparse.perf.fleet_bench; needs the "
        "ray extra)",
    )
    args = parser.parse_args(argv)

    python = sys.executable
    work = Path(tempfile.mkdtemp(prefix="logparse-bench-", dir=args.workdir))
    try:
        load_before = _load()
        corpus = work / "corpus"
        corpus.mkdir()
        t0 = time.perf_counter()
        sizes = {}
        for engine, share in (("sglang", 0.6), ("vllm", 0.4)):
            path = corpus / f"{engine}.log"
            sizes[engine] = (path, *write_log(path, engine, int(args.size * share) + 1))
        gen_s = time.perf_counter() - t0
        total = sum(s[1] for s in sizes.values())
        total_lines = sum(s[2] for s in sizes.values())
        paths = [str(sizes[e][0]) for e in ("sglang", "vllm")]
        print(
            f"corpus: {total / 1e6:,.0f} MB, {total_lines:,} lines in {gen_s:.1f} s ({work})", file=sys.stderr
        )
        results: list[Measurement] = []

        def run(
            label: str, command: list[str], nbytes: int, lines: int, env: dict[str, str] | None = None
        ) -> Measurement:
            print(f"... {label}", file=sys.stderr, flush=True)
            m = measure(label, command, nbytes=nbytes, lines=lines, env=env)
            results.append(m)
            print(
                f"    {m.wall_s:.2f} s, {m.mb_s:,.0f} MB/s, CPU {m.cpu_s:.1f} s, RSS {m.tree_rss_mb:,.0f} MB",
                file=sys.stderr,
            )
            return m

        logparse = [python, "-m", "logparse"]
        main_run = run(
            "logparse ingest corpus/ --out DATASET (2 logs, all kinds, Parquet; a large log on all cores)",
            [*logparse, "ingest", str(corpus), "--out", str(work / "dataset"), "--format", "json"],
            total,
            total_lines,
        )
        sg_path, sg_bytes, sg_lines = sizes["sglang"]
        vl_path, vl_bytes, vl_lines = sizes["vllm"]
        sg_one = run(
            "logparse ingest sglang.log --out DIR (LOGPARSE_WORKERS=1: one thread, profiled)",
            [*logparse, "ingest", str(sg_path), "--out", str(work / "out-sg1"), "--format", "json"],
            sg_bytes,
            sg_lines,
            env={"LOGPARSE_PROFILE": "1", "LOGPARSE_WORKERS": "1"},
        )
        run(
            "logparse ingest sglang.log --out DIR (default: a parsing thread per core)",
            [*logparse, "ingest", str(sg_path), "--out", str(work / "out-sg"), "--format", "json"],
            sg_bytes,
            sg_lines,
        )
        vl_one = run(
            "logparse ingest vllm.log --out DIR (LOGPARSE_WORKERS=1: one thread, profiled)",
            [*logparse, "ingest", str(vl_path), "--out", str(work / "out-vl"), "--format", "json"],
            vl_bytes,
            vl_lines,
            env={"LOGPARSE_PROFILE": "1", "LOGPARSE_WORKERS": "1"},
        )
        grep = run(
            "grep -cE <full Decode regex> (both logs, LC_ALL=C)",
            ["grep", "-cE", DECODE_ERE, *paths],
            total,
            total_lines,
            env={"LC_ALL": "C"},
        )
        naive = run(
            "naive Python re loop, 2 kinds (both logs)",
            [python, "-c", NAIVE_SCRIPT, *paths],
            total,
            total_lines,
        )
        run(
            "cat (both logs > /dev/null)",
            ["sh", "-c", 'cat "$@" > /dev/null', "cat", *paths],
            total,
            total_lines,
        )
        rg = shutil.which("rg")
        if rg:
            run("rg -c <full Decode regex> (both logs)", [rg, "-c", DECODE_ERE, *paths], total, total_lines)
        calls = python_calls_per_line(work, sg_path, python)
        bigs: list[Measurement] = []
        if args.rss_size:
            for old in (sizes["sglang"][0], sizes["vllm"][0]):
                old.unlink()
            shutil.rmtree(work / "dataset", ignore_errors=True)
            largest = work / "big-sglang.log"
            write_log(largest, "sglang", args.rss_size[-1])
            for size in args.rss_size:
                piece = largest if size == args.rss_size[-1] else _head(largest, work / "piece.log", size)
                nbytes, nlines = piece.stat().st_size, _count_lines(piece)
                bigs.append(
                    run(
                        f"logparse ingest {nbytes / 1e9:.1f} GB sglang log --out DIR",
                        [
                            *logparse,
                            "ingest",
                            str(piece),
                            "--out",
                            str(work / "out-big"),
                            "--format",
                            "json",
                            "--force",
                        ],
                        nbytes,
                        nlines,
                    )
                )
                shutil.rmtree(work / "out-big", ignore_errors=True)
                if piece != largest:
                    piece.unlink()
        ratio = main_run.wall_s / grep.wall_s
        ratios = [
            f"logparse ingest / grep -cE wall time: {ratio:.1f}x (target <= 1.5x: "
            f"{'met' if ratio <= 1.5 else 'NOT met'})",
            f"naive loop / logparse ingest wall time: {naive.wall_s / main_run.wall_s:.1f}x faster "
            f"(target >= 5x: {'met' if naive.wall_s >= 5 * main_run.wall_s else 'NOT met'})",
            f"peak RSS (process tree) {main_run.tree_rss_mb:,.0f} MB for {total / 1e6:,.0f} MB"
            + "".join(f", {m.tree_rss_mb:,.0f} MB for {m.bytes / 1e9:.1f} GB" for m in bigs)
            + " (target <= 300 MB)",
            f"Python function calls per extra line while ingesting: {calls:.4f} "
            f"(target <= 0.02: {'met' if calls <= 0.02 else 'NOT met'}; 100 k against 400 k lines of sglang.log)",
        ]
        if args.fleet:  # its own process (logparse.perf.fleet_bench), which reports as JSON
            print("... fleet: 200 small logs, Ray local and --jobs 2", file=sys.stderr, flush=True)
            fleet = subprocess.run(
                [python, "-m", "logparse.perf.fleet_bench", "--json"],
                capture_output=True,
                text=True,
                check=False,
            )
            if fleet.returncode != 0:
                raise SystemExit(f"the fleet step failed: {fleet.stderr.strip()[-800:]}")
            report_fleet = json.loads(fleet.stdout)
            results.extend(Measurement(**m) for m in report_fleet["results"])
            ratios.append(report_fleet["line"])
        if len(bigs) > 1:
            ratios.append(
                f"peak RSS {bigs[-1].bytes / 1e9:.1f} GB / {bigs[0].bytes / 1e9:.1f} GB log: "
                f"{bigs[-1].tree_rss_mb / bigs[0].tree_rss_mb:.2f}x (flat: about 1)"
            )
        info = {
            "date": dt.datetime.now().isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores ({_cpu_model()}), Python {platform.python_version()}",
            "load average before / after (1, 5, 15 min)": f"{load_before} / {_load()}",
            "corpus": f"{total / 1e6:,.0f} MB, {total_lines:,} lines: SGLang {sg_bytes / 1e6:,.0f} MB "
            f"(eras 0.4, 0.5.6, 0.5.14; docker and compose wrappers), vLLM {vl_bytes / 1e6:,.0f} MB "
            f"(eras 0.10, 0.11, 0.26; docker, compose, colour codes), generated in {gen_s:.0f} s",
            "command": "python -m logparse.perf.bench "
            + " ".join(argv if argv is not None else sys.argv[1:]),
        }
        notes = [
            "wall time includes starting Python and the imports (pyarrow, polars for the headline).",
            "CPU s is user + system time of the process and its children: on 2 cores a wall time below CPU s "
            "means both cores worked.",
            "max RSS (time -v) is the largest single process; peak RSS (process tree) is the sum over the "
            "process and its children, sampled every 50 ms (logparse runs in one process: its parsing and "
            "Parquet threads are the compiled core's).",
            "the memory runs take the first 1, 2... GB of one generated SGLang log, so they differ only in length.",
        ]
        report = render(results, info, ratios, notes)
        report += "\n## Where the time goes (one parsing thread, seconds by stage of the core, `LOGPARSE_PROFILE=1`)\n"
        for label, m in (("SGLang log", sg_one), ("vLLM log", vl_one)):
            report += f"\n{label} ({m.bytes / 1e6:,.0f} MB):\n\n```\n{m.profile.strip()}\n```\n"
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
        print(report)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


CALLS_SCRIPT = r"""
import runpy, sys, threading
calls = [0]
def count(frame, event, arg):
    if event == "call":
        calls[0] += 1
sys.argv = ["logparse", *sys.argv[1:]]
threading.setprofile(count)
sys.setprofile(count)
try:
    runpy.run_module("logparse", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    sys.setprofile(None)
    threading.setprofile(None)
    print(calls[0], file=sys.stderr)
"""


def python_calls_per_line(work: Path, log: Path, python: str) -> float:
    """Python function calls (every thread, a profiler hook) per extra line: `ingest` of the first
    100 k and the first 400 k lines of `log`, the difference over the 300 k lines between."""
    counts = []
    for lines in (100_000, 400_000):
        piece = work / f"calls-{lines}.log"
        with log.open("rb") as src, piece.open("wb") as dst:
            for _ in range(lines):
                dst.write(src.readline())
        proc = subprocess.run(
            [python, "-c", CALLS_SCRIPT, "ingest", str(piece), "--out", str(work / f"calls-{lines}")],
            capture_output=True,
            text=True,
            env={**os.environ, "LOGPARSE_NO_PROGRESS": "1"},
            check=True,
        )
        counts.append(int(proc.stderr.strip().splitlines()[-1]))
        piece.unlink()
    return (counts[1] - counts[0]) / 300_000


def _head(src: Path, dst: Path, size: int) -> Path:
    """The first `size` bytes of `src`, cut after a newline, written to `dst`."""
    with src.open("rb") as fin, dst.open("wb") as fout:
        left = size
        while left > 0:
            chunk = fin.read(min(left, 16 << 20))
            if not chunk:
                break
            left -= len(chunk)
            if left <= 0:
                chunk = chunk[: chunk.rfind(b"\n") + 1]
            fout.write(chunk)
    return dst


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(16 << 20), b""))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
