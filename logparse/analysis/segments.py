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
  the current start served (it said it was ready, or printed stats lines), or
* the printed arguments (a `config` row with ``args``: vLLM's `non-default args` / `args:
  Namespace(…)`, SGLang's `server_args=…`, which a server process prints once) a second time, at
  another time than the current start's own: a start that failed before any later stage (vLLM's
  `EngineCore failed to start`, an out-of-memory error while loading) and its relaunch appended to
  the same file. The same arguments twice at the same time are one line logged twice (two
  handlers), not a new start.

The new segment begins at the first configuration or loading line after the current one's last
later-stage line, so the new start's own preamble belongs to it; after a start that reached no
later stage, at the configuration lines printed at the same time just before the repeated
arguments (vLLM's version line), else at the arguments. A draft model loaded after the target's
graphs (SGLang EAGLE) is not a restart: it comes before the server is ready.
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
EARLY_ROLES = ("config", "args", "load")  # the roles of a start's own preamble


def _roles(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Every line that tells where a start is: ``line_no``, ``role`` (``config``, ``args`` (the
    printed arguments), ``load``, ``late``, ``serve``) and ``time`` (epoch µs), in line order."""
    parts = []

    def add(frame: pl.DataFrame, role: str | pl.Expr) -> None:
        if frame.height:
            role = pl.lit(role) if isinstance(role, str) else role
            # the time as epoch microseconds: the same for zoned and naive tables, compared only for equality
            parts.append(
                frame.select("line_no", role.alias("role"), pl.col("time").dt.epoch("us").alias("time"))
            )

    config = table(tables, "config", {"version": pl.String(), "args": pl.String()})
    printed = config.filter(pl.col("version").is_not_null() | pl.col("args").is_not_null())
    add(printed, pl.when(pl.col("args").is_not_null()).then(pl.lit("args")).otherwise(pl.lit("config")))
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
        return pl.DataFrame(schema={"line_no": pl.Int64(), "role": pl.String(), "time": pl.Int64()})
    return pl.concat(parts).sort("line_no")


def _turns(roles: pl.DataFrame) -> pl.DataFrame:
    """`roles` with each run of consecutive later-stage lines (`late`, `serve`) cut to its last
    line: the scan below reads only where a run ends (a log's million stats lines are one run),
    and every configuration and loading line."""
    early = pl.col("role").is_in(EARLY_ROLES)
    ends_run = pl.col("role") != pl.col("role").shift(-1).fill_null("")
    return roles.filter(early | ends_run)


def last_line(tables: Mapping[str, pl.DataFrame]) -> int:
    """The log's last line number (0 for an empty log)."""
    ends = [f.get_column("line_no").max() for f in tables.values() if "line_no" in f.columns and f.height]
    return max((int(e) for e in ends if e is not None), default=0)  # type: ignore[arg-type]


def _relaunch_start(early: list[tuple[int, str, int | None]]) -> int:
    """The first line of a start whose arguments (the last of `early`) repeat an earlier start's
    that reached no later stage: the configuration lines printed at the same time just before
    them (a version line) belong to it; the earlier start's own lines, printed earlier, do not."""
    line, _, time = early[-1]
    for before, role, at in reversed(early[:-1]):
        if role != "config" or time is None or at != time:
            break
        line = before
    return line


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
    early: list[tuple[int, str, int | None]] = []  # (line, role, time) since the last later-stage line
    printed, printed_at = False, None  # whether the current start printed its arguments yet, and when
    for line, role, time in _turns(_roles(tables)).iter_rows():
        if role not in EARLY_ROLES:
            late, serve = True, serve or role == "serve"
            last_late, early = line, []
            continue
        early.append((line, role, time))
        first = None
        if serve or (late and role != "load"):
            first = min(x for x, _, _ in early if x > last_late)
        elif role == "args" and printed and not (time is not None and time == printed_at):
            first = _relaunch_start(early)
        if first is not None:
            starts.append(first)
            late = serve = False
            early = [e for e in early if e[0] >= first]
            printed = False
        if role == "args":
            printed, printed_at = True, time
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
