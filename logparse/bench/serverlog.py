"""Server half of `logparse reconcile`: the engine's own view of the client's run.

A sweep's server log holds many client runs, so the client's run is matched to the phase that
fits it best, by what both sides state:

* time: the client run's span (its end stamp less its duration) overlapping the phase's by at
  least half of the shorter one; the strongest evidence, since a sweep repeats its N and
  lengths;
* N: the phase's concurrency equal to the client's;
* input and output lengths per request within 2x (`reconcile._INPUT_APART`) of the phase's.

The phase meeting the most (time counting most) wins, ties going to the longest stable window;
the match says which criteria it met (``matched_by``). The phase's stable decode throughput and
its facts then go to `logparse.bench.reconcile.reconcile`, which still reports every
disagreement of engine, input length or concurrency as a mismatch.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from logparse.analysis.analyze import Analysis

_APART = 2.0  # lengths this many times apart are another workload
_OVERLAP = 0.5  # the spans must overlap by this share of the shorter one
_WEIGHTS = {"time": 8, "concurrency": 4, "input": 2, "output": 1}


def match_phase(
    analysis: Analysis, *, concurrency: int | None, client: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The server phase that corresponds to a client run, or None when the log has no phase.

    `client` is the run's tidy row (`ended_at`, `duration_s`, `input_len`, `output_len`); without
    it only `concurrency` is compared. Returns the phase's facts: `engine`, `phase`,
    `concurrency`, `input_tokens`, `start`, `end`, `output_tokens` (per request, estimated:
    `analysis.outputs`), `matched_by` (the criteria it met), and, when
    the phase has a stable window, `stable_gen_tps`, `stable_samples`, `stable_trusted` and
    `context_tokens_per_request`.
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
    span = _client_span(client or {})
    scored = []
    for ph in joined.iter_rows(named=True):
        met = _criteria(ph, client or {}, concurrency=concurrency, span=span)
        scored.append((sum(_WEIGHTS[m] for m in met), ph.get("stable_samples") or 0, -ph["phase"], met, ph))
    _, _, _, met, best = max(scored, key=lambda s: s[:3])
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
    return {"engine": analysis.engine, **{k: best.get(k) for k in keep}, "matched_by": met}


def _client_span(client: dict[str, Any]) -> tuple[dt.datetime, dt.datetime] | None:
    ended, duration = client.get("ended_at"), client.get("duration_s")
    if not ended or not duration:
        return None
    try:
        end = dt.datetime.fromisoformat(str(ended))
    except ValueError:
        return None
    return end - dt.timedelta(seconds=float(duration)), end


def _criteria(
    ph: dict[str, Any],
    client: dict[str, Any],
    *,
    concurrency: int | None,
    span: tuple[dt.datetime, dt.datetime] | None,
) -> list[str]:
    met = []
    if span is not None and ph.get("start") is not None and ph.get("end") is not None:
        start, end = ph["start"].replace(tzinfo=None), ph["end"].replace(tzinfo=None)
        overlap = (min(end, span[1]) - max(start, span[0])).total_seconds()
        shorter = min((end - start).total_seconds(), (span[1] - span[0]).total_seconds())
        if overlap > 0 and overlap >= _OVERLAP * max(shorter, 1.0):
            met.append("time")
    if concurrency is not None and ph.get("concurrency") == concurrency:
        met.append("concurrency")
    if _near(client.get("input_len"), ph.get("input_tokens")):
        met.append("input")
    if _near(client.get("output_len"), ph.get("output_tokens")):
        met.append("output")
    return met


def _near(a: Any, b: Any) -> bool:
    if not a or not b:
        return False
    return max(float(a), float(b)) / min(float(a), float(b)) <= _APART


def reconcile_with_log(
    rows: pl.DataFrame, analysis: Analysis, *, concurrency: int | None = None
) -> dict[str, Any]:
    """Reconcile client rows with the server log's matching phase (see `reconcile`). A file of
    several runs (a sweep's JSONL) is reconciled run by run, each with the phase that fits it:
    every run then carries its own ``server_phase``. A log without a load phase is a problem of
    the result (``problems``): there is nothing to check against."""
    from logparse.bench.reconcile import reconcile

    if rows.height > 1 and analysis.phases.height > 1:
        return _run_by_run(rows, analysis, concurrency=concurrency)
    if (
        concurrency is None
        and "concurrency" in rows.columns
        and rows["concurrency"].drop_nulls().n_unique() == 1
    ):
        concurrency = int(rows["concurrency"].drop_nulls()[0])
    client = rows.row(0, named=True) if rows.height == 1 else None
    phase = match_phase(analysis, concurrency=concurrency, client=client)
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


def _run_by_run(rows: pl.DataFrame, analysis: Analysis, *, concurrency: int | None) -> dict[str, Any]:
    """`reconcile_with_log` of each run of `rows` alone, the verdicts gathered: the runs in file
    order, the first run with a problem deciding the overall trust and reason."""
    verdicts = [
        reconcile_with_log(rows.slice(i, 1), analysis, concurrency=concurrency) for i in range(rows.height)
    ]
    runs = [{**run, "server_phase": v["server_phase"]} for v in verdicts for run in v["runs"]]
    bad = next((v for v in verdicts if any(run["problems"] for run in v["runs"])), None)
    chosen = bad or verdicts[0]
    return {
        "trust": chosen["trust"],
        "reason": chosen["reason"],
        "runs": runs,
        "server_phase": None,
        "server_log": analysis.source,
        "engine": analysis.engine,
    }
