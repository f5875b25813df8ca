"""Turn timed records into physical log lines: engine prefixes, foreign formats, wrappers.

A `Record` is one logging call (or one foreign write) at a time `t` (seconds after the run's
start). `render()` sorts them, formats each with its process prefix, applies the capture
wrapper (docker `--timestamps`, compose) and remembers which line each record landed on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

ANSI_RESET = "\x1b[0m"
LEVEL_COLOURS = {"DEBUG": "\x1b[37m", "INFO": "\x1b[32m", "WARNING": "\x1b[33m", "ERROR": "\x1b[31m"}
TQDM_CHARS = " ▏▎▍▌▋▊▉█"


@dataclass
class Record:
    """One logging call. `style` is `engine` (the engine's own logger), `raw` (any other writer)."""

    t: float
    body: str
    source: str = "main"
    level: str = "INFO"
    site: str = ""
    style: str = "engine"
    tag: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    line: int = 0  # first physical line, set by render()
    ts: str = ""  # the engine timestamp as printed, set by render()


Formatter = Callable[[Record, datetime], list[str]]


def at(start: datetime, t: float) -> datetime:
    """The wall-clock time `t` seconds after `start`."""
    return start + timedelta(seconds=t)


def vllm_ts(when: datetime) -> str:
    """vLLM `_DATE_FORMAT = "%m-%d %H:%M:%S"`: no year, no milliseconds (§1.1)."""
    return when.strftime("%m-%d %H:%M:%S")


def sglang_ts(when: datetime) -> str:
    """SGLang `datefmt="%Y-%m-%d %H:%M:%S"` (§1.1, 0.3.4+)."""
    return when.strftime("%Y-%m-%d %H:%M:%S")


def flashinfer_line(when: datetime, level: str, site: str, message: str) -> str:
    """FlashInfer's own logger line (`%(asctime)s - %(levelname)s - %(filename)s:%(lineno)d -
    flashinfer.jit: %(message)s`, milliseconds after a comma)."""
    stamp = when.strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % (when.microsecond // 1000)
    return f"{stamp} - {level} - {site} - flashinfer.jit: {message}"


def uvicorn_access(client: str, method: str, path: str, status: str, color: bool) -> str:
    """uvicorn's access line: level prefix padded to 9, request line, `code phrase` (§11.1)."""
    request = f"{method} {path} HTTP/1.1"
    if color:
        return f'\x1b[32mINFO\x1b[0m:     {client} - "\x1b[1m{request}\x1b[0m" \x1b[32m{status}\x1b[0m'
    return f'INFO:     {client} - "{request}" {status}'


def uvicorn_info(message: str, color: bool) -> str:
    """uvicorn's default logger line (`INFO:` + 5 spaces)."""
    return f"\x1b[32mINFO\x1b[0m:     {message}" if color else f"INFO:     {message}"


def tqdm_segment(
    desc: str, n: int, total: int, elapsed: float, default_format: bool, unit: str = "it"
) -> str:
    """One tqdm bar refresh: vLLM's `Completed |` shard format or tqdm's default `|bar|` format."""
    frac = n / total if total else 1.0
    rate = n / elapsed if elapsed > 0 and n else 0.0
    if not n:
        rate_fmt, remaining = f"?{unit}/s", "?"
    else:
        rate_fmt = f"{rate:5.2f}{unit}/s" if rate >= 1 else f"{1 / rate:5.2f}s/{unit}"
        remaining = _interval((total - n) / rate)
    times = f"[{_interval(elapsed)}<{remaining}, {rate_fmt}]"
    if not default_format:
        return f"{desc}: {frac * 100:3.0f}% Completed | {n}/{total} {times}"
    full, part = divmod(int(frac * 10 * 8), 8)
    bar = TQDM_CHARS[-1] * full
    if full < 10:
        bar += TQDM_CHARS[part] + " " * (10 - full - 1)
    return f"{desc}: {frac * 100:3.0f}%|{bar}| {n}/{total} {times}"


def _interval(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


@dataclass(frozen=True)
class Wrapper:
    """A capture wrapper applied to every physical line (docker `-t`, compose service column)."""

    kind: str
    service: str = "engine-1"

    def apply(self, line: str, stamp_ns: int) -> str:
        """Prefix `line` as the wrapper would; `stamp_ns` is docker's read time in epoch ns."""
        if self.kind == "docker":
            secs, nanos = divmod(stamp_ns, 1_000_000_000)
            stamp = datetime(1970, 1, 1) + timedelta(seconds=secs)
            return f"{stamp:%Y-%m-%dT%H:%M:%S}.{nanos:09d}Z {line}"
        if self.kind == "compose":
            return f"{self.service}  | {line}"
        return line


def render(records: list[Record], start: datetime, fmt: Formatter, wrapper: Wrapper) -> list[str]:
    """Sort `records` by time, format them and number their lines (sets `Record.line`)."""
    ordered = sorted(records, key=lambda r: (r.t, r.seq))
    lines: list[str] = []
    epoch = datetime(1970, 1, 1)
    last_ns = 0
    for record in ordered:
        when = at(start, record.t)
        record.line = len(lines) + 1
        # docker stamps when its log driver reads the line: a little after the write, never backwards
        write_ns = (when - epoch) // timedelta(microseconds=1) * 1000 + 137_000
        for physical in fmt(record, when):
            last_ns = max(last_ns + 1_000, write_ns)
            lines.append(wrapper.apply(physical, last_ns))
    return lines
