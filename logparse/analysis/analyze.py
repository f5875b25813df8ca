"""Run the whole post-mortem of one log: samples → phases → windows → prefill, spec, diagnostics."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logparse.analysis import coldstart, diagnostics, phases as phases_mod, prefill as prefill_mod
from logparse.analysis import samples as samples_mod, spec as spec_mod, windows as windows_mod
from logparse.analysis._frames import first_non_null, naive_utc, rank_index, table
from logparse.errors import InputError
from logparse.ingest.reader import ReadStats


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

    def frames(self) -> dict[str, pl.DataFrame]:
        """The tables to write as Parquet, by name."""
        return {"samples": self.samples, "phases": self.phases, "windows": self.windows,
                "prefill_chunks": self.chunks, "prefill_requests": self.requests, "prefill": self.prefill,
                "spec": self.spec, "coldstart": self.timeline, "diagnostics": self.diagnostics,
                "degradation": self.degradation}


def analyze(tables: Mapping[str, pl.DataFrame], *, engine: str, source: str = "",
            concurrency: int | None = None, idle_gap_s: float | None = None,
            min_samples: int = 3, min_duration_s: float = 20.0, spec_tokens: int | None = None,
            read_stats: ReadStats | None = None) -> Analysis:
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
        A stable window below either is reported as too short to trust.
    spec_tokens
        Draft tokens per speculative step (default: from the printed server arguments).
    read_stats
        What reading the log counted (`IngestResult.stats`): a damaged input (a truncated
        `.gz`, invalid UTF-8, ...) becomes ``input_*`` warnings among the diagnostics.
    """
    from logparse.analysis.degradation import degradation

    if engine not in ("vllm", "sglang"):
        raise InputError(f"{source or 'log'}: post-mortem analysis supports vllm and sglang logs, not {engine!r}")
    tables = naive_utc(tables)  # type: ignore[assignment]
    startup = coldstart.startup_figures(tables, engine=engine)
    ranks = samples_mod.rank_samples(tables, engine=engine, pool_tokens=startup["kv_pool_tokens"])
    samples = samples_mod.decode_samples(ranks)
    prefills = samples_mod.prefill_lines(tables) if engine == "sglang" else None
    # Lines before the server said it was ready are start-up (SGLang's warm-up request), not load.
    ready = coldstart.ready_row(tables)
    after_ready = pl.col("line_no") > (ready["line_no"] if ready is not None else 0)
    gap = idle_gap_s if idle_gap_s is not None else phases_mod.default_idle_gap(samples, engine=engine)
    phases = phases_mod.find_phases(samples.filter(after_ready),
                                    prefills=None if prefills is None else prefills.filter(after_ready),
                                    idle_gap_s=gap, concurrency=concurrency)
    if prefills is not None:
        in_phase = phases_mod.assign_phase(prefills, phases).filter(pl.col("phase").is_not_null())
        retract = table(tables, "preemption", {"count": pl.Int64()}).select(
            rank_index("DP").fill_null(0).alias("series"), "line_no",
            pl.col("count").fill_null(1).cast(pl.Int64).alias("retracted"))
        breaks = pl.concat([ranks.select("series", "line_no", pl.lit(None, dtype=pl.Int64).alias("retracted")),
                            retract], how="vertical_relaxed")
        chunks = prefill_mod.prefill_chunks(in_phase, breaks=breaks)
    else:
        chunks = pl.DataFrame(schema={**prefill_mod.CHUNK_SCHEMA, "phase": pl.Int64()})
    interruptions = phases_mod.assign_phase(_preemption_lines(tables), phases)
    phases = phases_mod.phase_inputs(phases, samples=samples, chunks=chunks, engine=engine,
                                     preemptions=interruptions)
    samples = phases_mod.assign_phase(samples, phases)
    marked = windows_mod.mark_stable(samples, phases)
    windows = windows_mod.stable_windows(marked, phases, min_samples=min_samples, min_duration_s=min_duration_s)
    no_window = windows_mod.no_window_reasons(marked, phases)
    requests = phases_mod.assign_phase(prefill_mod.request_inputs(chunks), phases, by="first_line")
    prefill = prefill_mod.prefill_by_phase(chunks=chunks, samples=marked, phases=phases, engine=engine)
    spec = spec_mod.spec_by_phase(tables, samples=marked, phases=phases, engine=engine, spec_tokens=spec_tokens)
    ready_t = None if ready is None else ready["time"]
    diags = diagnostics.diagnose(tables, engine=engine, startup=startup, samples=marked, phases=phases,
                                 windows=windows, no_window=no_window, spec=spec, ready=ready_t,
                                 read_stats=read_stats)
    windows_in = windows.join(phases.select("phase", "input_tokens", "input_tokens_estimated"), on="phase",
                              how="left")
    config = table(tables, "config", {"version": pl.String()})
    version = first_non_null(config, "version")
    return Analysis(
        source=source, engine=engine, version=None if version is None else str(version), startup=startup,
        samples=marked, phases=phases, windows=windows, no_window=no_window, chunks=chunks,
        requests=requests, prefill=prefill, spec=spec, timeline=coldstart.timeline(tables),
        diagnostics=diags,
        counts=diagnostics.counts(tables, samples=marked, ready=ready_t, phases=phases),
        degradation=degradation(windows_in.filter(pl.col("trusted")), label="phase"),
        options={"concurrency": concurrency, "idle_gap_s": gap, "min_samples": min_samples,
                 "min_duration_s": min_duration_s, "spec_tokens": spec_tokens},
        no_phases_reason=diagnostics.no_phases_reason(tables, samples=samples, phases=phases,
                                                      read_stats=read_stats),
        empty=diagnostics.is_empty_log(tables),
    )


def _preemption_lines(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Preemption / retraction lines (vLLM V0 warnings, SGLang retractions): ``line_no``, ``time``,
    ``count``, ``tokens_gained`` (SGLang's `#new_tokens_gained`, else null)."""
    pre = table(tables, "preemption", {"count": pl.Int64(), "new_tokens_gained": pl.Int64()})
    return pre.select("line_no", "time", pl.col("count").fill_null(1), pl.col("new_tokens_gained").alias("tokens_gained"))


def analyze_log(path: str | Path, *, engine: str = "auto", year: int | None = None,
                patterns: Sequence[str | Path] = (), concurrency: int | None = None,
                idle_gap_s: float | None = None, min_samples: int = 3,
                min_duration_s: float = 20.0, spec_tokens: int | None = None) -> Analysis:
    """Ingest a log file and analyse it (see `analyze`)."""
    from logparse.ingest import ingest

    result = ingest(path, engine=engine, year=year, patterns=patterns)
    return analyze(result.tables, engine=result.engine, source=result.source, concurrency=concurrency,
                   idle_gap_s=idle_gap_s, min_samples=min_samples, min_duration_s=min_duration_s,
                   spec_tokens=spec_tokens, read_stats=result.stats)
