"""Server half of `logparse reconcile`: the engine's own view of the client's run.

The client's run is matched to a phase of the server log by its concurrency (the phase's N);
among phases with that N, the one with the longest stable window wins. The phase's stable decode
throughput and its facts then go to `logparse.bench.reconcile.reconcile`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from logparse.analysis.analyze import Analysis


def match_phase(analysis: Analysis, *, concurrency: int | None) -> dict[str, Any] | None:
    """The server phase that corresponds to a client run of `concurrency` requests, or None.

    Returns the phase's facts: `engine`, `phase`, `concurrency`, `input_tokens`, `start`, `end`,
    `output_tokens` (per request, estimated: `analysis.outputs`), and, when the phase has a stable
    window, `stable_gen_tps`, `stable_samples`, `stable_trusted` and `context_tokens_per_request`.
    """
    phases = analysis.phases
    if phases.is_empty():
        return None
    windows = analysis.windows.select(
        "phase",
        pl.col("gen_tps_mean").alias("stable_gen_tps"),
        pl.col("samples").alias("stable_samples"),
        pl.col("trusted").alias("stable_trusted"),
        "context_tokens_per_request",
    )
    from logparse.analysis.outputs import phase_outputs

    outputs = phase_outputs(analysis.samples, phases).select("phase", "output_tokens")
    joined = phases.join(windows, on="phase", how="left").join(outputs, on="phase", how="left")
    if concurrency is not None:
        same_n = joined.filter(pl.col("concurrency") == concurrency)
        joined = same_n if not same_n.is_empty() else joined
    best = joined.sort(pl.col("stable_samples").fill_null(0), descending=True).row(0, named=True)
    keep = (
        "phase",
        "concurrency",
        "input_tokens",
        "input_tokens_estimated",
        "start",
        "end",
        "stable_gen_tps",
        "stable_samples",
        "stable_trusted",
        "context_tokens_per_request",
        "output_tokens",
    )
    return {"engine": analysis.engine, **{k: best.get(k) for k in keep}}


def reconcile_with_log(
    rows: pl.DataFrame, analysis: Analysis, *, concurrency: int | None = None
) -> dict[str, Any]:
    """Reconcile client rows with the server log's matching phase (see `reconcile`). A log without
    a load phase is a problem of the result (``problems``): there is nothing to check against."""
    from logparse.bench.reconcile import reconcile

    if (
        concurrency is None
        and "concurrency" in rows.columns
        and rows["concurrency"].drop_nulls().n_unique() == 1
    ):
        concurrency = int(rows["concurrency"].drop_nulls()[0])
    phase = match_phase(analysis, concurrency=concurrency)
    # A window too short to trust is no reference: it is reported, never compared.
    stable = phase.get("stable_gen_tps") if phase and phase.get("stable_trusted") else None
    result = reconcile(rows, server_stable_gen_tps=stable, server_phase=phase)
    result["server_log"] = analysis.source
    result["engine"] = analysis.engine
    result["problems"] = []
    if phase is None:  # nothing in the log to check the client against: a problem, not a pass
        why = analysis.no_phases_reason or "no decode activity"
        result["no_phases_reason"] = why
        result["problems"].append(
            f"the server log has no load phase ({why}): it holds no run to check the client's against"
        )
    return result
