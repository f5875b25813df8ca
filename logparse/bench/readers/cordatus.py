"""Reader for CordatusAI/llm-benchmark result tables.

Two layouts carry the same numbers:

- the tool's own export, `<model>-table.csv`: `Concurrency, TTFT (Mean, ms), TTFT (p50, ms),
  TTFT (p90, ms), ITL (...), TPS (..., tokens/s), Latency (..., s), Throughput (RPS)`;
- the tidy layout of the Openzeka report appendix: `engine, mode, concurrency, ttft_mean_ms,
  ttft_p90_ms, itl_mean_ms, itl_p90_ms, tps_mean, tps_p90, latency_mean_s, latency_p90_s, rps`.

Cordatus's "ITL" is the per-request `(last - first) / (tokens - 1)`, i.e. vLLM's TPOT, so it lands
in `tpot_ms_*`; "TPS" is `tokens / total request time` (TTFT included); "p90" is nearest rank.
The tool always sends `max_tokens = 128` (its DEFAULT_MAX_TOKENS), so that is the output length
unless the file name states `<in>x<out>` (the Openzeka file is `..._128x128.csv`).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import Sample, lengths_from_path, mode_name, to_int, to_number
from logparse.bench.schema import empty_record
from logparse.errors import InputError

EXPECTED = (
    "a CordatusAI llm-benchmark table CSV (Concurrency, TTFT (Mean, ms), ... or the tidy"
    " engine, mode, concurrency, ttft_mean_ms, ... layout)"
)
DEFAULT_MAX_TOKENS = 128

_NATIVE = re.compile(r"^(TTFT|ITL|TPS|Latency) \((Mean|p50|p90), (?:ms|s|tokens/s)\)$")
_TIDY = re.compile(r"^(ttft|itl|tps|latency)_(mean|p50|median|p90)(?:_(?:ms|s))?$")
_PREFIX = {"ttft": "ttft_ms", "itl": "tpot_ms", "tps": "tps_per_user", "latency": "latency_s"}
_STAT = {"mean": "mean", "p50": "median", "median": "median", "p90": "p90"}
_REQUIRED = ("ttft_ms_mean", "tps_per_user_mean", "latency_s_mean")


def _column_map(header: list[str]) -> dict[int, str]:
    """Header position -> schema column, for the metric columns of either layout."""
    out: dict[int, str] = {}
    for position, name in enumerate(header):
        cell = name.strip()
        match = _NATIVE.match(cell) or _TIDY.match(cell)
        if match:
            out[position] = f"{_PREFIX[match.group(1).lower()]}_{_STAT[match.group(2).lower()]}"
        elif cell in {"Throughput (RPS)", "rps"}:
            out[position] = "reported_rps_per_request"
    return out


def _header(head: str) -> list[str]:
    first = head.splitlines()[0] if head.strip() else ""
    return next(csv.reader([first]), [])


def sniff(sample: Sample, path: Path) -> float:
    """Score in [0, 1] that `sample` is a Cordatus table CSV in either layout (by its header line)."""
    header = [cell.strip() for cell in _header(sample.head)]
    if "Concurrency" not in header and "concurrency" not in header:
        return 0.0
    mapped = set(_column_map(header).values())
    return 1.0 if {"ttft_ms_mean", "tps_per_user_mean"} <= mapped else 0.3


def read(path: Path, text: str) -> list[dict[str, Any]]:
    """Read every concurrency row of a Cordatus table into schema records."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        msg = f"{path}: is empty; expected {EXPECTED}"
        raise InputError(msg)
    header = [cell.strip() for cell in rows[0]]
    columns = _column_map(header)
    missing = [name for name in _REQUIRED if name not in columns.values()]
    names = {name.lower(): position for position, name in enumerate(header)}
    if "concurrency" not in names or missing:
        missing = (["concurrency"] if "concurrency" not in names else []) + missing
        msg = f"{path}: header lacks column(s) for {', '.join(missing)}; expected {EXPECTED}"
        raise InputError(msg)
    lengths = lengths_from_path(path)
    model = path.stem.removesuffix("-table") if path.stem.endswith("-table") else None
    records: list[dict[str, Any]] = []
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            msg = f"{path}: line {line_no} has {len(row)} fields but the header has {len(header)}"
            raise InputError(msg)

        def cell(name: str, row: list[str] = row) -> str | None:
            position = names.get(name)
            return row[position].strip() if position is not None else None

        concurrency = to_int(cell("concurrency"), path=path, where=f"line {line_no} 'concurrency'")
        if concurrency is None or concurrency < 1:
            msg = f"{path}: line {line_no} has no valid concurrency; expected a positive integer"
            raise InputError(msg)
        rec = empty_record()
        rec.update(
            source_file=str(path),
            source_tool="cordatus_csv",
            record=len(records),
            engine=(cell("engine") or "").lower() or None,
            mode=mode_name(cell("mode")),
            label=cell("label") or None,
            model=cell("model") or model,
            concurrency=concurrency,
            input_len=float(lengths[0]) if lengths else None,
            output_len_requested=lengths[1] if lengths else DEFAULT_MAX_TOKENS,
            tps_per_user_definition="tokens_over_e2e",
        )
        for position, column in columns.items():
            rec[column] = to_number(row[position], path=path, where=f"line {line_no} {header[position]!r}")
        records.append(rec)
    if not records:
        msg = f"{path}: has a header but no data rows; expected {EXPECTED}"
        raise InputError(msg)
    return records
