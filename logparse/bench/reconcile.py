"""Client half of `logparse reconcile`: is the client's output throughput believable?

Two independent references:

- the physical bound: requests x output tokens per request / duration. Nothing can stream more
  tokens than were requested, so a client figure above it is an accounting error (GPUStack's
  vLLM 200K client: 1111.61 tok/s against 10 x 3000 / 295.21 s = 101.6).
- the engine's stable decode throughput from its own log (all N requests decoding, no prefill),
  supplied by the server-log analysis. The client's figure is a whole-run average whose
  denominator also holds prefill, ramp-up and tail, so it should sit *below* the stable rate;
  above it, the client is counting tokens the engine never generated.

Latency metrics (TTFT, TPOT) do not depend on the token count, so the client stays the source
for those whichever throughput is trusted.
"""
from __future__ import annotations

from typing import Any

import polars as pl

from logparse.bench.derive import tokens_per_request

_BOUND_TOL = 0.01


def _row_verdict(
    rec: dict[str, Any], server_stable_gen_tps: float | None, server_phase: dict[str, Any], rel_tol: float
) -> dict[str, Any]:
    client = rec["output_throughput_tps"]
    n = rec.get("output_len_requested") or tokens_per_request(rec)
    requests, duration = rec.get("num_requests"), rec.get("duration_s")
    bound = requests * n / duration if n and requests and duration else None
    problems: list[str] = []
    notes: list[str] = []
    if bound is not None:
        if client > bound * (1.0 + _BOUND_TOL):
            problems.append(
                f"client reports {client:g} tok/s but {requests} requests x {n:g} tokens"
                f" / {duration:g} s allow at most {bound:.2f} tok/s"
                f" ({client / bound:.1f}x the physical bound)"
            )
        else:
            notes.append(f"client {client:g} tok/s is within the physical bound {bound:.2f} tok/s")
    if server_stable_gen_tps:
        ratio = client / server_stable_gen_tps
        if ratio > 1.0 + rel_tol:
            problems.append(
                f"client {client:g} tok/s is {ratio:.1f}x the engine's stable decode throughput"
                f" {server_stable_gen_tps:g} tok/s; a whole-run average (prefill and ramp included)"
                " cannot exceed the all-requests-decoding rate"
            )
        else:
            notes.append(
                f"client is {ratio:.0%} of the engine's stable decode {server_stable_gen_tps:g} tok/s"
                " (the rest is prefill, ramp and tail time in the client's denominator)"
            )
    generated = server_phase.get("gen_tokens")
    counted = rec.get("total_output_tokens")
    if generated and counted and counted > generated * (1.0 + rel_tol):
        problems.append(
            f"client counts {counted} output tokens; the engine log shows {generated:g} generated"
        )
    phase_n = server_phase.get("concurrency", server_phase.get("n_running"))
    if phase_n is not None and rec.get("concurrency") is not None and phase_n != rec["concurrency"]:
        notes.append(f"the server phase has N={phase_n} but the client ran at c={rec['concurrency']}")
    if problems:
        trust = "server_log" if server_stable_gen_tps or generated else "physical_bound"
    elif bound is None and not server_stable_gen_tps:
        trust = "undetermined"
    else:
        trust = "client"
    return {
        "row": rec["row"],
        "config": rec["config"],
        "concurrency": rec["concurrency"],
        "client_output_tps": client,
        "physical_bound_tps": bound,
        "bound_ratio": None if bound is None else client / bound,
        "server_stable_gen_tps": server_stable_gen_tps,
        "server_ratio": None if not server_stable_gen_tps else client / server_stable_gen_tps,
        "consistent": not problems,
        "trust": trust,
        "problems": problems,
        "notes": notes,
    }


def reconcile(
    bench_rows: pl.DataFrame,
    *,
    server_stable_gen_tps: float | None = None,
    server_phase: dict[str, Any] | None = None,
    rel_tol: float = 0.10,
) -> dict[str, Any]:
    """Compare each run's client output throughput with the physical bound and the engine's rate.

    Parameters
    ----------
    bench_rows
        The tidy table (`load_bench`), usually the one run that matches the server phase.
    server_stable_gen_tps
        The engine's stable decode throughput (tok/s, all requests decoding) from its log.
    server_phase
        Optional facts about the matching server-log phase: `concurrency` (or `n_running`),
        `gen_tokens` (tokens generated in the phase), anything else is carried through.
    rel_tol
        Relative slack before the client is called above the engine's rate or token count.

    Returns
    -------
    dict
        `runs` (one verdict per run with an output throughput: bound, ratios, `trust`,
        `problems`, `notes`), overall `trust` ('client', 'server_log', 'physical_bound' or
        'undetermined'), and `reason`, one sentence saying which source to trust and why.
    """
    phase = dict(server_phase or {})
    runs = [
        _row_verdict(rec, server_stable_gen_tps, phase, rel_tol)
        for rec in bench_rows.filter(pl.col("output_throughput_tps").is_not_null()).iter_rows(named=True)
    ]
    bad = [run for run in runs if not run["consistent"]]
    if not runs:
        trust, reason = "undetermined", "no run reports an output throughput to reconcile"
    elif bad:
        trust = bad[0]["trust"]
        source = "the engine log" if trust == "server_log" else "the physical bound"
        reason = (
            f"{bad[0]['problems'][0]}; trust {source} for throughput and the client only for latency"
            " (TTFT, TPOT), which does not depend on its token count"
        )
    elif all(run["trust"] == "undetermined" for run in runs):
        trust, reason = "undetermined", "the file has neither the token counts for a bound nor a server rate"
    else:
        trust = "client"
        reason = "; ".join(runs[0]["notes"]) or "client throughput is consistent"
    return {"trust": trust, "reason": reason, "runs": runs, "server_phase": phase or None}
