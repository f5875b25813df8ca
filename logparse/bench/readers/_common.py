"""Helpers shared by the benchmark readers: reading text, numbers, statistic names, path hints."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from logparse.errors import InputError

HEAD_CHARS = 65536  # what header-line sniffers (CSV) look at; JSON and printed blocks are read whole

# metric name in a tool's key or label -> (schema column prefix, factor to the schema unit)
_METRICS: dict[str, tuple[str, float]] = {
    "ttft": ("ttft_ms", 1.0),
    "tpot": ("tpot_ms", 1.0),
    "itl": ("itl_ms", 1.0),
    "e2el": ("latency_s", 0.001),
    "e2e_latency": ("latency_s", 0.001),
    "e2e latency": ("latency_s", 0.001),
}
_STATS = {"mean": "mean", "median": "median", "p50": "median", "p90": "p90", "p95": "p95", "p99": "p99"}

_JSON_STAT_KEY = re.compile(r"^(mean|median|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|e2e_latency)_ms$")
_CONCURRENCY_HINT = re.compile(r"(?i)(?:^|[^a-z0-9])(?:concurrency|conc|c)[_\-=]?(\d+)(?![0-9])")
_LENGTHS_HINT = re.compile(r"(?:^|[^0-9])(\d+)x(\d+)(?![0-9])")
_QUOTED_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_:]*)"\s*:')


STDIN = "-"
STDIN_NAME = Path("standard input")  # how a result piped in is named in messages and tables


def read_text(path: Path) -> str:
    """Read a result file (`-`: standard input) as text, raising InputError for anything that is
    not a readable text file."""
    if str(path) == STDIN:
        return _decode(STDIN_NAME, sys.stdin.buffer.read())
    if not path.exists():
        msg = f"{path}: no such file"
        raise InputError(msg)
    if path.is_dir():
        msg = f"{path}: is a directory; expected a benchmark result file"
        raise InputError(msg)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        msg = f"{path}: cannot be read ({exc.strerror})"
        raise InputError(msg) from None
    if raw[:2] == GZIP_MAGIC:
        raw = _gunzip(path, raw)
    return _decode(path, raw)


GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(path: Path, raw: bytes) -> bytes:
    """A gzip file's content (a result file saved as `.gz`); InputError when it is damaged."""
    import gzip
    import zlib

    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        msg = f"{path}: is a damaged gzip file ({exc}); expected a gzip-compressed benchmark result"
        raise InputError(msg) from None


def _decode(path: Path, raw: bytes) -> str:
    if b"\x00" in raw[:HEAD_CHARS]:
        msg = f"{path}: is a binary file; expected a text benchmark result (JSON, JSONL, CSV or text)"
        raise InputError(msg)
    return raw.decode("utf-8", errors="replace").lstrip("\ufeff")


@dataclass(frozen=True)
class Sample:
    """What a format sniffer looks at: the whole text of a file, its head, and the top-level keys
    of its first JSON object (parsed from the whole file: a `--save-detailed` result holds
    megabytes of per-request arrays before its summary keys)."""

    text: str

    @property
    def head(self) -> str:
        """The first `HEAD_CHARS` characters, for formats recognised by their first line."""
        return self.text[:HEAD_CHARS]

    @cached_property
    def json_keys(self) -> frozenset[str] | None:
        """Keys of the first object of a JSON object, JSON list or JSON Lines text; None if the
        text does not open as JSON. A text that opens as JSON but does not parse gives every
        quoted key it holds, so that its reader is chosen and says where the JSON breaks."""
        stripped = self.text.strip()
        if not stripped.startswith(("{", "[")):
            return None
        try:
            whole = json.loads(stripped)
        except json.JSONDecodeError as exc:
            try:
                whole = json.loads(stripped.splitlines()[0]) if exc.msg == "Extra data" else None
            except json.JSONDecodeError:
                whole = None
            if whole is None:
                return frozenset(_QUOTED_KEY.findall(stripped))
        first = whole[0] if isinstance(whole, list) and whole else whole
        return frozenset(first) if isinstance(first, dict) else None


def stat_column(metric: str, stat: str) -> tuple[str, float] | None:
    """Map a tool's (metric, statistic) pair to (schema column, unit factor), or None if unkept."""
    target = _METRICS.get(metric.lower())
    stat_name = _STATS.get(stat.lower())
    if target is None or stat_name is None:
        return None
    prefix, factor = target
    return f"{prefix}_{stat_name}", factor


def json_stat_column(key: str) -> tuple[str, float] | None:
    """Map a vLLM/SGLang result key such as `p90_e2e_latency_ms` to (schema column, unit factor)."""
    match = _JSON_STAT_KEY.match(key)
    return stat_column(match.group(2), match.group(1)) if match else None


def scaled_stats(
    values: dict[str, Any],
    column_of: Callable[[str], tuple[str, float] | None],
    *,
    path: Path,
    where: Callable[[str], str],
) -> dict[str, float | None]:
    """The statistics among a run's `values`, as schema columns in schema units.

    `column_of` maps a tool's key to (schema column, unit factor), or None for a key that is no
    kept statistic; `where` names a key in the InputError a bad value raises.
    """
    out: dict[str, float | None] = {}
    for key, raw in values.items():
        target = column_of(key)
        if target is None:
            continue
        column, factor = target
        number = to_number(raw, path=path, where=where(key))
        out[column] = None if number is None else number * factor
    return out


def to_number(value: Any, *, path: Path, where: str) -> float | None:
    """Coerce a JSON/CSV value to float; None, '', 'N/A' and 'inf' become None; junk is an error."""
    if value is None or isinstance(value, bool):
        if isinstance(value, bool):
            msg = f"{path}: {where} is {value!r}; expected a number"
            raise InputError(msg)
        return None
    if isinstance(value, int | float):
        number = float(value)
    else:
        text = str(value).strip().replace(",", "")
        if text.lower() in {"", "n/a", "na", "none", "null", "inf", "not set", "nan"}:
            return None
        try:
            number = float(text)
        except ValueError:
            msg = f"{path}: {where} is {value!r}; expected a number"
            raise InputError(msg) from None
    return number if math.isfinite(number) else None


def to_int(value: Any, *, path: Path, where: str) -> int | None:
    """Like `to_number`, rounded to int (tools print integer counts as '23.00')."""
    number = to_number(value, path=path, where=where)
    return None if number is None else round(number)


def per_request(total: float | None, requests: int | None) -> float | None:
    """A run's total spread over its completed requests; None if either is unknown or zero requests."""
    return total / requests if total is not None and requests else None


def require(record: dict[str, Any], keys: tuple[str, ...], *, path: Path, what: str) -> None:
    """Raise InputError naming the file and the first missing key of a result record."""
    missing = [key for key in keys if key not in record]
    if missing:
        msg = f"{path}: {what} is missing required key(s) {', '.join(missing)}"
        raise InputError(msg)


def load_json_records(path: Path, text: str, *, expected: str) -> list[tuple[int, dict[str, Any]]]:
    """Parse a JSON object, a JSON list of objects, or JSON Lines into (line number, object) pairs."""
    stripped = text.strip()
    if not stripped:
        msg = f"{path}: is empty; expected {expected}"
        raise InputError(msg)
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError as exc:
        lines = [(no, line) for no, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if exc.msg != "Extra data" and len(lines) < 2:
            where = f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
            msg = f"{path}: not valid JSON ({where}); expected {expected}"
            raise InputError(msg) from None
        records = []
        for no, line in lines:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as line_exc:
                msg = f"{path}: line {no} is not valid JSON ({line_exc.msg}); expected {expected}"
                raise InputError(msg) from None
            records.append((no, obj))
    else:
        records = [(1, obj) for obj in whole] if isinstance(whole, list) else [(1, whole)]
    for no, obj in records:
        if not isinstance(obj, dict):
            msg = f"{path}: line {no} holds a JSON {type(obj).__name__}; expected {expected}"
            raise InputError(msg)
    if not records:
        msg = f"{path}: holds no result records; expected {expected}"
        raise InputError(msg)
    return records


def concurrency_from_path(path: Path) -> int | None:
    """Concurrency encoded in the file or directory name (conc_8, c8, concurrency8), if any."""
    for part in (path.stem, path.parent.name, path.parent.parent.name):
        match = _CONCURRENCY_HINT.search(part)
        if match:
            return int(match.group(1))
    return None


def lengths_from_path(path: Path) -> tuple[int, int] | None:
    """(input_len, output_len) encoded in the file name as '<in>x<out>', e.g. '..._128x128.csv'."""
    match = _LENGTHS_HINT.search(path.stem)
    return (int(match.group(1)), int(match.group(2))) if match else None


def marker_score(
    found: str | frozenset[str], own: tuple[str, ...], *, unmarked: float, rival: tuple[str, ...] = ()
) -> float:
    """Score in [0, 1] of a text (substring markers) or a set of JSON keys (key markers) whose
    format family is already recognised, by the markers it holds.

    0.2 if it holds a rival tool's marker (that tool's reader should win), else 1.0 if it holds
    one of the tool's own markers, else `unmarked`.
    """
    if any(marker in found for marker in rival):
        return 0.2
    return 1.0 if any(marker in found for marker in own) else unmarked


def engine_name(value: Any) -> str | None:
    """Normalise an engine or backend name to 'vllm' / 'sglang' / lowercase, or None."""
    if not value:
        return None
    name = str(value).strip().lower()
    for known in ("vllm", "sglang", "trt-llm", "tensorrt-llm", "lmdeploy", "tgi"):
        if name.startswith(known):
            return "trt-llm" if known == "tensorrt-llm" else known
    return None


# A client backend names the server only when its protocol is one that server alone serves;
# 'vllm', 'openai', 'openai-chat', 'lmdeploy', 'sglang-oai' (and vLLM's client's 'sglang') all
# speak the OpenAI API, which every engine serves: they name the client's protocol, not the server.
# vllm/benchmarks/backend_request_func.py (ASYNC_REQUEST_FUNCS) and sglang/bench_serving.py
# (ASYNC_REQUEST_FUNCS), both at their 2024-2026 heads.
SERVER_PROTOCOLS: dict[str, dict[str, str]] = {
    "vllm": {"tgi": "tgi", "tensorrt-llm": "trt-llm", "deepspeed-mii": "deepspeed-mii"},
    "sglang": {"sglang": "sglang", "sglang-native": "sglang", "trt": "trt-llm", "truss": "truss"},
}


def server_engine(backend: Any, *, tool: str) -> str | None:
    """The server a client `backend` of `tool` (`vllm` or `sglang`, the benchmark script) implies,
    or None when the backend is a protocol any engine serves (see `SERVER_PROTOCOLS`)."""
    if not backend:
        return None
    return SERVER_PROTOCOLS.get(tool, {}).get(str(backend).strip().lower())


def mode_name(value: Any) -> str | None:
    """Normalise a mode label: anything mentioning spec/eagle/mtp/draft is 'spec'."""
    if value is None or value == "":
        return None
    name = str(value).strip().lower()
    if name in {"direct", "baseline", "base", "none", "off", "no-spec", "nospec", "false"}:
        return "direct"
    if any(word in name for word in ("spec", "eagle", "mtp", "draft", "dspark", "medusa", "true")):
        return "spec"
    return name
