"""Client half of `logparse reconcile`: is the client's output throughput believable?

Two independent references:

- the physical bound: requests x output tokens per request / duration. Nothing can stream more
  tokens than were requested, so a client figure above it is an accounting error (GPUStack's
  vLLM 200K client: 1111.61 tok/s against 10 x 3000 / 295.21 s = 101.6).
- the engine's stable decode throughput from its own log (all N requests decoding, no prefill),
  supplied by the server-log analysis. The client's figure is a whole-run average whose
  denominator also holds prefill, ramp-up and tail, so it should sit *below* the stable rate;
  more than `rel_tol` above it, the client is counting tokens the engine never generated.

The second reference holds only when the log is of the client's run: an engine, an input length
(more than 2x apart), a concurrency, a time span (the client's end stamp less its duration
against the phase's span) or an output length (more than 25 % apart) that differ make the pair a
mismatch, a problem of its own, and the engine's figures are then not compared at all.

Latency metrics (TTFT, TPOT) do not depend on the token count, so the client stays the source
for those whichever throughput is trusted.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from logparse.analysis.text import tokens_label
from logparse.bench.derive import tokens_per_request
from logparse.bench.units import secs, tok_s, tokens

_BOUND_TOL = 0.01
_INPUT_APART = 2.0  # prompts this many times longer or shorter are another workload
# Output lengths further apart than this are another workload; the log's is an estimate, within
# 15 % on the emulated runs (`analysis.outputs`).
_OUTPUT_APART = 0.25


def run_mismatches(rec: dict[str, Any], server_phase: dict[str, Any]) -> list[str]:
    """Why the server phase is not the client run `rec`: engine, input length, time span,
    concurrency, output length.

    Each is checked only when both sides state it; the input lengths must be more than 2x apart,
    the output lengths (the log's estimated from its throughput lines) more than 25 %.
    """
    out: list[str] = []
    client_engine, log_engine = rec.get("engine"), server_phase.get("engine")
    if client_engine and log_engine and str(client_engine).lower() != str(log_engine).lower():
        out.append(f"engine {client_engine} in the client, {log_engine} in the log")
    client_input = rec.get("input_len")
    log_input = server_phase.get("input_tokens") or server_phase.get("context_tokens_per_request")
    if client_input and log_input:
        apart = max(client_input, log_input) / min(client_input, log_input)
        if apart > _INPUT_APART:
            shown = tokens_label(round(log_input), estimated=bool(server_phase.get("input_tokens_estimated")))
            out.append(
                f"input length {tokens_label(round(client_input))} tokens per prompt in the client,"
                f" {shown} in the log's phase ({apart:.1f}x apart)"
            )
    apart_in_time = _time_mismatch(rec, server_phase)
    if apart_in_time:
        out.append(apart_in_time)
    client_c = rec.get("concurrency")
    log_n = server_phase.get("concurrency", server_phase.get("n_running"))
    if client_c is not None and log_n is not None and client_c != log_n:
        out.append(f"concurrency c={client_c} in the client, N={log_n} requests decoding in the log's phase")
    client_out = tokens_per_request(rec)
    log_out = server_phase.get("output_tokens")  # estimated from the throughput lines
    if client_out and log_out:
        apart = max(client_out, log_out) / min(client_out, log_out)
        if apart > 1.0 + _OUTPUT_APART:
            out.append(
                f"output length {tokens_label(round(client_out))} tokens per request in the client,"
                f" {tokens_label(round(log_out), estimated=True)} in the log's phase ({apart:.1f}x apart)"
            )
    return out


def _time_mismatch(rec: dict[str, Any], server_phase: dict[str, Any]) -> str | None:
    """The client's run and the log's phase at times that do not overlap, when both say when."""
    import datetime as dt

    ended, duration = rec.get("ended_at"), rec.get("duration_s")
    start, end = server_phase.get("start"), server_phase.get("end")
    if not (ended and duration and start and end):
        return None
    try:
        client_end = dt.datetime.fromisoformat(str(ended))
    except ValueError:
        return None
    client_start = client_end - dt.timedelta(seconds=float(duration))
    start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    if client_start <= end and start <= client_end:
        return None
    return (
        f"time: the client ran {client_start:%Y-%m-%d %H:%M:%S}-{client_end:%H:%M:%S} (its own local time),"
        f" the log's phase {start:%Y-%m-%d %H:%M:%S}-{end:%H:%M:%S}"
    )


def _bound_check(rec: dict[str, Any]) -> tuple[float | None, str | None, str | None]:
    """(physical bound, problem, note) of the client's output throughput."""
    client = rec["output_throughput_tps"]
    n = rec.get("output_len_requested") or tokens_per_request(rec)
    requests, duration = rec.get("num_requests"), rec.get("duration_s")
    if not (n and requests and duration):
        return None, None, None
    bound = requests * n / duration
    if client > bound * (1.0 + _BOUND_TOL):
        return (
            bound,
            (
                f"client reports {tok_s(client)} but {requests} requests x {tokens(n)} tokens / {secs(duration)}"
                f" allow at most {tok_s(bound)} ({client / bound:.1f}x the physical bound)"
            ),
            None,
        )
    return bound, None, f"client {tok_s(client)} is within the physical bound {tok_s(bound)}"


def _engine_rate_check(client: float, stable: float, rel_tol: float) -> tuple[str | None, str | None]:
    """(problem, note) of the client's figure against the engine's stable decode rate."""
    ratio = client / stable
    if ratio > 1.0 + rel_tol:
        return (
            f"client {tok_s(client)} is {ratio:.1f}x the engine's stable decode {tok_s(stable)}, beyond the"
            f" {rel_tol:.0%} tolerance; a whole-run average (prefill and ramp included) cannot exceed"
            " the all-requests-decoding rate"
        ), None
    if ratio > 1.0:
        return None, (
            f"client is {ratio:.0%} of the engine's stable decode {tok_s(stable)}: above it, but within the"
            f" {rel_tol:.0%} tolerance for the engine's sampled stats (a whole-run average should sit at or"
            " below the all-requests-decoding rate)"
        )
    return None, (
        f"client is {ratio:.0%} of the engine's stable decode {tok_s(stable)}"
        " (the rest is prefill, ramp and tail time in the client's denominator)"
    )


def _row_verdict(
    rec: dict[str, Any], server_stable_gen_tps: float | None, server_phase: dict[str, Any], rel_tol: float
) -> dict[str, Any]:
    client = rec["output_throughput_tps"]
    mismatches = run_mismatches(rec, server_phase)
    problems = [f"not the same run: {m}" for m in mismatches]
    notes: list[str] = []
    bound, bound_problem, bound_note = _bound_check(rec)
    problems += [bound_problem] if bound_problem else []
    notes += [bound_note] if bound_note else []
    generated = server_phase.get("gen_tokens")
    if server_phase.get("stable_trusted") is False and server_phase.get("stable_gen_tps"):
        notes.append(
            f"the engine's stable window ({server_phase.get('stable_samples')} sample(s)) is not trusted"
            f" (too short to trust, or its throughput swings): its {tok_s(server_phase['stable_gen_tps'])}"
            " is not compared"
        )
    if mismatches:
        if server_stable_gen_tps:
            notes.append(
                f"the engine's stable decode {tok_s(server_stable_gen_tps)} is not compared:"
                " the log is not of the client's run"
            )
    else:
        if server_stable_gen_tps:
            problem, note = _engine_rate_check(client, server_stable_gen_tps, rel_tol)
            problems += [problem] if problem else []
            notes += [note] if note else []
        counted = rec.get("total_output_tokens")
        if generated and counted and counted > generated * (1.0 + rel_tol):
            problems.append(
                f"client counts {tokens(counted)} output tokens; the engine log shows {tokens(generated)} generated"
            )
    if mismatches:
        trust = "physical_bound" if bound_problem else "undetermined"
    elif problems:
        trust = "server_log" if server_stable_gen_tps or generated else "physical_bound"
    elif bound is None and not server_stable_gen_tps:
        trust = "undetermined"
    else:
        trust = "client"
    return {
        "row": rec["row"],
        "config": rec["config"],
        "engine": rec.get("engine"),
        "workload": rec.get("workload"),
        "concurrency": rec["concurrency"],
        "request_rate": rec.get("request_rate"),
        "client_output_tps": client,
        "physical_bound_tps": bound,
        "bound_ratio": None if bound is None else client / bound,
        "server_stable_gen_tps": server_stable_gen_tps,
        "server_ratio": None if not server_stable_gen_tps else client / server_stable_gen_tps,
        "consistent": not problems,
        "trust": trust,
        "mismatches": mismatches,
        "problems": problems,
        "notes": notes,
    }


def _reason(run: dict[str, Any]) -> str:
    """One sentence: which source to trust for `run`'s throughput, and why."""
    latency = "the client only for latency (TTFT, TPOT), which does not depend on its token count"
    if run["mismatches"]:
        head = (
            f"the server log is not the client's run ({'; '.join(run['mismatches'])}),"
            " so the engine's figures cannot check the client's"
        )
        if run["trust"] == "physical_bound":
            bound_problem = next(p for p in run["problems"] if p.startswith("client reports"))
            return f"{head}; {bound_problem}; trust the physical bound for throughput and {latency}"
        return f"{head}; reconcile with the log of the same run (same engine, time, input and output lengths and concurrency)"
    source = "the engine log" if run["trust"] == "server_log" else "the physical bound"
    return f"{run['problems'][0]}; trust {source} for throughput and {latency}"


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
        Optional facts about the matching server-log phase: `engine`, `concurrency` (or
        `n_running`), `input_tokens` (or `context_tokens_per_request`), `start` and `end`,
        `output_tokens` (per request, estimated), `gen_tokens` (tokens generated in the phase);
        anything else is carried through. An engine, input length, time span, concurrency or
        output length that differs from the client's run is a mismatch (`run_mismatches`): a
        problem, and the engine's figures are then not compared.
    rel_tol
        Relative slack before the client is called above the engine's rate or token count.

    Returns
    -------
    dict
        `runs` (one verdict per run with an output throughput: bound, ratios, `trust`,
        `mismatches`, `problems`, `notes`), overall `trust` ('client', 'server_log',
        'physical_bound' or 'undetermined'), and `reason`, one sentence saying which source to
        trust and why.
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
        trust, reason = bad[0]["trust"], _reason(bad[0])
    elif all(run["trust"] == "undetermined" for run in runs):
        trust, reason = "undetermined", "the file has neither the token counts for a bound nor a server rate"
    else:
        trust = "client"
        reason = "; ".join(runs[0]["notes"]) or "client throughput is consistent"
    return {"trust": trust, "reason": reason, "runs": runs, "server_phase": phase or None}
