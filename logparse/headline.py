"""The headline facts of one ingested log: what `logparse ingest` prints after parsing."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from logparse.drift import drift_facts, render_drift
from logparse.escape import for_terminal
from logparse.pipeline import IngestResult


def first_value(tables: Mapping[str, pl.DataFrame], kind: str, column: str, *,
                how: str = "first", where: pl.Expr | None = None) -> Any:
    """A single value of `kind.column` (first non-null, max, min or sum), or None."""
    frame = tables.get(kind)
    if frame is None or column not in frame.columns:
        return None
    if where is not None:
        frame = frame.filter(where)
    series = frame.get_column(column).drop_nulls()
    if series.is_empty():
        return None
    if how == "max":
        return series.max()
    if how == "min":
        return series.min()
    if how == "sum":
        return series.sum()
    return series[0]


def _time_span(tables: Mapping[str, pl.DataFrame]) -> tuple[Any, Any]:
    starts, ends = [], []
    for frame in tables.values():
        times = frame.get_column("time").drop_nulls()
        if not times.is_empty():
            starts.append(times.min())
            ends.append(times.max())
    return (min(starts), max(ends)) if starts else (None, None)


def _ranks(tables: Mapping[str, pl.DataFrame]) -> list[str]:
    seen: set[str] = set()
    for frame in tables.values():
        seen.update(r for r in frame.get_column("rank").drop_nulls().unique().to_list())
    return sorted(seen)


def _count_rows(tables: Mapping[str, pl.DataFrame], kind: str, where: pl.Expr | None = None) -> int:
    frame = tables.get(kind)
    if frame is None:
        return 0
    return frame.height if where is None else frame.filter(where).height


def headline(result: IngestResult) -> dict[str, Any]:
    """Engine, version, span, ranks, line counts, coverage and the startup and trouble figures."""
    t = result.tables
    start, end = _time_span(t)
    preempt = t.get("preemption")
    retract_expr = pl.col("mode").str.to_lowercase().str.contains("retract")
    retractions = 0
    preemptions = 0
    if preempt is not None:
        retractions = int(preempt.filter(retract_expr).select(pl.col("count").fill_null(1).sum()).item() or 0)
        preemptions = preempt.filter(~retract_expr.fill_null(False)).height
    stats_preempt = first_value(t, "engine_stats", "preemptions", how="sum")
    warnings = t.get("warning")
    by_category: dict[str, int] = {}
    if warnings is not None:
        grouped = warnings.group_by(pl.col("category").fill_null("other")).len().sort("len", descending=True)
        by_category = {str(row[0]): int(row[1]) for row in grouped.iter_rows()}
    jit = t.get("jit_compile")
    jit_by_what: dict[str, int] = {}
    if jit is not None and "what" in jit.columns:
        grouped = (jit.group_by(pl.col("what").fill_null("other").str.split(":").list.first())
                   .len().sort("len", descending=True))
        jit_by_what = {str(w): int(n) for w, n in grouped.iter_rows()}
    return {
        "source": result.source,
        "engine": result.engine,
        "engine_scores": result.scores,
        "version": first_value(t, "config", "version"),
        "model": first_value(t, "config", "model"),
        "start": start.isoformat(sep=" ") if start else None,
        "end": end.isoformat(sep=" ") if end else None,
        "duration_s": (end - start).total_seconds() if start and end else None,
        "ranks": _ranks(t),
        "lines": result.lines,
        "typed_lines": result.typed_lines,
        "coverage": result.coverage,
        "lines_per_kind": dict(sorted(result.counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "input": {
            "bytes": result.stats.bytes_read,
            "invalid_utf8_lines": result.stats.invalid_utf8_lines,
            "nul_lines": result.stats.nul_lines,
            "truncated_last_line": result.stats.truncated_last_line,
            "long_lines": result.stats.long_lines,
            "longest_line": result.stats.longest_line,
            "notes": list(result.stats.notes),
        },
        "startup": {
            "weights_gib": first_value(t, "weight_load", "gib") or first_value(t, "memory", "weights_gib"),
            "weight_load_s": first_value(t, "weight_load", "seconds", how="max"),
            "kv_pool_tokens": first_value(t, "kv_pool", "tokens", how="max"),
            "kv_gib": first_value(t, "kv_pool", "kv_gib") or first_value(t, "memory", "kv_gib"),
            "max_concurrency": first_value(t, "kv_pool", "max_concurrency"),
            "cuda_graph_s": first_value(t, "cuda_graph", "seconds", how="max"),
            "cuda_graph_gib": first_value(t, "cuda_graph", "gib", how="max"),
            "compile_s": first_value(t, "jit_compile", "seconds", how="max"),
            "init_s": first_value(t, "engine_init", "seconds", how="max"),
        },
        "counts": {
            "oom": _count_rows(t, "oom"),
            "oom_recovered": _count_rows(t, "oom", pl.col("recovered").fill_null(False)),
            "preemptions": max(preemptions, int(stats_preempt or 0)),
            "retractions": retractions,
            "jit_lines": _count_rows(t, "jit_compile"),
            "warnings": _count_rows(t, "warning"),
        },
        "warnings_by_category": by_category,
        "jit_by_what": jit_by_what,
        **drift_facts(result),
    }


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:,.0f}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    return f"{text} {unit}".rstrip()


def _breakdown(counts: Mapping[str, int]) -> str:
    return f" ({', '.join(f'{k} {v}' for k, v in counts.items())})" if counts else ""


def render_headline(facts: Mapping[str, Any]) -> str:
    """The headline as aligned text for a terminal."""
    s, c = facts["startup"], facts["counts"]
    rows = [
        ("log", facts["source"]),
        ("engine", f"{facts['engine']}" + (f" {facts['version']}" if facts["version"] else "")),
        ("model", _fmt(facts["model"])),
        ("time span", f"{_fmt(facts['start'])} .. {_fmt(facts['end'])} ({_fmt(facts['duration_s'], 's')})"),
        ("ranks", ", ".join(facts["ranks"]) or "-"),
        ("lines", f"{facts['lines']:,} ({facts['typed_lines']:,} typed, coverage {facts['coverage']:.1%})"),
        ("weights", f"{_fmt(s['weights_gib'], 'GiB')}, loaded in {_fmt(s['weight_load_s'], 's')}"),
        ("KV pool", f"{_fmt(s['kv_pool_tokens'], 'tokens')}, {_fmt(s['kv_gib'], 'GiB')}, "
                    f"max concurrency {_fmt(s['max_concurrency'])}"),
        ("CUDA graphs", f"{_fmt(s['cuda_graph_s'], 's')}, {_fmt(s['cuda_graph_gib'], 'GiB')}"),
        ("compile", _fmt(s["compile_s"], "s")),
        ("engine init", _fmt(s["init_s"], "s")),
        ("OOM", f"{c['oom']} ({c['oom_recovered']} recovered)"),
        ("preemptions", str(c["preemptions"])),
        ("retractions", str(c["retractions"])),
        ("JIT/compile", f"{c['jit_lines']} lines" + _breakdown(facts["jit_by_what"])),
        ("warnings", ", ".join(f"{k} {v}" for k, v in facts["warnings_by_category"].items()) or "0"),
    ]
    inp = facts["input"]
    notes = []
    if inp["invalid_utf8_lines"]:
        notes.append(f"{inp['invalid_utf8_lines']} line(s) with invalid UTF-8 (replaced)")
    if inp["nul_lines"]:
        notes.append(f"{inp['nul_lines']} line(s) with NUL bytes")
    if inp["truncated_last_line"]:
        notes.append("last line has no newline (truncated file?)")
    notes.extend(inp["notes"])
    if notes:
        rows.append(("input", "; ".join(notes)))
    width = max(len(k) for k, _ in rows)
    out = [f"{k:<{width}}  {for_terminal(v)}" for k, v in rows]  # values hold text from the log
    kinds = facts["lines_per_kind"]
    if kinds:
        out.append("")
        out.append("lines per kind")
        kw = max(len(k) for k in kinds)
        out.extend(f"  {for_terminal(k):<{kw}}  {v:>10,}" for k, v in kinds.items())
    out.extend(render_drift(facts))
    return "\n".join(out)
