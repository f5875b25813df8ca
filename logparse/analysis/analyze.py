"""Run the whole post-mortem of one log: samples → phases → windows → prefill, spec, diagnostics."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logparse.analysis import coldstart, diagnostics
from logparse.analysis import phases as phases_mod
from logparse.analysis import prefill as prefill_mod
from logparse.analysis import samples as samples_mod
from logparse.analysis import segments as segments_mod
from logparse.analysis import spec as spec_mod
from logparse.analysis import windows as windows_mod
from logparse.analysis._frames import first_non_null, naive_utc, rank_index, table
from logparse.analysis.identity import IDENTITY_KEYS, run_identity
from logparse.analysis.unparsed import UnparsedFamily, unparsed_families
from logparse.errors import InputError
from logparse.grammar import Grammar
from logparse.ingest.reader import ReadStats
from logparse.ingest.times import TimeFacts

SEGMENT_ROW_SCHEMA: dict[str, pl.DataType] = {
    **segments_mod.SEGMENT_SCHEMA,
    "analysed": pl.Boolean(),
    "phases": pl.Int64(),
    "ready": pl.Boolean(),
    "ready_s": pl.Float64(),
    "cuda_graph_s": pl.Float64(),
    "model": pl.String(),
    "tensor_parallel": pl.Int64(),
    "data_parallel": pl.Int64(),
    "speculative": pl.Boolean(),
    "quantization": pl.String(),
}


@dataclass
class Analysis:
    """Every table of one log's post-mortem (each a polars DataFrame)."""

    source: str
    engine: str
    version: str | None
    startup: dict[str, Any]
    samples: pl.DataFrame
    phases: pl.DataFrame
    windows: pl.DataFrame
    no_window: pl.DataFrame
    chunks: pl.DataFrame
    requests: pl.DataFrame
    prefill: pl.DataFrame
    spec: pl.DataFrame
    timeline: pl.DataFrame
    diagnostics: pl.DataFrame
    counts: dict[str, int]
    degradation: pl.DataFrame
    options: dict[str, Any] = field(default_factory=dict)
    no_phases_reason: str | None = None  # why `phases` is empty (None when it is not)
    empty: bool = False  # the log has no line at all (its engine is then a guess)
    identity: dict[str, Any] = field(default_factory=dict)  # `identity.run_identity` of the (first) start
    # One row per engine start (`SEGMENT_ROW_SCHEMA`); `startups` the start-up figures of each analysed one.
    segments: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SEGMENT_ROW_SCHEMA))
    startups: list[dict[str, Any]] = field(default_factory=list)
    unparsed: list[UnparsedFamily] = field(default_factory=list)  # evidence seen but not typed
    segment: int | None = None  # the one start analysed (`analyze(..., segment=K)`), else None
    times: dict[str, Any] = field(default_factory=dict)  # how the times were made (`TimeFacts.as_dict`)

    def frames(self) -> dict[str, pl.DataFrame]:
        """The tables to write as Parquet, by name."""
        return {
            "samples": self.samples,
            "phases": self.phases,
            "windows": self.windows,
            "segments": self.segments,
            "prefill_chunks": self.chunks,
            "prefill_requests": self.requests,
            "prefill": self.prefill,
            "spec": self.spec,
            "coldstart": self.timeline,
            "diagnostics": self.diagnostics,
            "degradation": self.degradation,
        }


def analyze(
    tables: Mapping[str, pl.DataFrame],
    *,
    engine: str,
    source: str = "",
    concurrency: int | None = None,
    idle_gap_s: float | None = None,
    min_samples: int = windows_mod.MIN_SAMPLES,
    min_duration_s: float = 20.0,
    spec_tokens: int | None = None,
    read_stats: ReadStats | None = None,
    grammar: Grammar | None = None,
    segment: int | None = None,
    times: TimeFacts | None = None,
) -> Analysis:
    """The post-mortem of one log's event tables.

    Parameters
    ----------
    tables
        `IngestResult.tables`.
    engine
        ``vllm`` or ``sglang``.
    source
        The log's name, for reports.
    concurrency
        N for every phase (default: the plateau of running requests per phase).
    idle_gap_s
        Silence read as idle between phases (default: a few stats intervals, see
        `phases.default_idle_gap`).
    min_samples, min_duration_s
        A stable window below either (or whose cv is above `windows.MAX_CV`) is reported as not
        trusted.
    spec_tokens
        Draft tokens per speculative step (default: from the printed server arguments).
    read_stats
        What reading the log counted (`IngestResult.stats`): a damaged input (a truncated
        `.gz`, invalid UTF-8, ...) becomes ``input_*`` warnings among the diagnostics.
    grammar
        The grammar the log was read with (`IngestResult.grammar`; default: the bundled one):
        its rules' anchors tell which unparsed lines are evidence no rule typed.
    segment
        Analyse only this engine start (1-based, `segments.find_segments`); default: every
        start, each on its own, phases numbered across them.
    times
        How the log's times were made (`IngestResult.times`): which dates are guesses (the
        summary marks them) and the zone naive stamps were read in (a wrapper's clock that
        disagrees with the engine's is a ``clock_disagreement`` warning).
    """
    from logparse.grammar import load_grammar

    if engine not in ("vllm", "sglang"):
        raise InputError(
            f"{source or 'log'}: post-mortem analysis supports vllm and sglang logs, not {engine!r}"
        )
    tables = naive_utc(tables)  # type: ignore[assignment]
    found = segments_mod.find_segments(tables)
    chosen = _chosen(found, segment, source)
    options: dict[str, Any] = {
        "concurrency": concurrency,
        "idle_gap_s": idle_gap_s,
        "min_samples": min_samples,
        "min_duration_s": min_duration_s,
        "spec_tokens": spec_tokens,
    }
    parts: list[Analysis] = []
    offset = 0
    for row in chosen.iter_rows(named=True):
        part = analyze_start(
            segments_mod.segment_tables(tables, row["first_line"], row["last_line"]),
            engine=engine,
            source=source,
            phase_offset=offset,
            **options,
        )
        offset += part.phases.height
        parts.append(part)
    families = unparsed_families(tables, grammar or load_grammar(), engine)
    return combine(
        parts,
        tables,
        engine=engine,
        source=source,
        segments=found,
        chosen=chosen,
        families=families,
        read_stats=read_stats,
        segment=segment,
        times=times,
    )


def _chosen(found: pl.DataFrame, segment: int | None, source: str) -> pl.DataFrame:
    """The segments to analyse: all, or the one asked for (an unknown one is an `InputError`)."""
    if segment is None:
        return found
    if not 1 <= segment <= found.height:
        raise InputError(
            f"{source or 'log'}: no engine start {segment}: the log holds {found.height} "
            f"(segments 1..{found.height})"
        )
    return found.filter(pl.col("segment") == segment)


def analyze_start(
    tables: Mapping[str, pl.DataFrame],
    *,
    engine: str,
    source: str = "",
    phase_offset: int = 0,
    concurrency: int | None = None,
    idle_gap_s: float | None = None,
    min_samples: int = windows_mod.MIN_SAMPLES,
    min_duration_s: float = 20.0,
    spec_tokens: int | None = None,
) -> Analysis:
    """The post-mortem of one engine start (the tables of one segment), its phases numbered
    after `phase_offset`. Findings about the whole log (reading problems, unparsed evidence,
    restarts) are `combine`'s."""
    from logparse.analysis.degradation import degradation
    from logparse.analysis.inputs import phase_inputs

    startup = coldstart.startup_figures(tables, engine=engine)
    ranks = samples_mod.rank_samples(tables, engine=engine, pool_tokens=startup["kv_pool_tokens"])
    samples = samples_mod.decode_samples(ranks)
    prefills = samples_mod.prefill_lines(tables) if engine == "sglang" else None
    # Lines before the server said it was ready are start-up (SGLang's warm-up request), not load.
    ready = coldstart.ready_row(tables)
    after_ready = pl.col("line_no") > (ready["line_no"] if ready is not None else 0)
    gap = idle_gap_s if idle_gap_s is not None else phases_mod.default_idle_gap(samples, engine=engine)
    breaks = _prefill_breaks(tables, ranks) if prefills is not None else None
    budget = _chunk_budget(tables)
    # Each request's input length (SGLang), traced over the whole run: a change of it cuts a phase.
    asked = (
        None
        if prefills is None
        else prefill_mod.request_inputs(
            prefill_mod.prefill_chunks(prefills.filter(after_ready), breaks=breaks, chunk_budget=budget)
        )
    )
    phases = phases_mod.find_phases(
        samples.filter(after_ready),
        prefills=None if prefills is None else prefills.filter(after_ready),
        idle_gap_s=gap,
        concurrency=concurrency,
        requests=asked,
        quiet=phases_mod.request_quiet(table(tables, "request", {"event": pl.String()}).filter(after_ready)),
        levels=None if prefills is None else phases_mod.prefill_levels(samples, prefills).filter(after_ready),
    )
    phases = phases.with_columns(pl.col("phase") + phase_offset)
    if prefills is not None:
        in_phase = phases_mod.assign_phase(prefills, phases).filter(pl.col("phase").is_not_null())
        chunks = prefill_mod.prefill_chunks(in_phase, breaks=breaks, chunk_budget=budget)
    else:
        chunks = pl.DataFrame(schema={**prefill_mod.CHUNK_SCHEMA, "phase": pl.Int64()})
    interruptions = phases_mod.assign_phase(_preemption_lines(tables), phases)
    samples = phases_mod.assign_phase(samples, phases)
    phases = phase_inputs(
        phases,
        samples=samples,
        chunks=chunks,
        engine=engine,
        preemptions=interruptions,
        context_len=startup.get("context_len"),
        since_last_log=_vllm_v0(tables),
        preemptions_printed=_preemptions_printed(tables, engine),
        request_counts=phases_mod.requests_per_phase(
            table(tables, "request", {"event": pl.String()}), phases
        ),
    )
    marked = windows_mod.mark_stable(samples, phases)
    windows = windows_mod.stable_windows(
        marked, phases, min_samples=min_samples, min_duration_s=min_duration_s
    )
    windows = windows_mod.without_impossible_context(windows, phases, context_len=startup.get("context_len"))
    no_window = windows_mod.no_window_reasons(marked, phases)
    requests = phases_mod.assign_phase(prefill_mod.request_inputs(chunks), phases, by="first_line")
    prefill = prefill_mod.prefill_by_phase(chunks=chunks, samples=marked, phases=phases, engine=engine)
    spec = spec_mod.spec_by_phase(
        tables, samples=marked, phases=phases, engine=engine, spec_tokens=spec_tokens
    )
    ready_t = None if ready is None else ready["time"]
    diags = diagnostics.diagnose(
        tables,
        engine=engine,
        startup=startup,
        samples=marked,
        phases=phases,
        windows=windows,
        no_window=no_window,
        spec=spec,
        ready=ready_t,
    )
    windows_in = windows.join(
        phases.select("phase", "input_tokens", "input_tokens_estimated"), on="phase", how="left"
    )
    config = table(tables, "config", {"version": pl.String()})
    version = first_non_null(config, "version")
    return Analysis(
        source=source,
        engine=engine,
        version=None if version is None else str(version),
        startup=startup,
        samples=marked,
        phases=phases,
        windows=windows,
        no_window=no_window,
        chunks=chunks,
        requests=requests,
        prefill=prefill,
        spec=spec,
        timeline=coldstart.timeline(tables),
        diagnostics=diags,
        counts=diagnostics.counts(tables, samples=marked, ready=ready_t, phases=phases),
        degradation=degradation(windows_in.filter(pl.col("trusted")), label="phase"),
        options={
            "concurrency": concurrency,
            "idle_gap_s": gap,
            "min_samples": min_samples,
            "min_duration_s": min_duration_s,
            "spec_tokens": spec_tokens,
        },
        empty=diagnostics.is_empty_log(tables),
        identity=run_identity(tables, engine=engine),
    )


PART_FRAMES = (
    "samples",
    "phases",
    "windows",
    "no_window",
    "chunks",
    "requests",
    "prefill",
    "spec",
    "timeline",
    "degradation",
)


def combine(
    parts: Sequence[Analysis],
    tables: Mapping[str, pl.DataFrame],
    *,
    engine: str,
    source: str,
    segments: pl.DataFrame,
    chosen: pl.DataFrame,
    families: Sequence[UnparsedFamily],
    read_stats: ReadStats | None,
    segment: int | None,
    times: TimeFacts | None = None,
) -> Analysis:
    """One `Analysis` of the log from those of its engine starts (`parts`, one per `chosen`
    segment): their tables stacked (phases and the cold-start timeline with a ``segment``
    column), counts added up, start-up figures kept per start (`Analysis.startups`; the top
    level ``startup`` is the first analysed start's, never a sum), and the findings about the
    whole log added to theirs."""
    numbers = chosen.get_column("segment").to_list()
    stacked = {
        name: _stack([getattr(p, name) for p in parts], numbers if name in ("phases", "timeline") else None)
        for name in PART_FRAMES
    }
    many = segments.height > 1
    own = [
        p.diagnostics.with_columns(
            pl.when(pl.lit(many) & pl.col("phase").is_null())
            .then(pl.format("start {}: {}", pl.lit(k), pl.col("message")))
            .otherwise(pl.col("message"))
            .alias("message")
        )
        for k, p in zip(numbers, parts, strict=True)
    ]
    whole = diagnostics.log_diagnostics(
        tables,
        engine=engine,
        samples=stacked["samples"],
        read_stats=read_stats,
        families=families,
        segments=segments,
        zone=times.zone if times is not None else "UTC",
    )
    counts: dict[str, int] = {}
    for p in parts:
        for key, value in p.counts.items():
            counts[key] = counts.get(key, 0) + value
    first = parts[0]
    version = next((p.version for p in parts if p.version), None)
    return Analysis(
        source=source,
        engine=engine,
        version=version,
        startup={**first.startup, "segment": numbers[0], "segments": segments.height},
        **stacked,
        diagnostics=diagnostics.ordered(pl.concat([whole, *own], how="vertical_relaxed")),
        counts=counts,
        options=first.options,
        no_phases_reason=diagnostics.no_phases_reason(
            tables,
            samples=stacked["samples"],
            phases=stacked["phases"],
            read_stats=read_stats,
            families=families,
        ),
        empty=diagnostics.is_empty_log(tables),
        identity=first.identity,
        segments=_segment_rows(segments, dict(zip(numbers, parts, strict=True))),
        startups=[{**p.startup, "segment": k} for k, p in zip(numbers, parts, strict=True)],
        unparsed=list(families),
        segment=segment,
        times={} if times is None else times.as_dict(),
    )


def _stack(frames: Sequence[pl.DataFrame], numbers: Sequence[int] | None) -> pl.DataFrame:
    """The frames one under the other, each marked with its segment number when `numbers` is given."""
    if numbers is not None:
        frames = [
            f.with_columns(pl.lit(k, dtype=pl.Int64).alias("segment"))
            for f, k in zip(frames, numbers, strict=True)
        ]
    return pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]


def _segment_rows(segments: pl.DataFrame, parts: Mapping[int, Analysis]) -> pl.DataFrame:
    """`SEGMENT_ROW_SCHEMA`: each engine start's lines, and for an analysed one its phases,
    readiness, CUDA graph capture time and identity."""
    rows = []
    for seg in segments.iter_rows(named=True):
        part = parts.get(seg["segment"])
        row: dict[str, Any] = {**dict.fromkeys(SEGMENT_ROW_SCHEMA), **seg, "analysed": part is not None}
        if part is not None:
            row.update(
                phases=part.phases.height,
                ready=part.startup.get("ready_s") is not None,
                ready_s=part.startup.get("ready_s"),
                cuda_graph_s=part.startup.get("cuda_graph_s"),
                **{k: part.identity.get(k) for k in IDENTITY_KEYS},
            )
        rows.append(row)
    return pl.DataFrame(rows, schema=SEGMENT_ROW_SCHEMA, orient="row")


def _chunk_budget(tables: Mapping[str, pl.DataFrame]) -> int | None:
    """SGLang's `chunked_prefill_size` as its capacity line prints it (None when not printed or
    chunked prefill is off, -1)."""
    value = first_non_null(
        table(tables, "kv_pool", {"chunked_prefill_size": pl.Int64()}), "chunked_prefill_size"
    )
    return int(value) if isinstance(value, int) and value > 0 else None


def _prefill_breaks(tables: Mapping[str, pl.DataFrame], ranks: pl.DataFrame) -> pl.DataFrame:
    """What separates two SGLang Prefill lines' requests (`prefill.prefill_chunks`' `breaks`):
    the Decode lines between them and the retraction lines."""
    retract = table(tables, "preemption", {"count": pl.Int64()}).select(
        rank_index("DP").fill_null(0).alias("series"),
        "line_no",
        pl.col("count").fill_null(1).cast(pl.Int64).alias("retracted"),
    )
    return pl.concat(
        [ranks.select("series", "line_no", pl.lit(None, dtype=pl.Int64).alias("retracted")), retract],
        how="vertical_relaxed",
    )


def _vllm_v0(tables: Mapping[str, pl.DataFrame]) -> bool:
    """vLLM V0 stats lines (they print `Swapped: N reqs`): each throughput is measured since the
    engine's previous log, not over a fixed interval."""
    stats = table(tables, "engine_stats", {"swapped": pl.Int64()})
    return bool(stats.get_column("swapped").is_not_null().any())


PREEMPTIONS_FIELD = (0, 11, 2)  # vLLM V1 prints `Preemptions: N` (when N > 0) from this release


def _preemptions_printed(tables: Mapping[str, pl.DataFrame], engine: str) -> bool:
    """Whether a preemption would show: vLLM V1's stats print a `Preemptions` count from 0.11.2
    (known from the version line, or from a count printed), V0 a warning per preemption;
    SGLang prints its retractions."""
    if engine != "vllm" or _vllm_v0(tables):
        return True
    stats = table(tables, "engine_stats", {"preemptions": pl.Int64()})
    if stats.get_column("preemptions").is_not_null().any():
        return True
    version = first_non_null(table(tables, "config", {"version": pl.String()}), "version")
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", str(version or ""))
    return match is not None and tuple(int(g or 0) for g in match.groups()) >= PREEMPTIONS_FIELD


def _preemption_lines(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Preemption / retraction lines (vLLM V0 warnings, SGLang retractions): ``line_no``, ``time``,
    ``count``, ``tokens_gained`` (SGLang's `#new_tokens_gained`, else null)."""
    pre = table(tables, "preemption", {"count": pl.Int64(), "new_tokens_gained": pl.Int64()})
    return pre.select(
        "line_no", "time", pl.col("count").fill_null(1), pl.col("new_tokens_gained").alias("tokens_gained")
    )


def analyze_log(
    path: str | Path,
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    concurrency: int | None = None,
    idle_gap_s: float | None = None,
    min_samples: int = windows_mod.MIN_SAMPLES,
    min_duration_s: float = 20.0,
    spec_tokens: int | None = None,
    segment: int | None = None,
) -> Analysis:
    """Ingest a log file (`engine`, `year`, `tz`, `patterns` as for `logparse.ingest`) and analyse
    it (see `analyze`)."""
    from logparse.ingest import ingest

    result = ingest(path, engine=engine, year=year, tz=tz, patterns=patterns)
    return analyze(
        result.tables,
        engine=result.engine,
        source=result.source,
        concurrency=concurrency,
        idle_gap_s=idle_gap_s,
        min_samples=min_samples,
        min_duration_s=min_duration_s,
        spec_tokens=spec_tokens,
        read_stats=result.stats,
        grammar=result.grammar,
        segment=segment,
        times=result.times,
    )
