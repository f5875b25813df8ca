"""`build_report`: logs and benchmark files in, one offline HTML page plus PNG/SVG/CSV out."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from logparse.errors import InputError, LogparseError
from logparse.escape import for_terminal
from logparse.report import findings as F
from logparse.report import frames as R
from logparse.report.digest import slug
from logparse.report.facts import run_facts
from logparse.report.sections import ACROSS, ANSWER, CLIENT
from logparse.store import check_writable, output_dir, write_csv

if TYPE_CHECKING:
    from logparse.bench.analyze import BenchAnalysis


@dataclass
class ChartItem:
    """One chart of the report: where it goes (`ANSWER`, `ACROSS`, `CLIENT` or a run's name),
    what it says, and the frames it encodes."""

    id: str
    section: str
    title: str
    caption: str
    chart: Any
    data: dict[str, pl.DataFrame]
    spec: dict[str, Any] | None = None
    files: dict[str, str] = field(default_factory=dict)  # kind -> path relative to the report dir

    @property
    def short(self) -> str:
        """The chart's kind in a word or two (for the table of contents)."""
        return self.title.split(":", 1)[0]


@dataclass
class Note:
    """Something the reader should know about the report itself (a chart skipped, a log not analysed)."""

    section: str
    message: str
    severity: str = "info"


@dataclass
class Report:
    """What `build_report` wrote and the objects it was built from."""

    out_dir: Path
    title: str
    runs: list[R.LogRun]
    bench: BenchAnalysis | None
    bench_files: list[str]
    charts: list[ChartItem]
    notes: list[Note]
    facts: list[dict[str, Any]]
    tables: dict[str, pl.DataFrame]
    core: pl.DataFrame | None = None  # `logparse compare`'s Core Result, when it is defined

    @property
    def index(self) -> Path:
        """The HTML page."""
        return self.out_dir / "index.html"


class Progress:
    """One line per step on stderr, only when stderr is a terminal (or when forced)."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.t0 = time.monotonic()

    def __call__(self, message: str) -> None:
        if self.enabled:
            print(
                f"[{time.monotonic() - self.t0:6.1f}s] {for_terminal(message)}", file=sys.stderr, flush=True
            )


def _read_counter(
    progress: Callable[[str], None], every: int = 64 << 20
) -> Callable[[int, int | None], None]:
    """An `ingest` progress callback that reports every `every` bytes read."""
    shown = 0

    def count(done: int, total: int | None) -> None:
        nonlocal shown
        if done - shown >= every:
            shown = done
            of = f" of {total / 1e6:,.0f}" if total else ""
            progress(f"  {done / 1e6:,.0f}{of} MB read")

    return count


STDIN = "-"


def log_inputs(logs: Sequence[str | Path]) -> list[str]:
    """The logs of the report, as `logparse summary` reads them: a log file, `-` (standard input,
    once), a folder of one log's tables, or a dataset (`logparse ingest DIR --out DATASET`), which
    stands for each of its runs."""
    from logparse.analysis.fleet import dataset_runs

    if sum(str(log) == STDIN for log in logs) > 1:
        raise InputError("standard input ('-') can be read once only; give the other logs as files")
    out: list[str] = []
    for log in logs:
        runs = dataset_runs(log)
        out += [str(run) for run in runs] if runs else [str(log)]
    return out


def log_label(path: str | Path) -> str:
    """A log's short name: the file name without `.gz`/`.log`/`.txt`, a dataset run's name, `stdin`."""
    from logparse.analysis.fleet import run_label

    if str(path) == STDIN:
        return "stdin"
    stem = run_label(Path(str(path)))
    for suffix in (".gz", ".log", ".txt"):
        stem = stem.removesuffix(suffix)
    return stem


def load_runs(
    logs: Sequence[str | Path],
    *,
    progress: Callable[[str], None],
    engine: str = "auto",
    patterns: Sequence[str | Path] = (),
    year: int | None = None,
    tz: str | None = None,
) -> tuple[list[R.LogRun], list[Note]]:
    """Ingest and analyse every log (see `log_inputs` for what a log may be). Unreadable files
    raise; a log whose analysis fails is kept with its error, so the report still shows what
    could be read. `engine` is `auto` or the engine that wrote every log file; `patterns`,
    `year` and `tz` are passed to `logparse.ingest`."""
    from logparse.analysis._frames import naive_utc
    from logparse.analysis.analyze import analyze
    from logparse.headline import no_content_of
    from logparse.ingest import ingest

    runs: list[R.LogRun] = []
    notes: list[Note] = []
    names: set[str] = set()
    logs = log_inputs(logs)
    for i, path in enumerate(logs, 1):
        progress(f"reading {path} ({i}/{len(logs)})")
        result = ingest(
            path,
            engine=engine,
            year=year,
            tz=tz,
            patterns=patterns,
            progress=_read_counter(progress) if getattr(progress, "enabled", False) else None,
        )
        no_content = no_content_of(result.lines, result.scores)
        engine_shown = "-" if no_content else result.engine  # a stand-in grammar read it: no finding
        name = log_label(path) if no_content else f"{result.engine} {log_label(path)}"
        if name in names:
            name = f"{name} ({i})"
        names.add(name)
        progress(f"analysing {name}: {result.lines:,} lines")
        analysis, error = None, None
        try:
            analysis = analyze(
                result.tables,
                engine=result.engine,
                source=name,
                read_stats=result.stats,
                times=result.times,
                grammar=result.grammar,
            )
        except LogparseError as exc:
            error = str(exc)
        except Exception as exc:
            error = f"analysis failed: {type(exc).__name__}: {exc}"
        if error is not None:
            notes.append(Note(name, f"not analysed: {error}", "warning"))
        elif no_content:
            notes.append(Note(name, f"{no_content}: no engine, nothing to chart", "info"))
        runs.append(
            R.LogRun(
                path="standard input" if path == STDIN else str(path),
                name=name,
                engine=engine_shown,
                tables=naive_utc(result.tables),  # type: ignore[arg-type]  # as the analysis sees them
                analysis=analysis,
                error=error,
            )
        )
    return runs, notes


def _evidence_tables(runs: Sequence[R.LogRun]) -> pl.DataFrame | None:
    """Every figure that is not exact, per log: what it is, how it was obtained, its bound."""
    from logparse.analysis.figures import evidence_frame

    parts = [
        evidence_frame(r.analysis)
        .filter(pl.col("confidence") != "exact")
        .select(pl.lit(r.name).alias("log"), pl.all())
        for r in runs
        if r.analysis is not None
    ]
    frame = pl.concat(parts, how="vertical_relaxed") if parts else None
    return None if frame is None or frame.is_empty() else frame


def _guard(
    items: list[ChartItem], notes: list[Note], section: str, what: str, make: Callable[[], ChartItem | None]
) -> None:
    """Build one chart; a failure becomes a note instead of ending the report."""
    try:
        item = make()
    except Exception as exc:
        notes.append(Note(section, f"{what} chart skipped: {type(exc).__name__}: {exc}", "warning"))
        return
    if item is not None:
        items.append(item)


def log_charts(runs: Sequence[R.LogRun], notes: list[Note]) -> list[ChartItem]:
    """The server-log charts: degradation across logs (the answer), the overlays, each log's own."""
    items: list[ChartItem] = []
    analysed = [r for r in runs if r.analysis is not None]
    if analysed:
        _guard(items, notes, ACROSS, "degradation", lambda: _degradation_item(analysed, notes))
        _guard(items, notes, ACROSS, "decode overlay", lambda: _decode_overlay_item(analysed))
        _guard(items, notes, ACROSS, "prefill overlay", lambda: _prefill_overlay_item(analysed))
    for run in runs:
        if run.analysis is None:
            continue
        _log_charts(run, items, notes)
    return items


def _degradation_item(analysed: Sequence[R.LogRun], notes: list[Note]) -> ChartItem | None:
    from logparse import charts as C

    deg = R.degradation_frame(analysed)
    if deg.is_empty():
        notes.append(
            Note(
                ACROSS,
                "degradation chart skipped: no log has a trusted stable decode window (see the diagnostics)",
            )
        )
        return None
    ratios = R.degradation_ratios(deg)
    drawn = set(deg.get_column("source").to_list())
    for name in [r.name for r in analysed if r.name not in drawn]:
        notes.append(Note(name, "left out of the degradation chart: no trusted stable window"))
    return ChartItem(
        "degradation",
        ANSWER,
        "Decode throughput against context length",
        F.degradation_caption(deg, ratios),
        C.degradation_chart(
            deg,
            subtitle="per request, stable decode window of each run; points labelled with N; "
            "wheel: zoom, drag: pan, legend: pick",
        ),
        {"degradation": deg, "ratios": ratios},
    )


def _decode_overlay_item(analysed: Sequence[R.LogRun]) -> ChartItem | None:
    from logparse import charts as C
    from logparse.report import overlays as O

    frame = O.decode_overlay_frame(analysed)
    if frame.get_column("run").n_unique() < 2:
        return None  # one line: the run's own timeline shows it
    return ChartItem(
        "overlay-decode",
        ACROSS,
        "Decode throughput from each phase's start, every run",
        O.decode_overlay_caption(analysed),
        C.decode_overlay_chart(
            frame,
            subtitle="aligned at each phase's start; thick: the stable window; gaps: the log printed "
            "nothing; wheel: zoom, drag: pan, legend: pick runs (shift: several)",
        ),
        {"decode": frame},
    )


def _prefill_overlay_item(analysed: Sequence[R.LogRun]) -> ChartItem | None:
    from logparse import charts as C
    from logparse.report import overlays as O

    frame, without = O.prefill_overlay_frame(analysed)
    if frame.is_empty() or frame.get_column("run").n_unique() < 2:
        return None
    return ChartItem(
        "overlay-prefill",
        ACROSS,
        "Prefill chunk throughput against cached context, every run",
        O.prefill_overlay_caption(frame, without),
        C.prefill_overlay_chart(
            frame,
            subtitle="one line per request, every request from 0 cached tokens; "
            "wheel: zoom, drag: pan, legend: pick runs",
        ),
        {"chunks": frame},
    )


MEMORY_UNIT = "GiB"  # vLLM prints GiB; SGLang prints "GB" but divides by 2**30 (as `summary` says)


def memory_subtitle(engine: str) -> str:
    """The memory chart's subtitle: the unit, and for SGLang why its "GB" is shown as GiB."""
    printed = 'SGLang prints "GB" but counts bytes / 2^30' if engine == "sglang" else "as the engine printed"
    return f"{MEMORY_UNIT} ({printed}); free = what the engine left unallocated"


def _log_charts(run: R.LogRun, items: list[ChartItem], notes: list[Note]) -> None:
    from logparse import charts as C

    a = run.analysis
    assert a is not None
    sid, sec = slug(run.name), run.name

    def timeline() -> ChartItem | None:
        if a.samples.is_empty():
            notes.append(Note(sec, "timeline skipped: the log has no decode stats lines"))
            return None
        samples, windows, events = R.timeline_frames(run)
        return ChartItem(
            f"timeline-{sid}",
            sec,
            f"Decode timeline: {run.name}",
            F.timeline_caption(run, events),
            C.decode_timeline_chart(
                samples,
                windows=windows,
                events=R.thin(events, max_points=R.MAX_POINTS),  # the caption counts them all
                heading=f"Decode timeline: {run.name}",
                subtitle="stable windows shaded (N=k* when untrusted); OOM, preemption and JIT events as rules; "
                + R.gap_note(run),
            ),
            {"samples": samples, "windows": windows, "events": events},
        )

    def kv() -> ChartItem | None:
        got = R.kv_frames(run)
        if got is None:
            return None
        usage, pool, unit = got
        return ChartItem(
            f"kv-{sid}",
            sec,
            f"KV cache usage: {run.name}",
            F.kv_caption(run, usage, unit),
            C.kv_usage_chart(
                usage,
                pool,
                unit=unit,
                heading=f"KV cache usage: {run.name}",
                subtitle=R.gap_note(run),
            ),
            {"usage": usage, "pool": pool},
        )

    def prefill() -> ChartItem | None:
        chunks = R.prefill_frame(run)
        if chunks.is_empty():
            return None
        return ChartItem(
            f"prefill-{sid}",
            sec,
            f"Prefill chunks: {run.name}",
            F.prefill_caption(chunks, run),
            C.prefill_chunk_chart(
                chunks,
                heading=f"Prefill throughput across chunks: {run.name}",
                subtitle="one line per request: each chunk's input throughput "
                "against the context cached before it",
            ),
            {"chunks": chunks},
        )

    def spec_items() -> None:
        if a.spec.is_empty():
            return
        acc, positions, draft = R.spec_frames(run)
        if not acc.is_empty():
            items.append(
                ChartItem(
                    f"spec-accept-{sid}",
                    sec,
                    f"Acceptance length: {run.name}",
                    F.spec_caption(run),
                    C.spec_acceptance_chart(
                        acc,
                        heading=f"Acceptance length over time: {run.name}",
                        subtitle="1.0 = only the bonus token, no draft accepted",
                    ),
                    {"acceptance": acc},
                )
            )
        if not positions.is_empty():
            items.append(
                ChartItem(
                    f"spec-position-{sid}",
                    sec,
                    f"Per-position acceptance: {run.name}",
                    F.position_caption(positions),
                    C.spec_position_chart(
                        positions, heading=f"Acceptance rate per draft position: {run.name}"
                    ),
                    {"positions": positions},
                )
            )
        if not draft.is_empty():
            items.append(
                ChartItem(
                    f"spec-draft-{sid}",
                    sec,
                    f"Drafted vs accepted: {run.name}",
                    F.draft_caption(draft),
                    C.spec_draft_chart(draft, heading=f"Drafted vs accepted draft tokens: {run.name}"),
                    {"draft": draft},
                )
            )

    def coldstart() -> ChartItem | None:
        spans, instants = R.coldstart_frames(run)
        if spans.is_empty() and instants.is_empty():
            return None
        if spans.is_empty():
            notes.append(Note(sec, "cold-start chart skipped: no stage printed its duration"))
            return None
        return ChartItem(
            f"coldstart-{sid}",
            sec,
            f"Cold start: {run.name}",
            F.coldstart_caption(run),
            C.coldstart_chart(
                spans,
                instants,
                heading=f"Cold start per rank: {run.name}",
                subtitle="bars end at the line that printed the stage's duration",
            ),
            {"spans": spans, "instants": instants},
        )

    def memory() -> ChartItem | None:
        frame = R.memory_frame(run)
        if frame.is_empty():
            return None
        return ChartItem(
            f"memory-{sid}",
            sec,
            f"GPU memory per rank: {run.name}",
            F.memory_caption(frame, MEMORY_UNIT),
            C.memory_split_chart(
                frame,
                unit=MEMORY_UNIT,
                heading=f"GPU memory per rank: {run.name}",
                subtitle=memory_subtitle(run.engine),
            ),
            {"memory": frame},
        )

    _guard(items, notes, sec, "timeline", timeline)
    _guard(items, notes, sec, "KV usage", kv)
    _guard(items, notes, sec, "prefill", prefill)

    try:
        spec_items()
    except Exception as exc:
        notes.append(
            Note(sec, f"speculative-decoding charts skipped: {type(exc).__name__}: {exc}", "warning")
        )
    _guard(items, notes, sec, "cold-start", coldstart)
    _guard(items, notes, sec, "memory", memory)


def core_result_table(runs: Sequence[R.LogRun], notes: list[Note]) -> pl.DataFrame | None:
    """`logparse compare`'s Core Result of the analysed logs (stable decode per engine, input
    length and N, who leads by how much, degradation), or None with a note saying why it is
    missing; each log it leaves out is a note saying why (`compare.core_result_left_out`)."""
    from logparse.analysis.compare import (
        compare_degradation,
        compare_rows,
        core_result_frame,
        core_result_left_out,
    )

    analysed = [r.analysis for r in runs if r.analysis is not None]
    if len(analysed) < 2:
        return None
    try:
        rows = compare_rows(analysed)
        core = core_result_frame(rows, compare_degradation(rows))
        left = core_result_left_out(rows) if core is not None else []
    except Exception as exc:  # the report goes on without it, as without a chart that fails
        notes.append(Note(ACROSS, f"Core Result skipped: {type(exc).__name__}: {exc}", "warning"))
        return None
    if core is None:
        notes.append(
            Note(
                ACROSS,
                "Core Result not shown: it needs trusted stable windows of two engines "
                "(as `logparse compare`)",
            )
        )
    notes.extend(Note("across logs", line) for line in left)
    return core


def bench_charts(bench: BenchAnalysis, notes: list[Note]) -> list[ChartItem]:
    """The client-benchmark charts."""
    from logparse import charts as C

    items: list[ChartItem] = []
    sec = CLIENT

    def verdict() -> ChartItem | None:
        frame = R.slo_frame(bench)
        if frame.is_empty():
            return None
        basis = "P90" if "P90" in frame.get_column("basis").to_list() else frame.get_column("basis")[0]
        return ChartItem(
            "bench-slo-verdict",
            ANSWER,
            f"Client SLOs at {basis}",
            F.slo_caption(bench),
            C.slo_heatmap_chart(
                frame.filter(pl.col("basis") == basis).drop("basis"),
                heading=f"Client SLOs at {basis}: which concurrency each configuration serves",
                subtitle=(
                    f"TTFT ≤ {bench.settings.get('slo_ttft_ms', 1000):g} ms, per-user TPS ≥ "
                    f"{bench.settings.get('slo_tps', 15):g} tok/s; marks: TTFT then TPS"
                ),
                cell=(40, 22),
            ),
            {"slo": frame.filter(pl.col("basis") == basis)},
        )

    def metrics() -> ChartItem | None:
        frame = R.bench_metric_frame(bench)
        if frame.is_empty():
            notes.append(Note(sec, "metrics chart skipped: no row has a concurrency level"))
            return None
        slo = R.bench_slo_frame(bench)
        return ChartItem(
            "bench-metrics",
            sec,
            "Client metrics against concurrency",
            F.bench_metrics_caption(bench),
            C.bench_metrics_chart(frame, slo=slo, subtitle="solid: mean, dashed: P90; red: the SLOs"),
            {"metrics": frame, "slo": slo},
        )

    def aggregate() -> ChartItem | None:
        agg, peaks = R.aggregate_frames(bench)
        if agg.is_empty():
            return None
        return ChartItem(
            "bench-aggregate",
            sec,
            "Aggregate output",
            F.aggregate_caption(bench),
            C.aggregate_output_chart(
                agg, peaks=peaks, subtitle="per-user TPS (mean) × concurrency; circles: peaks"
            ),
            {"aggregate": agg, "peaks": peaks},
        )

    def capacity() -> ChartItem | None:
        frame = R.capacity_frame(bench)
        if frame.get_column("value").drop_nulls().is_empty():
            notes.append(
                Note(sec, "capacity chart skipped: no configuration meets the SLOs at a tested level")
            )
            return None
        think = bench.settings.get("think_s", 45.0)
        return ChartItem(
            "bench-capacity",
            sec,
            "Capacity: C_max and users",
            F.capacity_caption(bench),
            C.capacity_chart(frame, subtitle=f"N = C_max × (1 + {think:g} s / mean latency at C_max)"),
            {"capacity": frame},
        )

    def speedup() -> ChartItem | None:
        sp, be = R.speedup_frames(bench)
        if sp.is_empty():
            return None
        return ChartItem(
            "bench-spec-speedup",
            sec,
            "Speculative decoding speedup",
            F.speedup_caption(bench),
            C.spec_speedup_chart(
                sp,
                break_even=be,
                subtitle="spec / direct per-user TPS (mean); dashed verticals: interpolated break-even",
            ),
            {"speedup": sp, "break_even": be},
        )

    def slo() -> ChartItem | None:
        frame = R.slo_frame(bench)
        if frame.is_empty():
            return None
        return ChartItem(
            "bench-slo",
            sec,
            "SLO compliance",
            F.slo_caption(bench),
            C.slo_heatmap_chart(
                frame,
                subtitle=(
                    f"TTFT ≤ {bench.settings.get('slo_ttft_ms', 1000):g} ms, per-user TPS ≥ "
                    f"{bench.settings.get('slo_tps', 15):g} tok/s; marks: TTFT then TPS"
                ),
            ),
            {"slo": frame},
        )

    for what, make in (
        ("SLO verdict", verdict),
        ("metrics", metrics),
        ("aggregate", aggregate),
        ("capacity", capacity),
        ("speedup", speedup),
        ("SLO", slo),
    ):
        _guard(items, notes, sec, what, make)
    return items


def report_tables(
    runs: Sequence[R.LogRun],
    bench: BenchAnalysis | None,
    charts: Sequence[ChartItem],
) -> dict[str, pl.DataFrame]:
    """The tables shown under the charts (already computed by the analysis and bench layers)."""
    tables: dict[str, pl.DataFrame] = {}
    phases, windows, spec = [], [], []
    for run in runs:
        a = run.analysis
        if a is None:
            continue
        log = pl.lit(run.name).alias("log")
        if not a.phases.is_empty():
            phases.append(
                a.phases.select(
                    log,
                    "phase",
                    "start",
                    "duration_s",
                    "concurrency",
                    *[
                        c
                        for c in ("segment", "input_tokens", "input_confidence", "n_requests")
                        if c in a.phases.columns
                    ],
                    "peak_running",
                )
            )
        if not a.windows.is_empty():
            windows.append(
                a.windows.select(
                    log,
                    "phase",
                    "concurrency",
                    "samples",
                    "duration_s",
                    "gen_tps_mean",
                    "gen_tps_min",
                    "gen_tps_max",
                    "cv",
                    "per_request_tps",
                    "ms_per_token",
                    "trusted",
                )
            )
        if not a.spec.is_empty():
            spec.append(
                a.spec.select(
                    log,
                    "phase",
                    "mean_accept_len",
                    "accept_rate",
                    "drafted_tps",
                    "accepted_tps",
                    "wasted_draft_pct",
                )
            )
    evidence = _evidence_tables(runs)
    if evidence is not None:
        tables["figures and their evidence"] = evidence
    starts = [
        r.analysis.segments.select(pl.lit(r.name).alias("log"), pl.all())
        for r in runs
        if r.analysis is not None and r.analysis.segments.height > 1
    ]
    if starts:
        tables["engine starts"] = pl.concat(starts, how="vertical_relaxed")
    if phases:
        tables["phases"] = pl.concat(phases, how="vertical_relaxed")
    if windows:
        tables["stable windows"] = pl.concat(windows, how="vertical_relaxed")
    for item in charts:
        if item.id == "degradation" and not item.data["ratios"].is_empty():
            tables["degradation"] = item.data["ratios"]
    if spec:
        tables["speculative decoding"] = pl.concat(spec, how="vertical_relaxed")
    if bench is not None:
        tables["benchmark configurations"] = bench.configs.select(
            "config",
            "c_max_p90",
            "users_p90",
            "c_max_mean",
            "users_mean",
            "peak_aggregate_tps",
            "peak_aggregate_concurrency",
        )
        from logparse.bench.export import spec_table

        st = spec_table(bench)
        if not st.is_empty():
            tables["speculative break-even"] = st
        checks = bench.checks.filter(pl.col("severity") != "ok")
        if not checks.is_empty():
            tables["benchmark consistency checks"] = checks
    return tables


def _scalar_columns(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(
        [c for c, t in frame.schema.items() if not isinstance(t, (pl.List, pl.Array, pl.Struct))]
    )


def write_outputs(
    report: Report, *, images: bool, png_scale: float = 1.5, progress: Callable[[str], None]
) -> None:
    """Specs, PNG/SVG, CSV, index.html and summary.md under the report directory, which appears
    with all of them or not at all (see `logparse.store.output_dir`): a full disk leaves no
    folder of charts without its page."""
    with output_dir(report.out_dir) as tmp:
        _write_outputs(report, tmp, images=images, png_scale=png_scale, progress=progress)


def _write_outputs(
    report: Report, out: Path, *, images: bool, png_scale: float, progress: Callable[[str], None]
) -> None:
    from logparse.report import page, render

    for sub in ("charts", "tables"):
        (out / sub).mkdir()
    for i, item in enumerate(report.charts, 1):
        progress(f"rendering {item.id} ({i}/{len(report.charts)})")
        item.spec = render.spec(item.chart)
        if images:
            png, svg = render.write_chart_files(item.spec, out / "charts", item.id, scale=png_scale)
            item.files["png"] = f"charts/{png.name}"
            item.files["svg"] = f"charts/{svg.name}"
        for j, (part, frame) in enumerate(item.data.items()):
            name = item.id if j == 0 else f"{item.id}.{part}"
            write_csv(_scalar_columns(frame), out / "tables" / f"{name}.csv")
            item.files[f"csv:{part}"] = f"tables/{name}.csv"
    progress("writing index.html and summary.md")
    (out / report.index.name).write_text(page.render_html(report), encoding="utf-8")
    (out / "summary.md").write_text(page.render_markdown(report), encoding="utf-8")


def build_report(
    logs: Sequence[str | Path],
    bench_files: Sequence[str | Path],
    out_dir: str | Path,
    *,
    title: str | None = None,
    slo_ttft_ms: float = 1000.0,
    slo_tps: float = 15.0,
    think_s: float = 45.0,
    images: bool = True,
    png_scale: float = 1.5,
    progress: bool | None = None,
    engine: str = "auto",
    patterns: Sequence[str | Path] = (),
    year: int | None = None,
    tz: str | None = None,
) -> Report:
    """Write the report of `logs` and `bench_files` into `out_dir`.

    Parameters
    ----------
    logs
        vLLM / SGLang server logs (any number, also none): files, `-` for standard input (once),
        folders of a log's tables, datasets (each run a log of the report).
    bench_files
        Client benchmark result files (`logparse bench` formats; also none).
    out_dir
        Created if needed. Gets ``index.html`` (self-contained, works offline), ``charts/*.png``
        and ``*.svg``, ``tables/<chart>.csv`` (each chart's data) and ``summary.md``.
    title
        Page title (default: from the inputs).
    slo_ttft_ms, slo_tps, think_s
        SLOs and think time for the benchmark analysis (`logparse bench`).
    images
        Write PNG and SVG files (the HTML page does not need them).
    png_scale
        Pixel density of the PNG files (1.0 = the chart's CSS pixel size).
    progress
        Progress lines on stderr; default: only when stderr is a terminal.
    engine
        `auto` (detect) or the engine that wrote the log files (`vllm`, `sglang`).
    patterns, year, tz
        The user's grammar files, the year and the zone of stamps that print none (as for
        `logparse.ingest`).
    """
    if not logs and not bench_files:
        msg = "nothing to report: give at least one log or one --bench file"
        raise ValueError(msg)
    say = Progress(progress)
    out = Path(out_dir)
    check_writable(out)  # before the logs are read and the charts drawn, which can take minutes
    runs, notes = load_runs(logs, progress=say, engine=engine, patterns=patterns, year=year, tz=tz)
    bench = None
    if bench_files:
        from logparse.bench import analyze_bench, load_bench

        say(f"reading {len(bench_files)} benchmark file(s)")
        bench = analyze_bench(
            load_bench([Path(p) for p in bench_files]),
            slo_ttft_ms=slo_ttft_ms,
            slo_tps=slo_tps,
            think_s=think_s,
        )
    say("building charts")
    charts = log_charts(runs, notes) + (bench_charts(bench, notes) if bench is not None else [])
    if title is None:
        engines = sorted({r.engine for r in runs})
        title = "logparse report: " + (", ".join(r.name for r in runs) if runs else "client benchmark")
        if len(title) > 120:
            title = f"logparse report: {len(runs)} logs ({', '.join(engines)})"
    report = Report(
        out_dir=out,
        title=title,
        runs=runs,
        bench=bench,
        bench_files=[str(p) for p in bench_files],
        charts=charts,
        notes=notes,
        facts=[run_facts(r) for r in runs],
        tables=report_tables(runs, bench, charts),
        core=core_result_table(runs, notes),
    )
    write_outputs(report, images=images, png_scale=png_scale, progress=say)
    say(f"wrote {report.index}")
    return report
