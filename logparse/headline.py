"""The headline facts of one ingested log: what `logparse ingest` prints after parsing."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from logparse.analysis.clocks import clock_disagreement
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
    has no timestamp of its own, the last timestamped line before it (`time_at_line`); the engine
    starts (`segments.find_segments`) need the stats lines' numbers too. So: the start-up kinds
    whole; the stats kinds' (line_no, time); of every other kind, only its (line_no, time) up to
    the ready line, and then only when that line has no time; and one row holding the log's first
    time.
    """
    from logparse.analysis._frames import naive_utc
    from logparse.analysis.coldstart import ready_row
    from logparse.analysis.segments import STATS_KINDS

    tables = naive_utc(tables)
    view = {kind: _lazy(frame).collect() for kind, frame in tables.items() if kind in STARTUP_KINDS}
    # The stats lines tell a restart (loading again after serving) from a first start: of each run
    # of them between two start-up lines only the last one counts (`segments.find_segments`), and it
    # is also the last timestamped line before the start-up line after it. So the millions of
    # stats lines of a long log come down to one row per gap between start-up lines.
    breaks = sorted({int(n) for frame in view.values() for n in frame.get_column("line_no").to_list()})
    for kind, frame in tables.items():
        if kind in STATS_KINDS:
            view[kind] = _last_of_each_gap(_lazy(frame).select("line_no", "time"), breaks)
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


def _last_of_each_gap(rows: pl.LazyFrame, breaks: list[int]) -> pl.DataFrame:
    """Of `rows` (``line_no``, ``time``), the last row before each of `breaks` and the last of all."""
    line = pl.col("line_no")
    if not breaks:
        gap = pl.lit(0)
    elif hasattr(line, "bin_intervals"):  # polars >= 2: `cut` is deprecated
        gap = line.bin_intervals(breaks, labels=False)
    else:
        gap = line.cut(breaks, left_closed=True)
    return (
        rows.group_by(gap.alias("_gap"))
        .agg(pl.all().sort_by("line_no").last())
        .drop("_gap")
        .sort("line_no")
        .collect()
    )


def startup(tables: Mapping[str, Frame], *, engine: str, start: Any = None) -> dict[str, Any]:
    """The start-up figures of `summary` (`coldstart.startup_figures`), from eager or lazy tables.

    `start` is the log's first timestamp when the caller already has it (else it is computed).
    """
    return _startup_and_starts(tables, engine=engine, start=start)[0]


def _startup_and_starts(
    tables: Mapping[str, Frame], *, engine: str, start: Any = None, lines: int = 0
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`startup`, and every engine start's first and last line (`segments.find_segments`; the last
    start runs to line `lines`, the log's last)."""
    from logparse.analysis.coldstart import startup_figures
    from logparse.analysis.segments import find_segments

    if start is None:
        start = _time_span(tables)[0]
    view = _startup_tables(tables, start)
    starts = find_segments({k: v for k, v in view.items() if k != "_start"}).to_dicts()
    if starts:
        starts[-1]["last_line"] = max(starts[-1]["last_line"], lines)
    figures = startup_figures(view, engine=engine)
    if figures.get("kv_pools") and "decode_batch" in tables:
        # The binding pool needs the Decode lines' peak usage: their usage columns only.
        from logparse.analysis.pools import USAGE_OF, binding_pool, peak_usage, with_peaks

        decode = _lazy(tables["decode_batch"])
        present = [c for c in USAGE_OF.values() if c in _columns(tables["decode_batch"])]
        pools = with_peaks(figures["kv_pools"], peak_usage(decode.select(present).collect()))
        figures = {**figures, "kv_pools": pools, "kv_binding_pool": binding_pool(pools)}
    return figures, starts


def headline(result: IngestResult) -> dict[str, Any]:
    """Engine, version, span, ranks, line counts, coverage and the startup and trouble figures.

    `result` tables may be lazy scans of its Parquet files (`ingest.ingest_to_folder`).
    """
    t = result.tables
    # the core counted the span and the ranks while parsing; a folder read back has to scan for them
    start, end = result.span if result.span is not None else _time_span(t)
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
    figures, starts = _startup_and_starts(t, engine=result.engine, start=start, lines=result.lines)
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
        "ranks": result.ranks if result.ranks is not None else _ranks(t),
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
        "startup": figures,
        "starts": starts,
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
        "clock": clock_disagreement(t, zone=result.times.zone),
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


def _span(facts: Mapping[str, Any]) -> str:
    """`?2026-07-28 17:06:27+00:00 .. ?... (841 s)`: the span, its dates marked `?` when they come
    from the file's modification time (the `times` row says so in full)."""
    from logparse.analysis.text import date_mark

    mark = date_mark(facts.get("times")) if facts["start"] else ""
    return f"{mark}{_fmt(facts['start'])} .. {mark}{_fmt(facts['end'])} ({_fmt(facts['duration_s'], 's')})"


def _starts_row(starts: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """`engine starts` when the log holds several (a restart): where each begins; the start-up
    figures around it are the first start's."""
    if len(starts) < 2:
        return []
    where = ", ".join(f"{r['first_line']:,}-{r['last_line']:,}" for r in starts)
    return [
        (
            "engine starts",
            f"{len(starts)} (lines {where}); the start-up figures here are the first start's, "
            "`logparse summary` shows each",
        )
    ]


def _kv_pool(s: Mapping[str, Any]) -> str:
    """The headline's KV pool: its mark (`?` guessed, `~` estimated), size, max concurrency, and the
    range when the ranks print different pools; on a hybrid model each pool's own figures."""
    from logparse.analysis.summary import kv_pool_range_note, kv_pool_text

    spread = kv_pool_range_note(dict(s))
    if s.get("kv_pools"):
        return _pools_text(s, spread)
    text = (
        f"{kv_pool_text(dict(s))}, {_fmt(s['kv_gib'], 'GiB')}, max concurrency {_fmt(s['max_concurrency'])}"
    )
    if spread:
        text += f" ({spread})"
    confidence = ((s.get("evidence") or {}).get("kv_pool_tokens") or {}).get("confidence")
    if confidence and confidence != "exact":
        text += f" ({s['evidence']['kv_pool_tokens']['how']})"
    return text


def _pools_text(startup: Mapping[str, Any], spread: str | None) -> str:
    """The KV pools of a hybrid model: each pool's tokens and memory, the binding pool named; the
    ranks' range (`spread`, `kv_pool_range_note`) beside the full pool, whose lines it counts."""
    pools = startup.get("kv_pools") or []
    beside_full = spread is not None and any(pool["pool"] == "full" for pool in pools)
    parts = []
    for pool in pools:
        unit = "states" if pool["pool"] == "mamba" else "tokens"
        peak = "" if pool.get("peak_usage") is None else f", peak usage {pool['peak_usage']:.2f}"
        ranks = f"; {spread}" if beside_full and pool["pool"] == "full" else ""
        parts.append(f"{pool['pool']} {_fmt(pool['tokens'], unit)} ({_fmt(pool['gib'], 'GiB')}{peak}{ranks})")
    binding = startup.get("kv_binding_pool")
    text = "; ".join(parts) + (
        f"; binding: {binding}" if binding else "; binding: not known (no usage printed)"
    )
    return text if beside_full or spread is None else f"{text} ({spread})"


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


def input_problems(facts: Mapping[str, Any]) -> list[str]:
    """What went wrong reading the log (`reader.read_problems`): a truncated `.gz`, a cut last line,
    invalid UTF-8, NUL bytes, ... one message each."""
    inp = facts["input"]
    read = ReadStats(
        invalid_utf8_lines=inp["invalid_utf8_lines"],
        nul_lines=inp["nul_lines"],
        truncated_last_line=inp["truncated_last_line"],
        notes=list(inp["notes"]),
    )
    return [message for _, message in read_problems(read)]


def engine_note(facts: Mapping[str, Any]) -> str | None:
    """Why the engine is a close call, when the best two detection scores tie: the log was read
    with the engine whose grammar types more of its first lines (`detect.detect_engine`)."""
    ranked = sorted((facts.get("engine_scores") or {}).items(), key=lambda kv: -kv[1])
    if len(ranked) < 2 or ranked[0][1] != ranked[1][1] or facts.get("engine") is None:
        return None
    tied = " and ".join(f"{name} {score:.2f}" for name, score in ranked if score == ranked[0][1])
    return (
        f"ambiguous: the engines score alike ({tied}); read as {facts['engine']}, whose grammar "
        "types more of the log's first lines (--engine to choose)"
    )


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
            engine
            + (f" {facts['version']}" if facts["version"] else "")
            + (f" ({why})" if why else "")
            + (f" ({engine_note(facts)})" if engine_note(facts) else ""),
        ),
        ("model", _fmt(facts["model"])),
        ("time span", _span(facts)),
        ("times", time_basis(facts.get("times") or {})),
        ("ranks", ", ".join(facts["ranks"]) or "-"),
        ("lines", f"{facts['lines']:,} ({facts['typed_lines']:,} typed, coverage {coverage})"),
        *_starts_row(facts.get("starts") or []),
        ("weights", weights_text(s)),
        ("KV pool", _kv_pool(s)),
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
    problems = input_problems(facts)
    if problems:
        rows.append(("input", "; ".join(problems)))
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
    if facts.get("clock"):
        out.append(for_terminal(f"warning: {facts['clock']['message']}"))
    return "\n".join(out)


class HeadlinePrinter:
    """Prints each log's headline as it is ready: text (`table`; several logs: one row per log at
    the end), a stderr count line per log (`jsonl`, whose events go to stdout), or one JSON
    document at the end (`json`). Problems reading a log are warnings on stderr in every format."""

    def __init__(self, fmt: str, *, several: bool, echo: Callable[..., None]) -> None:
        self.fmt = fmt
        self.several = several
        self.echo = echo
        self.printed: list[dict[str, Any]] = []
        self.skipped: list[tuple[str, str]] = []
        self.damaged = 0  # logs with input problems (`--strict` fails on them)

    def show(self, facts: dict[str, Any]) -> None:
        """One log's headline is ready."""
        problems = input_problems(facts)
        for problem in problems:
            where = "" if problem.startswith(str(facts["source"])) else f"{facts['source']}: "
            self.echo(for_terminal(f"warning: {where}{problem}"), err=True)
        self.damaged += bool(problems)
        if self.fmt == "table" and not self.several:
            self.echo(("\n" if self.printed else "") + render_headline(facts))
        elif self.fmt == "jsonl":
            self.echo(render_event_count(facts), err=True)
        self.printed.append(facts)

    def skip(self, log: str, reason: str) -> None:
        """A log that could not be ingested (said on stderr now, and in its row at the end)."""
        where = "" if reason.startswith(log) else f"{log}: "
        self.echo(for_terminal(f"error: {where}{reason} (skipped)"), err=True)
        self.skipped.append((log, reason))

    def finish(self) -> None:
        """Every log is read: the table of several logs, or the JSON document (one object for
        one log, else a list)."""
        if self.fmt == "json":
            one = len(self.printed) == 1 and not self.several
            self.echo(json.dumps(self.printed[0] if one else self.printed, indent=2, default=str))
        elif self.fmt == "table" and self.several:
            self.echo(render_ingest_rows(self.printed, self.skipped))


def _problem_words(facts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(a word or two for the table, the whole message for the notes) of each problem of a log."""
    source = f"{facts['source']}: "
    out = [("input damaged", f"input: {p.removeprefix(source)}") for p in input_problems(facts)]
    note = engine_note(facts)
    if note:
        out.append(("engine ambiguous", f"engine {note}"))
    starts = facts.get("starts") or []
    if len(starts) > 1:
        out.append((f"{len(starts)} engine starts", f"engine starts: {_starts_row(starts)[0][1]}"))
    if facts.get("clock"):
        out.append(("clocks disagree", f"warning: {facts['clock']['message']}"))
    out += [("format drift", f"warning: {w['message']}") for w in facts.get("drift") or []]
    out += [("untyped lines", line) for line in render_unparsed_evidence({**facts, "drift": []})]
    return out


def render_ingest_rows(facts: Sequence[Mapping[str, Any]], skipped: Sequence[tuple[str, str]] = ()) -> str:
    """Several logs: one row per log (engine, lines, coverage, span, problems), a row per log that
    was skipped saying why, then each problem in full."""
    from logparse.analysis.text import date_mark, render_table

    body, notes = [], []
    for f in facts:
        name = str(f["source"])
        why = f.get("no_content")
        engine = f"- ({why})" if why else " ".join(str(p) for p in (f["engine"], f["version"]) if p)
        mark = date_mark(f.get("times"))
        span = "-" if not f["start"] else f"{mark}{str(f['start'])[:19]} +{_fmt(f['duration_s'], 's')}"
        coverage = "-" if f["coverage"] is None else f"{f['coverage']:.1%}"
        problems = _problem_words(f)
        words = list(dict.fromkeys(w for w, _ in problems))
        body.append([name, engine, f"{f['lines']:,}", coverage, span, ", ".join(words) or "-"])
        notes += [f"{name}: {message}" for _, message in problems]
    for log, reason in skipped:
        body.append([log, "-", "-", "-", "-", reason.removeprefix(f"{log}: ")])
    table = render_table(
        [[for_terminal(c) for c in row] for row in body],
        ["log", "engine", "lines", "coverage", "span", "problems"],
        align="llrrll",
    )
    return "\n".join([table, *([""] + [for_terminal(n) for n in notes] if notes else [])])


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
    jobs: int | None = None,
    jsonl: TextIO | None = None,
    on_headline: Callable[[dict[str, Any]], None] | None = None,
    on_error: Callable[[str, str], None] | None = None,
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
                                workers=jobs,
                                layout="hive" if several else "flat",
                                jsonl=jsonl,
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
                            on_error(item.job.log, item.error)
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
