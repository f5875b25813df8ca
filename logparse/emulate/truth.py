"""Ground truth of an emulated run, as a JSON-serialisable dict.

Throughput figures are computed from the values *as printed* (rounded to the engine's printed
precision), so a parser that reads the log right must reproduce them exactly.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from logparse.emulate.eras import SglangEra, VllmEra
from logparse.emulate.params import RunParams
from logparse.emulate.render import Record, at
from logparse.emulate.sglang_build import DecodeValues, PrefillValues, SglangBuild
from logparse.emulate.simulate import PhaseTrace, Request, Step
from logparse.emulate.vllm_build import Sample, VllmBuild


def printed(value: float, digits: int) -> float:
    """`value` as the engine prints it with `%.{digits}f`."""
    return float(f"{value:.{digits}f}")


def summary(values: Sequence[float], concurrency: int) -> dict[str, Any]:
    """Mean / median / min / max / CV of a window's gen throughput, plus per-request figures."""
    mean = statistics.fmean(values)
    per_request = mean / concurrency
    return {
        "gen_tps_mean": mean,
        "gen_tps_median": statistics.median(values),
        "gen_tps_min": min(values),
        "gen_tps_max": max(values),
        "gen_tps_cv": statistics.pstdev(values) / mean if mean else 0.0,
        "per_request_tps": per_request,
        "ms_per_token": 1000.0 / per_request if per_request else None,
    }


def _iso(start: datetime, t: float) -> str:
    return at(start, t).isoformat(timespec="milliseconds")


def _phase_lines(records: list[Record], index: int) -> list[int]:
    return [r.line for r in records if r.meta.get("phase") == index and r.line]


def _request_truth(
    req: Request, start: datetime, measured: dict[int, float | None], lines: dict[int, int]
) -> dict[str, Any]:
    chunks = [
        {
            "cached_tokens": c.cached,
            "tokens": c.tokens,
            "new_seq": c.new_seq,
            "rate_tps": c.rate_tps,
            "recompute": c.recompute,
            "line": lines.get(c.step),
            "input_tps": measured.get(c.step),
        }
        for c in req.chunks
    ]
    return {
        "id": req.rid,
        "arrival": _iso(start, req.arrival),
        "first_token": _iso(start, req.first_token) if req.first_token is not None else None,
        "finish": _iso(start, req.finish) if req.finish is not None else None,
        "ttft_s": (req.first_token - req.arrival) if req.first_token is not None else None,
        "e2e_s": (req.finish - req.arrival) if req.finish is not None else None,
        "preemptions": req.preemptions,
        "chunks": chunks,
    }


def _first_chunks(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not requests:
        return []
    return [
        {"cached_tokens": c["cached_tokens"], "input_tps": c["input_tps"]}
        for c in requests[0]["chunks"]
        if c["new_seq"] == 1 and not c["recompute"]
    ]


def _phase_base(
    params: RunParams, phase: PhaseTrace, start: datetime, records: list[Record]
) -> dict[str, Any]:
    p = params.phases[phase.index]
    lines = _phase_lines(records, phase.index)
    return {
        "index": phase.index,
        "start": _iso(start, phase.arrival),
        "end": _iso(start, phase.end),
        "duration_s": phase.end - phase.arrival,
        "line_range": [min(lines), max(lines)] if lines else None,
        "concurrency": p.concurrency,
        "input_tokens": p.input_len,
        "output_tokens": p.output_len,
    }


def _window(
    stable: list[dict[str, Any]], concurrency: int, rows: Sequence[dict[str, Any]] = ()
) -> dict[str, Any] | None:
    """The qualifying samples of a phase (`lines`, their statistics) and, under ``run``, the
    longest unbroken run of them among the phase's `rows` (the window `analysis.windows`
    reports; of equally long runs the steadiest, then the first)."""
    if not stable:
        return None
    window = {
        "samples": len(stable),
        "lines": [s["line"] for s in stable],
        "timestamps": [s["ts"] for s in stable],
        "start": stable[0]["time"],
        "end": stable[-1]["time"],
        "gen_tps": [s["gen_tps"] for s in stable],
    }
    window.update(summary(window["gen_tps"], concurrency))
    window["context_tokens_per_request"] = statistics.fmean(s["ctx_true"] for s in stable)
    window["context_tokens_per_request_printed"] = statistics.fmean(s["ctx_printed"] for s in stable)
    window["run"] = _longest_run(stable, concurrency, rows or stable)
    return window


def _longest_run(
    stable: list[dict[str, Any]], concurrency: int, rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    wanted = {id(r) for r in stable}
    runs: list[list[dict[str, Any]]] = []
    for i, row in enumerate(rows):
        if id(row) not in wanted:
            continue
        if runs and i > 0 and id(rows[i - 1]) in wanted:
            runs[-1].append(row)
        else:
            runs.append([row])

    def cv(run: list[dict[str, Any]]) -> float:
        values = [r["gen_tps"] for r in run]
        mean = statistics.fmean(values)
        return statistics.pstdev(values) / mean if mean else float("inf")

    best = min(runs, key=lambda run: (-len(run), cv(run)))
    gen = [r["gen_tps"] for r in best]
    context = {"context_tokens_per_request_printed": statistics.fmean(r["ctx_printed"] for r in best)}
    return {
        "samples": len(best),
        "lines": [r["line"] for r in best],
        "runs": len(runs),
        **summary(gen, concurrency),
        **context,
    }


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _range(values: Sequence[float]) -> dict[str, float | None]:
    return {"mean": _mean(values), "min": min(values, default=None), "max": max(values, default=None)}


# -- vLLM ----------------------------------------------------------------------------------------


def vllm_truth(params: RunParams, era: VllmEra, build: VllmBuild, start: datetime) -> dict[str, Any]:
    """Ground truth of a vLLM build (after rendering, so line numbers are known)."""
    aggregated = params.aggregate_engine_logging
    # An aggregated line prints the engines' mean KV usage: in tokens, of all dp pools together.
    pool = params.startup.kv_pool_tokens * (params.dp if aggregated else 1)
    phases = []
    for phase in build.trace.phases:
        n = params.phases[phase.index].concurrency
        samples = [s for s in build.samples if s.printed and s.phase == phase.index]
        rows = [_vllm_row(s, start, pool) for s in samples]
        if params.dp > 1:
            split = [sum(1 for r in phase.requests if r.group == d) for d in range(params.dp)]
            if not aggregated:
                rows = _vllm_dp_rows(rows, [s.engine for s in samples], split)
        stable = [r for r in rows if r["running"] == n and r["waiting"] == 0 and r["prompt_tps"] == 0.0]
        truth = _phase_base(params, phase, start, build.records)
        truth["sample_lines"] = [min(r["line"] for r in rows), max(r["line"] for r in rows)] if rows else None
        truth["stable"] = _window(stable, n, rows)
        if params.dp > 1:
            truth["dp_split"] = split
            if truth["stable"] is not None and not aggregated:
                truth["stable"]["engine_lines"] = [r["engine_lines"] for r in stable]
        requests = [_request_truth(r, start, {}, {}) for r in phase.requests]
        # a line printing nothing running or waiting is idle (its trailing averages too): no phase's
        prompt = [r["prompt_tps"] for r in rows if r["prompt_tps"] > 0 and (r["running"] or r["waiting"])]
        truth["prefill"] = {
            "input_tps_mean": _mean(prompt),
            "input_tps_samples": prompt,
            "first_request_chunks": _first_chunks(requests),
            "requests": requests,
        }
        truth["spec"] = _vllm_spec(params, era, samples, {r["line"] for r in stable})
        truth["counts"] = _vllm_phase_counts(era, build, samples, phase.index)
        phases.append(truth)
    return phases_and_totals(
        params, build.records, phases, build.startup, build.ready_record, start, _vllm_counts(era, build)
    )


def _vllm_row(s: Sample, start: datetime, pool: int) -> dict[str, Any]:
    v = s.values
    assert s.stats is not None
    running = v["running"]
    kv_pct = printed(v["kv_pct"], 1)
    return {
        "line": s.stats.line,
        "ts": s.stats.ts,
        "time": _iso(start, s.t),
        "prompt_tps": printed(v["prompt_tps"], 1),
        "gen_tps": printed(v["gen_tps"], 1),
        "running": running,
        "waiting": v["waiting"],
        "kv_pct": kv_pct,
        "ctx_true": v["kv_tokens"] / running if running else 0.0,
        "ctx_printed": kv_pct / 100 * pool / running if running else 0.0,
    }


def _vllm_dp_rows(rows: list[dict[str, Any]], engines: list[int], split: list[int]) -> list[dict[str, Any]]:
    """The engines' stats lines of one tick (the API server prints them together) added up into
    one row: counts and printed throughputs summed, KV context over the summed running count.
    A tick is a row only when every engine holding requests in the phase printed at it."""
    busy = {d for d, count in enumerate(split) if count}
    by_time: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for row, engine in zip(rows, engines, strict=True):
        by_time.setdefault(row["time"], []).append((engine, row))
    out = []
    for part in by_time.values():
        if not busy <= {d for d, _r in part}:
            continue
        rs = [r for _d, r in sorted(part, key=lambda dr: dr[0])]
        running = sum(r["running"] for r in rs)
        out.append(
            {
                "line": max(r["line"] for r in rs),
                "engine_lines": [r["line"] for r in rs],
                "ts": rs[0]["ts"],
                "time": rs[0]["time"],
                "prompt_tps": sum(r["prompt_tps"] for r in rs),
                "gen_tps": sum(r["gen_tps"] for r in rs),
                "running": running,
                "waiting": sum(r["waiting"] for r in rs),
                "kv_pct": statistics.fmean(r["kv_pct"] for r in rs),
                "ctx_true": sum(r["ctx_true"] * r["running"] for r in rs) / running if running else 0.0,
                "ctx_printed": sum(r["ctx_printed"] * r["running"] for r in rs) / running if running else 0.0,
            }
        )
    return sorted(out, key=lambda r: r["line"])


def _vllm_spec(
    params: RunParams, era: VllmEra, samples: list[Sample], stable_lines: set[int]
) -> dict[str, Any] | None:
    k = params.spec_tokens
    specs = [s for s in samples if s.spec is not None and s.spec_values is not None]
    if not k or not specs:
        return None
    if not era.v1:
        last = specs[-1].spec_values or {}
        rate = printed(last["accept_rate"], 3)
        return {
            "mean_accept_len": 1 + rate * k,
            "accept_rate": rate,
            "drafted_tps": None,
            "accepted_tps": None,
            "wasted_draft_pct": 100 * (1 - rate),
            "cumulative": True,
            "accepted": last["accepted"],
            "drafted": last["drafted"],
            "lines": [s.spec.line for s in specs if s.spec],
        }
    stable = [s for s in specs if s.stats is not None and s.stats.line in stable_lines] or specs
    vals = [s.spec_values for s in stable if s.spec_values]
    lens = [printed(v["mean_accept_len"], 2) for v in vals]
    rates = [printed(v["accept_rate_pct"], 1) / 100 for v in vals]
    drafted = [printed(v["drafted_tps"], 2) for v in vals]
    accepted = [printed(v["accepted_tps"], 2) for v in vals]
    every = [s.spec_values for s in specs if s.spec_values]
    total_acc = sum(v["accepted"] for v in every)
    total_draft = sum(v["drafted"] for v in every)
    return {
        "mean_accept_len": _mean(lens),
        "accept_rate": _mean(rates),
        "drafted_tps": _mean(drafted),
        "accepted_tps": _mean(accepted),
        "wasted_draft_pct": 100 * (1 - sum(accepted) / sum(drafted)) if sum(drafted) else None,
        "accept_len_range": _range(lens),
        "accept_rate_range": _range(rates),
        "window": "stable" if stable is not specs else "phase",
        "phase_accepted": total_acc,
        "phase_drafted": total_draft,
        "phase_wasted_draft_pct": 100 * (1 - total_acc / total_draft) if total_draft else None,
        "lines": [s.spec.line for s in stable if s.spec],
    }


def _vllm_phase_counts(era: VllmEra, build: VllmBuild, samples: list[Sample], index: int) -> dict[str, int]:
    recs = [r for r in build.records if r.meta.get("phase") == index]
    return {
        "oom": sum(1 for r in recs if r.tag == "oom"),
        "jit_compiles": sum(1 for r in recs if r.tag == "jit"),
        "preemptions": _revealed_preemptions(era, samples, recs),
        "preemptions_simulated": sum(
            r.preemptions for p in build.trace.phases if p.index == index for r in p.requests
        ),
        "retractions": 0,
    }


def _revealed_preemptions(era: VllmEra, samples: list[Sample], recs: list[Record]) -> int:
    if era.stats_preemptions:
        return sum(s.values["preemptions"] for s in samples if s.printed)
    warnings = [r for r in recs if r.tag == "preemption"]
    return int(warnings[-1].body.rsplit("=", 1)[1]) if warnings else 0


def _vllm_counts(era: VllmEra, build: VllmBuild) -> dict[str, int]:
    recs = build.records
    samples = [s for s in build.samples if s.printed]
    return {
        "preemptions": _revealed_preemptions(era, samples, recs),
        "preemption_lines": sum(1 for r in recs if r.tag == "preemption"),
        "preemptions_simulated": sum(r.preemptions for r in build.trace.requests),
        "retractions": 0,
    }


# -- SGLang --------------------------------------------------------------------------------------


def sglang_truth(params: RunParams, era: SglangEra, build: SglangBuild, start: datetime) -> dict[str, Any]:
    """Ground truth of an SGLang build (after rendering).

    With DP groups, a sample of the stable window is one round of the groups' Decode lines,
    each group holding requests contributing one line (`_dp_rows`). Groups that drifted apart
    print in turn, so the window's ``gen_tps_mean`` is the sum over the groups of each group's
    mean printed rate, and ``samples`` counts rounds (one per logging interval), not lines."""
    # Decode and Prefill lines in print order: a Decode line is stable only if no Prefill line
    # of its DP group was printed since the group's previous Decode line.
    events = sorted(
        [(rec.line, "prefill", step, rec, v) for step, rec, v in build.prefills]
        + [(rec.line, "decode", step, rec, v) for step, rec, v in build.decodes],
        key=lambda e: e[0],
    )
    prefill_since: dict[int, bool] = {}
    seen_prefill = dict.fromkeys(range(params.dp), True)
    for line, kind, step, _rec, _v in events:
        if kind == "prefill":
            seen_prefill[step.group] = True
        else:
            prefill_since[line] = seen_prefill[step.group]
            seen_prefill[step.group] = False
    measured = _measured_prefill(build, era)
    lines = {step.index: rec.line for step, rec, _ in build.prefills}
    phases = []
    for phase in build.trace.phases:
        n = params.phases[phase.index].concurrency
        decodes = [(step, rec, v) for step, rec, v in build.decodes if step.phase == phase.index]
        rows: list[dict[str, Any]] = [
            {
                "line": rec.line,
                "ts": rec.ts,
                "time": _iso(start, step.t1),
                "gen_tps": printed(v["gen_tps"], 2),
                "running": v["running"],
                "queue": v["queue"],
                "ctx_true": step.kv_tokens / v["running"],
                "ctx_printed": v["tokens"] / v["running"],
                "accept_len": printed(v["accept_len"], 2) if v["accept_len"] is not None else None,
                "accept_rate": printed(v["accept_rate"], 2) if v["accept_rate"] is not None else None,
                "prefill_since": prefill_since[rec.line],
            }
            for step, rec, v in decodes
        ]
        if params.dp > 1:
            members = [r.group for r in phase.requests]
            split = [members.count(g) for g in range(params.dp)]
            rows = _dp_rows(rows, [step.group for step, _r, _v in decodes], split)
        stable = [r for r in rows if r["running"] == n and r["queue"] == 0 and not r["prefill_since"]]
        truth = _phase_base(params, phase, start, build.records)
        prefills = [(step, rec, v) for step, rec, v in build.prefills if step.phase == phase.index]
        sample_lines = [rec.line for _s, rec, _v in prefills] + [r["line"] for r in rows]
        truth["sample_lines"] = [min(sample_lines), max(sample_lines)] if sample_lines else None
        truth["stable"] = _window(stable, n, rows)
        if params.dp > 1:
            truth["dp_split"] = split
            truth["dp_aligned"] = _dp_aligned(decodes, split)
            if truth["stable"] is not None:
                truth["stable"]["group_lines"] = [s["group_lines"] for s in stable]
        requests = [_request_truth(r, start, measured, lines) for r in phase.requests]
        inputs = (
            [printed(v["input_tps"], 2) for _s, _r, v in _after_first(prefills)]
            if era.prefill == "P14"
            else []
        )
        truth["prefill"] = {
            "input_tps_mean": _mean(inputs),
            "input_tps_samples": inputs,
            "first_request_chunks": _first_chunks(requests),
            "requests": requests,
        }
        truth["spec"] = _sglang_spec(params, era, stable or rows)
        recs = [r for r in build.records if r.meta.get("phase") == phase.index]
        truth["counts"] = {
            "oom": sum(1 for r in recs if r.tag == "oom"),
            "jit_compiles": sum(1 for r in recs if r.tag == "jit"),
            "preemptions": 0,
            "retractions": sum(r.meta.get("count", 0) for r in recs if r.tag == "retraction"),
        }
        phases.append(truth)
    counts = {
        "preemptions": 0,
        "preemption_lines": 0,
        "preemptions_simulated": sum(r.preemptions for r in build.trace.requests),
        "retractions": sum(r.meta.get("count", 0) for r in build.records if r.tag == "retraction"),
    }
    return phases_and_totals(params, build.records, phases, build.startup, build.ready_record, start, counts)


def _after_first(
    prefills: list[tuple[Step, Record, PrefillValues]],
) -> list[tuple[Step, Record, PrefillValues]]:
    """Each DP group's Prefill lines but its first of the phase (whose interval starts idle)."""
    seen: set[int] = set()
    out = []
    for item in prefills:
        if item[0].group in seen:
            out.append(item)
        seen.add(item[0].group)
    return out


def _dp_rows(rows: list[dict[str, Any]], groups: list[int], split: list[int]) -> list[dict[str, Any]]:
    """DP groups' Decode rows combined into one sample per round: in print order, a round is
    complete at the line by which every group holding requests in the phase has printed since
    the previous round, and sums each group's latest line (so each line counts once): counts
    and throughputs summed, KV context over the summed running count, accept length averaged.
    Aligned groups print a round at one instant; drifted ones (`_dp_aligned`) print in turn.
    An unfinished round (a group printed its last line first) is no sample."""
    active = {g for g, n in enumerate(split) if n}
    out = []
    pending: dict[int, dict[str, Any]] = {}
    for row, g in sorted(zip(rows, groups, strict=True), key=lambda rg: rg[0]["line"]):
        pending[g] = row
        if set(pending) != active:
            continue
        rs = [r for _g, r in sorted(pending.items())]
        pending = {}
        running = sum(r["running"] for r in rs)
        lens = [r["accept_len"] for r in rs if r["accept_len"] is not None]
        rates = [r["accept_rate"] for r in rs if r["accept_rate"] is not None]
        out.append(
            {
                "line": row["line"],
                "group_lines": [r["line"] for r in rs],
                "ts": row["ts"],
                "time": row["time"],
                "gen_tps": sum(r["gen_tps"] for r in rs),
                "running": running,
                "queue": sum(r["queue"] for r in rs),
                "ctx_true": sum(r["ctx_true"] * r["running"] for r in rs) / running,
                "ctx_printed": sum(r["ctx_printed"] * r["running"] for r in rs) / running,
                "accept_len": _mean(lens),
                "accept_rate": _mean(rates),
                "prefill_since": any(r["prefill_since"] for r in rs),
            }
        )
    return out


def _dp_aligned(decodes: list[tuple[Step, Record, DecodeValues]], split: list[int]) -> bool:
    """Every group with requests prints its Decode lines at the same instants. Each group counts
    its own decode steps (`forward_ct_decode`), so groups that were idle or prefilling while
    others decoded drift apart; their lines then never coincide, and each sample of the phase
    combines one round of the groups' lines (`_dp_rows`)."""
    active = [g for g, n in enumerate(split) if n]
    times = {g: [step.t1 for step, _r, _v in decodes if step.group == g] for g in active}
    return all(times[g] == times[active[0]] for g in active)


def _measured_prefill(build: SglangBuild, era: SglangEra) -> dict[int, float | None]:
    """Per prefill step, the printed input throughput that measures it: the value on the next
    Prefill line of its DP group (`batch tokens / time since the previous Prefill line`) when
    that line was printed the moment this batch finished; None otherwise (idle or decode in
    between)."""
    out: dict[int, float | None] = {}
    if era.prefill != "P14":
        return out
    for group in sorted({step.group for step, _r, _v in build.prefills}):
        mine = [item for item in build.prefills if item[0].group == group]
        following = [*mine[1:], None]
        for (step, _rec, _v), nxt in zip(mine, following, strict=True):
            direct = nxt is not None and abs(nxt[0].t0 - step.t1) < 1e-9
            out[step.index] = printed(nxt[2]["input_tps"], 2) if nxt is not None and direct else None
    return out


def _sglang_spec(params: RunParams, era: SglangEra, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    k = params.spec_tokens
    rows = [r for r in rows if r["accept_len"] is not None]
    if not k or not rows:
        return None
    lens = [r["accept_len"] for r in rows]
    rates = [(a - 1) / k for a in lens]
    printed_rates = [r["accept_rate"] for r in rows if r["accept_rate"] is not None]
    drafted = [r["gen_tps"] / r["accept_len"] * k for r in rows]
    accepted = [r["gen_tps"] / r["accept_len"] * (r["accept_len"] - 1) for r in rows]
    return {
        "mean_accept_len": _mean(lens),
        "accept_rate": _mean(rates),
        "drafted_tps": _mean(drafted),
        "accepted_tps": _mean(accepted),
        "wasted_draft_pct": 100 * (1 - sum(accepted) / sum(drafted)) if sum(drafted) else None,
        "accept_len_range": _range(lens),
        "accept_rate_printed_range": _range(printed_rates),
        "accept_rate_meaning": era.accept_rate,
        "lines": [r["line"] for r in rows],
    }


# -- both ----------------------------------------------------------------------------------------


def phases_and_totals(
    params: RunParams,
    records: list[Record],
    phases: list[dict[str, Any]],
    startup: dict[str, Any],
    ready: Record,
    start: datetime,
    counts: dict[str, int],
) -> dict[str, Any]:
    """Assemble the run-level truth: start-up, phases, degradation, counts, event line numbers."""
    startup = dict(
        startup, ready_line=ready.line, ready_ts=ready.ts, ready_time=_iso(start, startup["ready_s"])
    )
    events = {
        tag: [r.line for r in records if r.tag == tag]
        for tag in ("oom", "jit", "preemption", "retraction", "warning")
    }
    ready_t = startup["ready_s"]
    counts = dict(
        counts,
        oom=len(events["oom"]),
        oom_after_ready=sum(1 for r in records if r.tag == "oom" and r.t > ready_t),
        jit_compiles=len(events["jit"]),
        warnings=len(events["warning"]),
    )
    return {
        "startup": startup,
        "phases": phases,
        "degradation": degradation(phases),
        "counts": counts,
        "events": events,
    }


def degradation(phases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stable per-request throughput ratios between consecutive input lengths (short over long)."""
    stable = sorted((p for p in phases if p["stable"]), key=lambda p: p["input_tokens"])
    out = []
    for short, long in itertools.pairwise(stable):
        if short["input_tokens"] == long["input_tokens"]:
            continue
        a, b = short["stable"], long["stable"]
        if not b["per_request_tps"] or not a["context_tokens_per_request"]:
            continue
        out.append(
            {
                "from_input_tokens": short["input_tokens"],
                "to_input_tokens": long["input_tokens"],
                "ratio": a["per_request_tps"] / b["per_request_tps"],
                "peak_over_mean": (a["gen_tps_max"] / short["concurrency"]) / b["per_request_tps"],
                "context_ratio": b["context_tokens_per_request"] / a["context_tokens_per_request"],
            }
        )
    return out
