"""The headline facts of one ingested log: what `logparse ingest` prints after parsing."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from logparse.analysis.unparsed import unparsed_families
from logparse.drift import drift_facts, render_drift
from logparse.escape import for_terminal
from logparse.ingest import IngestResult
from logparse.ingest.reader import ReadStats, read_problems

Frame = pl.DataFrame | pl.LazyFrame

# Why a log names no engine (the facts' `no_content`).
EMPTY_FILE = "empty file"
BLANK_LINES_ONLY = "blank lines only"


def _lazy(frame: Frame) -> pl.LazyFrame:
    return frame.lazy() if isinstance(frame, pl.DataFrame) else frame


def _columns(frame: Frame) -> list[str]:
    return frame.columns if isinstance(frame, pl.DataFrame) else frame.collect_schema().names()


def first_value(
    tables: Mapping[str, Frame], kind: str, column: str, *, how: str = "first", where: pl.Expr | None = None
) -> Any:
    """A single value of `kind.column` (first non-null, max, min or sum), or None.

    Tables may be DataFrames or lazy scans of Parquet files (a streamed log): the same query runs.
    """
    frame = tables.get(kind)
    if frame is None or column not in _columns(frame):
        return None
    lazy = _lazy(frame)
    if where is not None:
        lazy = lazy.filter(where)
    values = pl.col(column).drop_nulls()
    agg = {"max": values.max(), "min": values.min(), "sum": values.sum()}.get(how, values.first())
    count, value = lazy.select(values.len().alias("n"), agg.alias("v")).collect().row(0)
    return None if not count else value


def _time_span(tables: Mapping[str, Frame]) -> tuple[Any, Any]:
    starts, ends = [], []
    for frame in tables.values():
        start, end = (
            _lazy(frame).select(pl.col("time").min(), pl.col("time").max().alias("end")).collect().row(0)
        )
        if start is not None:
            starts.append(start)
            ends.append(end)
    return (min(starts), max(ends)) if starts else (None, None)


def _ranks(tables: Mapping[str, Frame]) -> list[str]:
    seen: set[str] = set()
    for frame in tables.values():
        seen.update(_lazy(frame).select(pl.col("rank").drop_nulls().unique()).collect().to_series().to_list())
    return sorted(seen)


def _height(frame: Frame, where: pl.Expr | None = None) -> int:
    lazy = _lazy(frame)
    if where is not None:
        lazy = lazy.filter(where)
    return int(lazy.select(pl.len()).collect().item())


def _count_rows(tables: Mapping[str, Frame], kind: str, where: pl.Expr | None = None) -> int:
    frame = tables.get(kind)
    if frame is None:
        return 0
    return _height(frame, where)


# The kinds `coldstart.startup_figures` reads whole; all are start-up lines, a few hundred rows at most.
STARTUP_KINDS = ("weight_load", "cuda_graph", "jit_compile", "engine_init", "kv_pool", "memory", "config")


def _startup_tables(tables: Mapping[str, Frame], start: Any) -> dict[str, pl.DataFrame]:
    """What `coldstart.startup_figures` reads of a log's tables, collected without a full scan.

    It reads the start-up kinds, the log's first timestamp (`start_time`) and, when the ready line
    has no timestamp of its own, the last timestamped line before it (`time_at_line`). So: the
    start-up kinds whole; of every other kind, only its (line_no, time) up to the ready line, and
    then only when that line has no time; and one row holding the log's first time.
    """
    from logparse.analysis._frames import naive_utc
    from logparse.analysis.coldstart import ready_row

    tables = naive_utc(tables)
    view = {kind: _lazy(frame).collect() for kind, frame in tables.items() if kind in STARTUP_KINDS}
    ready = ready_row(view)
    if ready is not None and ready["time_approx"]:
        for kind, frame in tables.items():
            if kind not in view and {"line_no", "time"} <= set(_columns(frame)):
                view[kind] = (
                    _lazy(frame)
                    .select("line_no", "time")
                    .filter(pl.col("line_no") <= ready["line_no"])
                    .collect()
                )
    if start is not None:
        start = start.replace(tzinfo=None) if getattr(start, "tzinfo", None) else start
        # No line_no: `time_at_line` never picks it, `start_time` does.
        view["_start"] = pl.DataFrame(
            {"line_no": [None], "time": [start]}, schema={"line_no": pl.Int64(), "time": pl.Datetime("us")}
        )
    return view


def startup(tables: Mapping[str, Frame], *, engine: str, start: Any = None) -> dict[str, Any]:
    """The start-up figures of `summary` (`coldstart.startup_figures`), from eager or lazy tables.

    `start` is the log's first timestamp when the caller already has it (else it is computed).
    """
    from logparse.analysis.coldstart import startup_figures

    if start is None:
        start = _time_span(tables)[0]
    figures = startup_figures(_startup_tables(tables, start), engine=engine)
    if figures.get("kv_pools") and "decode_batch" in tables:
        # The binding pool needs the Decode lines' peak usage: their usage columns only.
        from logparse.analysis.pools import USAGE_OF, binding_pool, peak_usage, with_peaks

        decode = _lazy(tables["decode_batch"])
        present = [c for c in USAGE_OF.values() if c in _columns(tables["decode_batch"])]
        pools = with_peaks(figures["kv_pools"], peak_usage(decode.select(present).collect()))
        figures = {**figures, "kv_pools": pools, "kv_binding_pool": binding_pool(pools)}
    return figures


def headline(result: IngestResult) -> dict[str, Any]:
    """Engine, version, span, ranks, line counts, coverage and the startup and trouble figures.

    `result` tables may be lazy scans of its Parquet files (`ingest.ingest_to_folder`).
    """
    t = result.tables
    start, end = _time_span(t)
    preempt = t.get("preemption")
    retract_expr = pl.col("mode").str.to_lowercase().str.contains("retract")
    retractions = 0
    preemptions = 0
    if preempt is not None:
        lazy = _lazy(preempt)
        retractions = int(
            lazy.filter(retract_expr).select(pl.col("count").fill_null(1).sum()).collect().item() or 0
        )
        preemptions = _height(preempt, ~retract_expr.fill_null(False))
    stats_preempt = first_value(t, "engine_stats", "preemptions", how="sum")
    warnings = t.get("warning")
    by_category: dict[str, int] = {}
    if warnings is not None:
        grouped = (
            _lazy(warnings)
            .group_by(pl.col("category").fill_null("other"))
            .len()
            .collect()
            .sort("len", descending=True)
        )
        by_category = {str(row[0]): int(row[1]) for row in grouped.iter_rows()}
    jit = t.get("jit_compile")
    jit_by_what: dict[str, int] = {}
    if jit is not None and "what" in _columns(jit):
        grouped = (
            _lazy(jit)
            .group_by(pl.col("what").fill_null("other").str.split(":").list.first())
            .len()
            .collect()
            .sort("len", descending=True)
        )
        jit_by_what = {str(w): int(n) for w, n in grouped.iter_rows()}
    no_content = no_content_of(result.lines, result.scores)
    empty = no_content is not None
    return {
        "source": result.source,
        "engine": None if empty else result.engine,
        "engine_scores": {} if empty else result.scores,
        "no_content": no_content,
        "version": first_value(t, "config", "version"),
        "model": first_value(t, "config", "model"),
        "start": start.isoformat(sep=" ") if start else None,
        "end": end.isoformat(sep=" ") if end else None,
        "duration_s": (end - start).total_seconds() if start and end else None,
        "ranks": _ranks(t),
        "lines": result.lines,
        "typed_lines": result.typed_lines,
        "coverage": None if empty else result.coverage,
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
        "times": result.times.as_dict(),
        "startup": startup(t, engine=result.engine, start=start),
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
        "unparsed_evidence": unparsed_evidence(result),
        **drift_facts(result),
    }


def unparsed_evidence(result: IngestResult) -> list[dict[str, Any]]:
    """The reported line families (`Decode batch`, vLLM stats, OOM, ...) seen among the unparsed
    lines but not typed: the log holds that evidence in a form no rule read, however few lines."""
    if result.grammar is None or not result.engine:
        return []
    return [
        {"kind": f.kind, "lines": f.lines, "first_line": f.first_line, "example": f.example}
        for f in unparsed_families(result.tables, result.grammar, result.engine)
    ]


def render_unparsed_evidence(facts: Mapping[str, Any]) -> list[str]:
    """One warning per untyped family, unless a drift warning already names its first line."""
    told = {w["first_line"] for w in facts.get("drift") or []}
    return [
        for_terminal(
            f"warning: {f['lines']:,} line(s) look like {f['kind']} lines but no rule typed them "
            f"(first at line {f['first_line']:,}); their figures are missing, not absent: "
            f"`logparse unknown {facts['source']}` shows them"
        )
        for f in facts.get("unparsed_evidence") or []
        if f["first_line"] not in told
    ]


def time_basis(times: Mapping[str, Any]) -> str:
    """How the log's times were made, in a few words (what was inferred, in which zone)."""
    parts = []
    if times.get("exact"):
        parts.append(f"{times['exact']:,} lines with a zone (exact)")
    if times.get("naive") or times.get("year_inferred") or times.get("date_inferred"):
        parts.append(f"no zone printed: read as {times.get('zone', 'UTC')}")
    if times.get("year_inferred"):
        parts.append(f"year inferred for {times['year_inferred']:,} lines from {times.get('inferred_from')}")
    if times.get("date_inferred"):
        parts.append(f"date inferred for {times['date_inferred']:,} lines from {times.get('inferred_from')}")
    if times.get("rollovers"):
        parts.append(f"{times['rollovers']} year/day rollover(s)")
    return "; ".join(parts) or "-"


def no_content_of(lines: int, scores: Mapping[str, float]) -> str | None:
    """Why a log of `lines` lines, read with detection `scores`, names no engine, or None.

    An empty or blank input is read with a stand-in grammar and no detection scores
    (`ingest.run.choose_engine`): nothing in it names an engine. `EMPTY_FILE`, `BLANK_LINES_ONLY`.
    """
    if not lines:
        return EMPTY_FILE
    return BLANK_LINES_ONLY if not scores else None


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


def kv_pool_text(startup: Mapping[str, Any]) -> str:
    """The KV pool row: tokens and memory, per pool on a hybrid model (each pool's own), the
    binding pool named."""
    pools = startup.get("kv_pools") or []
    if not pools:
        return (
            f"{_fmt(startup.get('kv_pool_tokens'), 'tokens')}, {_fmt(startup.get('kv_gib'), 'GiB')}, "
            f"max concurrency {_fmt(startup.get('max_concurrency'))}"
        )
    parts = []
    for pool in pools:
        unit = "states" if pool["pool"] == "mamba" else "tokens"
        peak = "" if pool.get("peak_usage") is None else f", peak usage {pool['peak_usage']:.2f}"
        parts.append(f"{pool['pool']} {_fmt(pool['tokens'], unit)} ({_fmt(pool['gib'], 'GiB')}{peak})")
    binding = startup.get("kv_binding_pool")
    return "; ".join(parts) + (
        f"; binding: {binding}" if binding else "; binding: not known (no usage printed)"
    )


def weights_text(startup: Mapping[str, Any]) -> str:
    """The weights row: size, load time (`~`, and why, when read off a progress bar), download."""
    load = _fmt(startup.get("weight_load_s"), "s")
    if startup.get("weight_load_from_bar") and startup.get("weight_load_s") is not None:
        load = f"~{load} (estimated: read off the shard progress bar, whole seconds)"
    text = f"{_fmt(startup.get('weights_gib'), 'GiB')}, loaded in {load}"
    if startup.get("weight_download_s") is not None:
        text += f" (after downloading for {_fmt(startup['weight_download_s'], 's')})"
    return text


def _breakdown(counts: Mapping[str, int]) -> str:
    return f" ({', '.join(f'{k} {v}' for k, v in counts.items())})" if counts else ""


def render_headline(facts: Mapping[str, Any]) -> str:
    """The headline as aligned text for a terminal."""
    s, c = facts["startup"], facts["counts"]
    why = facts.get("no_content")
    engine = facts["engine"] or "-"
    coverage = "-" if facts["coverage"] is None else f"{facts['coverage']:.1%}"
    rows = [
        ("log", facts["source"]),
        (
            "engine",
            engine + (f" {facts['version']}" if facts["version"] else "") + (f" ({why})" if why else ""),
        ),
        ("model", _fmt(facts["model"])),
        ("time span", f"{_fmt(facts['start'])} .. {_fmt(facts['end'])} ({_fmt(facts['duration_s'], 's')})"),
        ("times", time_basis(facts.get("times") or {})),
        ("ranks", ", ".join(facts["ranks"]) or "-"),
        ("lines", f"{facts['lines']:,} ({facts['typed_lines']:,} typed, coverage {coverage})"),
        ("weights", weights_text(s)),
        ("KV pool", kv_pool_text(s)),
        ("CUDA graphs", f"{_fmt(s['cuda_graph_s'], 's')}, {_fmt(s['cuda_graph_gib'], 'GiB')}"),
        ("compile", _fmt(s["compile_s"], "s")),
        ("engine init", _fmt(s["init_s"], "s") + (" (inferred)" if s.get("init_s_inferred") else "")),
        (
            "ready after",
            ("≥ " if s.get("ready_s_approx") and s.get("ready_s") is not None else "")
            + _fmt(s.get("ready_s"), "s"),
        ),
        ("OOM", f"{c['oom']} ({c['oom_recovered']} recovered)"),
        ("preemptions", str(c["preemptions"])),
        ("retractions", str(c["retractions"])),
        ("JIT/compile", f"{c['jit_lines']} lines" + _breakdown(facts["jit_by_what"])),
        ("warnings", ", ".join(f"{k} {v}" for k, v in facts["warnings_by_category"].items()) or "0"),
    ]
    inp = facts["input"]
    read = ReadStats(
        invalid_utf8_lines=inp["invalid_utf8_lines"],
        nul_lines=inp["nul_lines"],
        truncated_last_line=inp["truncated_last_line"],
        notes=list(inp["notes"]),
    )
    problems = read_problems(read)
    if problems:
        rows.append(("input", "; ".join(message for _, message in problems)))
    width = max(len(k) for k, _ in rows)
    out = [f"{k:<{width}}  {for_terminal(v)}" for k, v in rows]  # values hold text from the log
    kinds = facts["lines_per_kind"]
    if kinds:
        out.append("")
        out.append("lines per kind")
        kw = max(len(k) for k in kinds)
        out.extend(f"  {for_terminal(k):<{kw}}  {v:>10,}" for k, v in kinds.items())
    out.extend(render_drift(facts))
    out.extend(render_unparsed_evidence(facts))
    return "\n".join(out)


class HeadlinePrinter:
    """Prints each log's headline as it is ready: text (`table`), a stderr count line per log
    (`jsonl`, whose events go to stdout), or one JSON document at the end (`json`)."""

    def __init__(self, fmt: str, *, several: bool, echo: Callable[..., None]) -> None:
        self.fmt = fmt
        self.several = several
        self.echo = echo
        self.printed: list[dict[str, Any]] = []

    def show(self, facts: dict[str, Any]) -> None:
        """One log's headline is ready."""
        if self.fmt == "table":
            self.echo(("\n" if self.printed else "") + render_headline(facts))
        elif self.fmt == "jsonl":
            self.echo(render_event_count(facts), err=True)
        self.printed.append(facts)

    def finish(self) -> None:
        """Every log is read: the JSON document (one object for one log, else a list)."""
        if self.fmt == "json":
            one = len(self.printed) == 1 and not self.several
            self.echo(json.dumps(self.printed[0] if one else self.printed, indent=2, default=str))


def render_event_count(facts: Mapping[str, Any]) -> str:
    """One line for stderr after a log's events were streamed: how many, and from which engine."""
    why = facts.get("no_content")
    basis = (
        f"{why}, no engine"
        if why
        else f"{facts['engine'] or 'no engine'}, coverage {facts['coverage'] or 0:.1%}"
    )
    return for_terminal(f"{facts['source']}: {facts['lines']:,} events ({basis})")


def ingest_headlines(
    logs: Sequence[str],
    *,
    out: Path | None = None,
    force: bool = False,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    reference: bool = False,
    jobs: int | None = None,
    jsonl: TextIO | None = None,
    on_headline: Callable[[dict[str, Any]], None] | None = None,
    on_error: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Ingest `logs` (files, folders, globs, `-`) and give each log's headline facts, in order.

    One log goes to `out/<kind>.parquet`; several to a dataset `out/run=<name>/kind=<kind>/`; without
    `out` the tables go to a scratch folder that is removed. With `jsonl`, every event is also
    written there as a JSON line (logs one after another). Raises `PartialFailure` when some logs
    could not be read (after the others are done)."""
    import tempfile

    from logparse.ingest import Job, failures, ingest_many, ingest_to_folder
    from logparse.ingest.progress import Progress, wanted
    from logparse.ingest.reader import input_size
    from logparse.ingest.sinks import JsonlSink
    from logparse.store import expand_inputs, output_folder, remove_tree, run_names

    files, several = expand_inputs(logs)
    facts: list[dict[str, Any]] = []

    def done(result: Any, run: str | None = None) -> None:
        shown = headline(result)
        if run is not None:
            shown["run"] = run
        facts.append(shown)
        if on_headline is not None:
            on_headline(shown)

    scratch = Path(tempfile.mkdtemp(prefix="logparse-")) if out is None else None
    try:
        folder_cm = (
            output_folder(out, force=force, sources=files) if out is not None else nullcontext(scratch)
        )
        with folder_cm as folder:
            assert folder is not None
            if not several or jsonl is not None:
                for log, name in zip(files, run_names(files)):
                    target = folder / f"run={name}" if several else folder
                    bar = Progress() if wanted(input_size(log)) else None
                    try:
                        done(
                            ingest_to_folder(
                                log,
                                target,
                                engine=engine,
                                year=year,
                                tz=tz,
                                patterns=patterns,
                                reference=reference,
                                workers=jobs,
                                layout="hive" if several else "flat",
                                extra_sink=None if jsonl is None else JsonlSink(jsonl),
                                progress=bar,
                            ),
                            name if several else None,
                        )
                    finally:
                        if bar is not None:
                            bar.close()
                return facts
            names = run_names(files)
            todo = [
                Job(
                    log=f,
                    run=n,
                    folder=folder / f"run={n}",
                    engine=engine,
                    year=year,
                    tz=tz,
                    patterns=tuple(str(p) for p in patterns),
                    reference=reference,
                )
                for f, n in zip(files, names)
            ]
            pending: dict[int, Any] = {}
            shown = 0

            def finished(i: int, job_result: Any) -> None:
                nonlocal shown
                pending[i] = job_result
                while shown in pending:
                    item = pending.pop(shown)
                    if item.error:
                        if on_error is not None:
                            on_error(f"{item.job.log}: {item.error} (skipped)")
                    else:
                        done(item.result, item.job.run)
                    shown += 1

            results = ingest_many(todo, parallel=jobs, on_done=finished)
        problem = failures(results)
        if problem is not None:
            raise problem
        return facts
    finally:
        if scratch is not None:
            remove_tree(scratch)
