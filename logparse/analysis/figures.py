"""The evidence behind each figure of a post-mortem (`evidence.Figure`), as the summary reports it.

Start-up: the KV pool (printed, or from blocks and a block size), engine init (printed, or
inferred from timestamps), ready (from timestamps; a lower bound when the ready line printed
none). Per phase: the input length (`inputs`), N, the stable window's throughput and its
context per request (SGLang's printed token count; vLLM's usage percentage × pool, rounded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from logparse.analysis.analyze import Analysis

from logparse.analysis.evidence import ESTIMATED, EXACT, Figure
from logparse.analysis.inputs import BLOCK_ROUNDING, USAGE_ROUNDING

TIMESTAMP_S = 1.0  # engine timestamps are printed to the second


def startup_evidence(startup: Mapping[str, Any], *, pool: Figure | None) -> dict[str, dict[str, Any]]:
    """``{figure: Figure.as_dict()}`` for the start-up figures the log gives; `pool` is the KV pool's
    figure (`coldstart.kv_pool_figure`)."""
    out: dict[str, Figure] = {}
    if pool is not None:
        out["kv_pool_tokens"] = pool
    if startup.get("init_s") is not None:
        out["init_s"] = (
            Figure(
                startup["init_s"],
                ESTIMATED,
                "from the end of rank 0's weight loading to ready, "
                "by their timestamps (no init figure printed)",
                2 * TIMESTAMP_S,
            )
            if startup.get("init_s_inferred")
            else Figure(startup["init_s"], EXACT, "printed")
        )
    if startup.get("ready_s") is not None:
        out["ready_s"] = (
            Figure(
                startup["ready_s"],
                ESTIMATED,
                "a lower bound: the ready line prints no time, the last timestamp before it is used",
            )
            if startup.get("ready_s_approx")
            else Figure(startup["ready_s"], EXACT, "from the first line's timestamp to the ready line's")
        )
    if startup.get("weight_load_s") is not None:
        out["weight_load_s"] = (
            Figure(
                startup["weight_load_s"],
                ESTIMATED,
                "read off the shard progress bar's elapsed time (the engine printed no load time)",
                TIMESTAMP_S,
            )
            if startup.get("weight_load_from_bar")
            else Figure(startup["weight_load_s"], EXACT, "printed by the engine (rank 0)")
        )
    for key, how in (
        ("cuda_graph_s", "printed (rank 0; target and draft captures added)"),
        (
            "weight_download_s",
            "printed (`Time spent downloading weights`: rank 0's, else the first worker's)",
        ),
        ("compile_s", "printed"),
    ):
        if startup.get(key) is not None:
            out[key] = Figure(startup[key], EXACT, how)
    return {k: f.as_dict() for k, f in out.items()}


def phase_evidence(
    phase: Mapping[str, Any], window: Mapping[str, Any] | None, *, engine: str, pool: int | None
) -> dict[str, dict[str, Any]]:
    """``{figure: Figure.as_dict()}`` for one phase (`phases` row) and its stable window."""
    out: dict[str, Figure] = {}
    if phase.get("input_confidence") is not None:
        out["input_tokens"] = Figure(
            phase.get("input_tokens"), phase["input_confidence"], phase["input_how"], phase.get("input_bound")
        )
    if phase.get("concurrency") is not None:
        how = (
            "given (--concurrency)"
            if phase.get("concurrency_source") == "given"
            else "the plateau of printed running requests"
        )
        out["concurrency"] = Figure(phase["concurrency"], EXACT, how)
    if window is not None:
        out["gen_tps_mean"] = Figure(
            window["gen_tps_mean"],
            EXACT,
            f"mean of the {window['samples']} printed gen throughputs of the stable window",
        )
        context = context_figure(window, engine=engine, pool=pool)
        if context is not None:
            out["context_tokens_per_request"] = context
    return {k: f.as_dict() for k, f in out.items()}


def context_figure(window: Mapping[str, Any], *, engine: str, pool: int | None) -> Figure | None:
    """A stable window's KV context per request: SGLang's printed `#token` ÷ running (exact);
    vLLM's KV usage % × the pool ÷ running (estimated: 0.1 % of the pool, and a KV block)."""
    value, n = window.get("context_tokens_per_request"), window.get("concurrency")
    if value is None:
        return None
    if engine == "sglang":
        return Figure(value, EXACT, "printed #token ÷ running requests, mean over the window")
    bound = (USAGE_ROUNDING * pool / n if pool and n else 0.0) + BLOCK_ROUNDING
    return Figure(value, ESTIMATED, "KV usage % × the pool ÷ running requests, mean over the window", bound)


EVIDENCE_SCHEMA: dict[str, pl.DataType] = {
    "segment": pl.Int64(),
    "phase": pl.Int64(),
    "figure": pl.String(),
    "value": pl.Float64(),
    "confidence": pl.String(),
    "how": pl.String(),
    "bound": pl.Float64(),
}


def evidence_frame(a: Analysis) -> pl.DataFrame:
    """Every figure of a post-mortem with its evidence (`EVIDENCE_SCHEMA`): each engine start's
    start-up figures (``phase`` null), then each phase's."""
    from logparse.analysis.diagnostics import effective_capacity

    rows: list[dict[str, Any]] = []
    for startup in a.startups or [a.startup]:
        for name, ev in (startup.get("evidence") or {}).items():
            rows.append(
                {
                    "segment": startup.get("segment"),
                    "phase": None,
                    "figure": name,
                    "value": _number(startup.get(name)),
                    **ev,
                }
            )
    windows = {r["phase"]: r for r in a.windows.iter_rows(named=True)}
    pool = effective_capacity(a.samples) or a.startup.get("kv_pool_tokens")
    for ph in a.phases.iter_rows(named=True):
        w = windows.get(ph["phase"])
        for name, ev in phase_evidence(ph, w, engine=a.engine, pool=pool).items():
            value = ph.get(name) if name in ("input_tokens", "concurrency") else (w or {}).get(name)
            rows.append(
                {
                    "segment": ph.get("segment"),
                    "phase": ph["phase"],
                    "figure": name,
                    "value": _number(value),
                    **ev,
                }
            )
    return pl.DataFrame(rows, schema=EVIDENCE_SCHEMA, orient="row")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


__all__ = ["EVIDENCE_SCHEMA", "context_figure", "evidence_frame", "phase_evidence", "startup_evidence"]
