"""Segments: one engine start each, with its phases. A log of several starts is split at each.

`docker logs` of a restarted container, journald and appended log files hold several starts of
the engine one after the other (sometimes with clocks that overlap). Their figures must not be
added up (two 85 s CUDA graph captures are not one of 170 s) and their phases not cut across
(a 64K phase and a 200K phase of two starts are two phases). A new start is recognised, in
line order, by

* a process-start configuration line (a version line, the printed arguments: a `config` row
  with ``version`` or ``args``) after the current start reached a later stage (KV pool, CUDA
  graphs, engine init, ready, stats), or
* weight loading (`weight_load`, SGLang's `Load weight begin` / torch-distributed init) after
  the current start served (it said it was ready, or printed stats lines).

The new segment begins at the first configuration or loading line after the current one's last
later-stage line, so the new start's own preamble belongs to it. A draft model loaded after the
target's graphs (SGLang EAGLE) is not a restart: it comes before the server is ready.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from logparse.analysis._frames import table

SEGMENT_SCHEMA: dict[str, pl.DataType] = {
    "segment": pl.Int64(),
    "first_line": pl.Int64(),
    "last_line": pl.Int64(),
}
# Start-up stages in the order an engine goes through them, with the kinds that mark each.
STAGES: tuple[tuple[str, str], ...] = (
    ("configuration", "config"),
    ("weight loading", "weight_load"),
    ("compile / JIT", "jit_compile"),
    ("memory profiling", "memory"),
    ("KV cache allocation", "kv_pool"),
    ("CUDA graph capture", "cuda_graph"),
    ("engine init", "engine_init"),
)
STATS_KINDS = ("engine_stats", "decode_batch", "prefill_batch")
_START_MEMORY = "load_weight|torch_distributed"


def _roles(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Every line that tells where a start is: ``line_no`` and ``role`` (``config``, ``load``,
    ``late``, ``serve``), in line order."""
    parts = []

    def add(frame: pl.DataFrame, role: str) -> None:
        if frame.height:
            parts.append(frame.select("line_no", pl.lit(role).alias("role")))

    config = table(tables, "config", {"version": pl.String(), "args": pl.String()})
    add(config.filter(pl.col("version").is_not_null() | pl.col("args").is_not_null()), "config")
    weights = table(tables, "weight_load", {"phase": pl.String()})
    what = pl.coalesce(pl.col("phase"), pl.col("rule")).fill_null("")
    add(weights.filter(~what.str.contains("reload")), "load")
    memory = table(tables, "memory", {"phase": pl.String()})
    add(memory.filter(what.str.contains(_START_MEMORY)), "load")
    init = table(tables, "engine_init", {"phase": pl.String()})
    ready = pl.col("phase").fill_null("").str.contains("ready")
    add(init.filter(ready), "serve")
    add(init.filter(~ready), "late")
    for kind in ("kv_pool", "cuda_graph"):
        add(table(tables, kind, {}), "late")
    for kind in STATS_KINDS:
        add(table(tables, kind, {}), "serve")
    if not parts:
        return pl.DataFrame(schema={"line_no": pl.Int64(), "role": pl.String()})
    return pl.concat(parts).sort("line_no")


def _turns(roles: pl.DataFrame) -> pl.DataFrame:
    """`roles` with each run of consecutive later-stage lines (`late`, `serve`) cut to its last
    line: the scan below reads only where a run ends (a log's million stats lines are one run),
    and every configuration and loading line."""
    early = pl.col("role").is_in(["config", "load"])
    ends_run = pl.col("role") != pl.col("role").shift(-1).fill_null("")
    return roles.filter(early | ends_run)


def last_line(tables: Mapping[str, pl.DataFrame]) -> int:
    """The log's last line number (0 for an empty log)."""
    ends = [f.get_column("line_no").max() for f in tables.values() if "line_no" in f.columns and f.height]
    return max((int(e) for e in ends if e is not None), default=0)  # type: ignore[arg-type]


def find_segments(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The engine starts of a log (`SEGMENT_SCHEMA`), numbered from 1; one segment covering the
    whole log when it holds at most one start.

    Examples
    --------
    >>> wl = pl.DataFrame({"line_no": [1, 50], "phase": ["begin", "begin"]})
    >>> stats = pl.DataFrame({"line_no": [10, 20, 60]})
    >>> find_segments({"weight_load": wl, "engine_stats": stats})
    shape: (2, 3)
    ┌─────────┬────────────┬───────────┐
    │ segment ┆ first_line ┆ last_line │
    │ ---     ┆ ---        ┆ ---       │
    │ i64     ┆ i64        ┆ i64       │
    ╞═════════╪════════════╪═══════════╡
    │ 1       ┆ 1          ┆ 49        │
    │ 2       ┆ 50         ┆ 60        │
    └─────────┴────────────┴───────────┘
    """
    starts = [1]
    late = serve = False
    last_late = 0
    early: list[int] = []  # configuration and loading lines since the last later-stage line
    for line, role in _turns(_roles(tables)).iter_rows():
        if role in ("config", "load"):
            restart = serve or (late and role == "config")
            early.append(line)
            if restart:
                starts.append(min(x for x in early if x > last_late))
                late = serve = False
                early = [line]
            continue
        late, serve = True, serve or role == "serve"
        last_late, early = line, []
    end = max(last_line(tables), starts[-1])
    rows = [
        {"segment": i + 1, "first_line": a, "last_line": (starts[i + 1] - 1 if i + 1 < len(starts) else end)}
        for i, a in enumerate(starts)
    ]
    return pl.DataFrame(rows, schema=SEGMENT_SCHEMA, orient="row")


def segment_tables(
    tables: Mapping[str, pl.DataFrame], first_line: int, last_line: int
) -> dict[str, pl.DataFrame]:
    """The event tables restricted to the lines of one segment."""
    return {
        kind: frame.filter(pl.col("line_no").is_between(first_line, last_line))
        for kind, frame in tables.items()
    }


def first_segment_tables(tables: Mapping[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """`tables` restricted to the log's first engine start (all of them for a single start)."""
    segments = find_segments(tables)
    if segments.height <= 1:
        return dict(tables)
    row = segments.row(0, named=True)
    return segment_tables(tables, row["first_line"], row["last_line"])


def last_stage(tables: Mapping[str, pl.DataFrame]) -> dict[str, Any] | None:
    """The furthest start-up stage the tables reach: ``stage``, ``line_no``, ``time`` (of that
    stage's last line), or None when no start-up line was typed."""
    best = None
    for order, (stage, kind) in enumerate(STAGES):
        frame = table(tables, kind, {})
        if frame.is_empty():
            continue
        row = frame.sort("line_no").row(-1, named=True)
        if best is None or order >= best[0]:
            best = (order, {"stage": stage, "line_no": row["line_no"], "time": row["time"]})
    return None if best is None else best[1]


__all__ = [
    "SEGMENT_SCHEMA",
    "STAGES",
    "find_segments",
    "first_segment_tables",
    "last_line",
    "last_stage",
    "segment_tables",
]
