"""Why a start failed: a start-up that never became ready, and a KV profile with no room.

A server that never said it was ready has no "ready after" and no throughput; what the log
does say is how far start-up got (the last stage that printed a line) and how long the log
goes on after it: a crash when errors or an out-of-memory error follow, else a hang (or a log
cut short). SGLang's `max_total_tokens=N is larger than the profiled value P` says the memory
profile left room for P KV tokens only; P ≤ 0 means the weights leave none at all, the root
cause of the failures that follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from logparse.analysis._frames import first_line_no, table
from logparse.analysis.segments import last_stage

TRACEBACK = "Traceback (most recent call last)"


def _last_time(tables: Mapping[str, pl.DataFrame]) -> tuple[int | None, Any]:
    """The last timestamped line of `tables`: (line number, time)."""
    best: tuple[int | None, Any] = (None, None)
    for frame in tables.values():
        if "time" not in frame.columns or frame.is_empty():
            continue
        stamped = frame.filter(pl.col("time").is_not_null())
        if stamped.height:
            row = stamped.sort("line_no").row(-1, named=True)
            if best[0] is None or row["line_no"] > best[0]:
                best = (row["line_no"], row["time"])
    return best


def _after(tables: Mapping[str, pl.DataFrame], line: int) -> str:
    """What follows `line` that tells a crash: an out-of-memory error, ERROR lines, a Python
    traceback (SGLang prints no level), as a phrase; empty when nothing does."""
    oom = table(tables, "oom", {"recovered": pl.Boolean()}).filter(
        (pl.col("line_no") > line) & ~pl.col("recovered").fill_null(False)
    )
    if oom.height:
        return f"an out-of-memory error at line {first_line_no(oom)}"
    errors = [
        f.filter((pl.col("line_no") > line) & pl.col("level").is_in(["ERROR", "CRITICAL"]))
        for f in tables.values()
        if "level" in f.columns and f.height
    ]
    count = sum(e.height for e in errors)
    if count:
        first = min(first_line_no(e) for e in errors if e.height)
        return f"{count} ERROR line(s) from line {first}"
    raw = table(tables, "unparsed", {"raw": pl.String()})
    trace = raw.filter(
        (pl.col("line_no") > line) & pl.col("raw").fill_null("").str.contains(TRACEBACK, literal=True)
    )
    if trace.height:
        return f"a Python traceback at line {first_line_no(trace)}"
    return ""


def start_not_ready(
    tables: Mapping[str, pl.DataFrame], *, ready: Any, samples: pl.DataFrame
) -> dict[str, Any] | None:
    """A `start_not_ready` finding (diagnostic fields) for a start that printed start-up lines,
    never said it was ready and served nothing; None otherwise."""
    if ready is not None or not samples.is_empty():
        return None
    stage = last_stage(tables)
    if stage is None:
        return None
    end_line, end_time = _last_time(tables)
    since = ""
    if (
        end_time is not None
        and stage["time"] is not None
        and end_line is not None
        and end_line > stage["line_no"]
    ):
        seconds = (end_time - stage["time"]).total_seconds()
        since = f", {seconds:,.0f} s before the log's last timestamped line (line {end_line})"
    crash = _after(tables, int(stage["line_no"]))
    verdict = (
        f"then {crash}: a crashed start"
        if crash
        else "nothing after it tells why: a hung start, or a log cut short"
    )
    return {
        "code": "start_not_ready",
        "severity": "error" if crash else "warning",
        "line_no": stage["line_no"],
        "message": f"the engine never said it was ready: the last start-up stage reached is {stage['stage']} "
        f"(line {stage['line_no']}{since}); {verdict}",
    }


def kv_profile_negative(tables: Mapping[str, pl.DataFrame]) -> dict[str, Any] | None:
    """A `kv_profile_negative` finding when SGLang's memory profile left fewer KV tokens than
    `--max-total-tokens` asked (an error when it left none), else None."""
    kv = table(tables, "kv_pool", {"max_total_tokens": pl.Int64(), "profiled_tokens": pl.Int64()})
    rows = kv.filter(pl.col("profiled_tokens").is_not_null()).sort("line_no")
    if rows.is_empty():
        return None
    r = rows.row(0, named=True)
    profiled, asked = r["profiled_tokens"], r["max_total_tokens"]
    if profiled <= 0:
        return {
            "code": "kv_profile_negative",
            "severity": "error",
            "line_no": r["line_no"],
            "value": float(profiled),
            "message": f"the memory profile left {profiled:,} KV cache tokens (line {r['line_no']}; "
            f"--max-total-tokens asked {asked:,}): the weights and activations leave no memory for the "
            "KV cache, the root cause of what follows; raise --mem-fraction-static, quantise or "
            "shard the model further",
        }
    return {
        "code": "kv_profile_negative",
        "severity": "warning",
        "line_no": r["line_no"],
        "value": float(profiled),
        "message": f"the memory profile left room for {profiled:,} KV cache tokens, fewer than the {asked:,} "
        f"--max-total-tokens asked (line {r['line_no']}): the smaller pool is used",
    }


__all__ = ["kv_profile_negative", "start_not_ready"]
