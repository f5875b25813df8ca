"""Reader for AIPerf `profile_export_aiperf.csv` and genai-perf `profile_export_genai_perf.csv`.

Both files hold a request block (`Metric,avg,min,max,<percentiles>...`), a blank row, and a
system block (`Metric,Value`). AIPerf lists percentiles p1 -> p99 (then std); genai-perf lists
them from p99 down (to p25 in its early releases, to p1 later): the order tells them apart. The two tools define ITL differently (peer-tools.md 1.4): AIPerf's is the per-request
`(latency - ttft) / (osl - 1)` (vLLM's TPOT, so it lands in `tpot_ms_*`); genai-perf's is the
gap between responses divided by the tokens in the later response (`itl_ms_*`). Neither file
records the concurrency; it is read from the path (`conc_8/`, `_c8_`, `concurrency8`).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from logparse.bench.readers._common import Sample, concurrency_from_path, to_int, to_number
from logparse.bench.schema import SCHEMA, empty_record
from logparse.errors import InputError

EXPECTED = "an AIPerf/genai-perf CSV export (a 'Metric,avg,min,max,...' block and a 'Metric,Value' block)"

_STATS = {"avg": "mean", "p50": "median", "p10": "p10", "p90": "p90", "p95": "p95", "p99": "p99"}
# lowercase metric-name prefix -> (schema prefix for AIPerf, for genai-perf, factor)
_REQUEST_METRICS: list[tuple[str, str, str, float]] = [
    ("time to first token", "ttft_ms", "ttft_ms", 1.0),
    ("inter token latency", "tpot_ms", "itl_ms", 1.0),
    ("request latency", "latency_s", "latency_s", 0.001),
    ("output token throughput per user", "tps_per_user", "tps_per_user", 1.0),
]
_SYSTEM_METRICS: list[tuple[str, str]] = [
    ("output token throughput per user", ""),
    ("output token throughput", "output_throughput_tps"),
    ("request throughput", "request_throughput_rps"),
    ("request count", "num_requests"),
    ("benchmark duration", "duration_s"),
]


def sniff(sample: Sample, path: Path) -> float:
    """Score in [0, 1] that `sample` is an AIPerf or genai-perf CSV export (by its header line)."""
    head = sample.head
    first = head.lstrip().splitlines()[0] if head.strip() else ""
    cells = [cell.strip().lower() for cell in first.split(",")]
    if cells[:4] != ["metric", "avg", "min", "max"]:
        return 0.0
    return 1.0 if "p90" in cells else 0.5


def is_genai_perf(cells: list[str]) -> bool:
    """Whether a request-block header (lowercased cells) is genai-perf's: it lists percentiles
    from the highest down (`p99,p95,p90,p75,p50,p25`, and `,p10,p5,p1` from 0.0.12); AIPerf lists
    them from the lowest up (`p1,p5,...,p99`) and ends with `std`."""
    ranked = [int(c[1:]) for c in cells if len(c) > 1 and c[0] == "p" and c[1:].isdigit()]
    if len(ranked) < 2:
        return False
    return ranked[0] > ranked[-1]


def read(path: Path, text: str) -> list[dict[str, Any]]:
    """Read one AIPerf/genai-perf run (one CSV file) into a one-element list of schema records."""
    rows = [(no, row) for no, row in enumerate(csv.reader(io.StringIO(text)), start=1)]
    header_no, header = next(((no, row) for no, row in rows if any(c.strip() for c in row)), (0, []))
    cells = [cell.strip().lower() for cell in header]
    if cells[:4] != ["metric", "avg", "min", "max"]:
        msg = f"{path}: line {header_no or 1} is not a 'Metric,avg,min,max,...' header; expected {EXPECTED}"
        raise InputError(msg)
    genai = is_genai_perf(cells)
    tool = "genai_perf_csv" if genai else "aiperf_csv"
    rec = empty_record()
    rec.update(
        source_file=str(path),
        source_tool=tool,
        record=0,
        concurrency=concurrency_from_path(path),
        itl_definition="chunk_gap_per_token" if genai else None,
        tps_per_user_definition="inverse_tpot",
    )
    in_system = False
    seen = 0
    for no, row in rows:
        if no <= header_no or not any(c.strip() for c in row):
            continue
        name = row[0].strip()
        if name.lower() == "metric":
            in_system = True
            continue
        if in_system:
            if len(row) < 2:
                msg = f"{path}: line {no} has no value; expected 'Metric,Value' rows"
                raise InputError(msg)
            seen += _system_row(path, no, name, row[1], rec)
        else:
            if len(row) != len(cells):
                msg = f"{path}: line {no} has {len(row)} fields but the header has {len(cells)}"
                raise InputError(msg)
            seen += _request_row(path, no, name, row, cells, rec, genai=genai)
    if rec["ttft_ms_mean"] is None and rec["latency_s_mean"] is None:
        msg = f"{path}: no 'Time to First Token' or 'Request Latency' row; expected {EXPECTED}"
        raise InputError(msg)
    if rec["output_len"] is not None and rec["num_requests"]:
        rec["total_output_tokens"] = round(rec["output_len"] * rec["num_requests"])
    return [rec] if seen else []


def _request_row(
    path: Path, no: int, name: str, row: list[str], cells: list[str], rec: dict[str, Any], *, genai: bool
) -> int:
    lowered = name.lower()
    values = {
        stat: to_number(row[position], path=path, where=f"line {no} {name!r} {stat}")
        for position, stat in enumerate(cells)
        if position > 0
    }
    if lowered.startswith("output sequence length"):
        rec["output_len"] = values.get("avg")
        return 1
    if lowered.startswith("input sequence length"):
        rec["input_len"] = values.get("avg")
        return 1
    for prefix, aiperf_column, genai_column, factor in _REQUEST_METRICS:
        if lowered.startswith(prefix):
            column = genai_column if genai else aiperf_column
            for stat, stat_name in _STATS.items():
                target = f"{column}_{stat_name}"
                if target in SCHEMA:
                    value = values.get(stat)
                    rec[target] = None if value is None else value * factor
            return 1
    if lowered.startswith(("output token throughput", "request throughput", "request count")):
        return _system_row(path, no, name, row[1], rec)
    return 0


def _system_row(path: Path, no: int, name: str, raw: str, rec: dict[str, Any]) -> int:
    lowered = name.lower()
    for prefix, column in _SYSTEM_METRICS:
        if lowered.startswith(prefix):
            if not column:
                return 0
            where = f"line {no} {name!r}"
            if column == "num_requests":
                rec[column] = to_int(raw, path=path, where=where)
            else:
                rec[column] = to_number(raw, path=path, where=where)
            return 1
    return 0
