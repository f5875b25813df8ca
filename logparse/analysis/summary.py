"""The post-mortem summary of one log: a JSON-ready dict and its terminal rendering."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import textwrap
from typing import Any

import polars as pl

from logparse.analysis.analyze import Analysis
from logparse.analysis.coldstart import stages
from logparse.analysis.degradation import render_degradation
from logparse.analysis.diagnostics import effective_capacity
from logparse.analysis.evidence import mark_of
from logparse.analysis.figures import phase_evidence
from logparse.analysis.prefill import first_request_chunks
from logparse.analysis.text import date_mark, fmt, render_table, tokens_label
from logparse.escape import for_terminal


def _clean(value: Any) -> Any:
    """JSON-safe: datetimes as ISO text, NaN as None, nested containers cleaned."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _round(value: Any, digits: int = 2) -> Any:
    return round(value, digits) if isinstance(value, float) else value


def summary_dict(analysis: Analysis) -> dict[str, Any]:
    """The summary as plain JSON types.

    Keys: ``source``, ``engine``, ``version``, ``startup`` (the first analysed engine start's,
    with ``evidence`` per figure), ``segments`` (one per engine start: its lines, readiness,
    identity and start-up figures), ``phases`` (each with ``segment``, ``stable``, ``prefill``,
    ``spec`` and ``evidence``: how sure each figure is, `figures.phase_evidence`),
    ``no_phases_reason``, ``unparsed_evidence`` (line families seen but not typed),
    ``degradation``, ``counts``, ``diagnostics``, ``options``. A phase without a stable window has
    ``stable: null`` and says why in ``stable_note``; a log without phases says why in
    ``no_phases_reason`` (else null).
    """
    a = analysis
    pool = effective_capacity(a.samples) or a.startup.get("kv_pool_tokens")
    windows = {r["phase"]: r for r in a.windows.iter_rows(named=True)}
    reasons = {r["phase"]: r["reason"] for r in a.no_window.iter_rows(named=True)}
    prefill = {r["phase"]: r for r in a.prefill.iter_rows(named=True)}
    spec = {r["phase"]: r for r in a.spec.iter_rows(named=True)}
    phases = []
    for ph in a.phases.iter_rows(named=True):
        p = ph["phase"]
        w = windows.get(p)
        stable = None
        note = reasons.get(p)
        if w is not None:
            stable = {
                k: _round(w[k], 3)
                for k in (
                    "samples",
                    "start",
                    "end",
                    "duration_s",
                    "first_line",
                    "last_line",
                    "gen_tps_mean",
                    "gen_tps_median",
                    "gen_tps_min",
                    "gen_tps_max",
                    "cv",
                    "per_request_tps",
                    "per_request_tps_peak",
                    "ms_per_token",
                    "context_tokens_per_request",
                    "trusted",
                    "runs",
                )
            }
            note = w["note"]
        chunks = a.chunks.filter(pl.col("phase") == p) if "phase" in a.chunks.columns else a.chunks.head(0)
        first_chunks = [
            {"cached_tokens": r["cached_tokens"], "input_tps": _round(r["input_tps"])}
            for r in first_request_chunks(chunks).iter_rows(named=True)
        ]
        pf = prefill.get(p, {})
        sp = spec.get(p)
        phases.append(
            {
                "phase": p,
                "segment": ph.get("segment"),
                "start": ph["start"],
                "end": ph["end"],
                "duration_s": ph["duration_s"],
                "first_line": ph["first_line"],
                "last_line": ph["last_line"],
                "concurrency": ph["concurrency"],
                "concurrency_source": ph["concurrency_source"],
                "start_boundary": ph.get("start_boundary"),
                "end_boundary": ph.get("end_boundary"),
                "input_tokens": ph["input_tokens"],
                "input_tokens_estimated": ph["input_tokens_estimated"],
                "input_confidence": ph.get("input_confidence"),
                "evidence": phase_evidence(ph, w, engine=a.engine, pool=pool),
                "n_requests": ph["n_requests"],
                "samples": ph["n_samples"],
                "stable": stable,
                "stable_note": note,
                "prefill": {
                    "input_tps_mean": _round(pf.get("input_tps_mean")),
                    "input_tps_max": _round(pf.get("input_tps_max")),
                    "first_request_chunks": first_chunks,
                },
                "spec": None
                if sp is None
                else {
                    "mean_accept_len": _round(sp["mean_accept_len"], 3),
                    "accept_rate": _round(sp["accept_rate"], 4),
                    "accept_len_min": _round(sp["accept_len_min"], 3),
                    "accept_len_max": _round(sp["accept_len_max"], 3),
                    "per_position": None
                    if sp["per_position"] is None
                    else [round(x, 4) for x in sp["per_position"]],
                    "drafted_tps": _round(sp["drafted_tps"]),
                    "accepted_tps": _round(sp["accepted_tps"]),
                    "wasted_draft_pct": _round(sp["wasted_draft_pct"]),
                    # SGLang prints no drafted / accepted throughput: `spec` derives them.
                    "throughput_derived": sp["source"] == "sglang_decode_batch",
                    "spec_tokens": sp["spec_tokens"],
                },
            }
        )
    return _clean(
        {
            "source": a.source,
            "engine": a.engine,
            "version": a.version,
            "times": a.times,
            "startup": _startup_dict(a, a.startup),
            "segments": segment_dicts(a),
            "phases": phases,
            "no_phases_reason": a.no_phases_reason,
            "unparsed_evidence": [dataclasses.asdict(f) for f in a.unparsed],
            "degradation": [
                {k: _round(v, 3) for k, v in r.items() if k != "group"}
                for r in a.degradation.iter_rows(named=True)
            ],
            "counts": a.counts,
            "diagnostics": a.diagnostics.select("code", "severity", "message", "phase", "line_no").to_dicts(),
            "options": a.options,
        }
    )


def _startup_dict(a: Analysis, startup: dict[str, Any]) -> dict[str, Any]:
    """One engine start's figures, rounded, with its cold-start stages (`coldstart.stages`)."""
    timeline = a.timeline
    if "segment" in timeline.columns and startup.get("segment") is not None:
        timeline = timeline.filter(pl.col("segment") == startup["segment"]).drop("segment")
    return {
        **{k: _round(v, 3) for k, v in startup.items()},
        "timeline": [{k: _round(v, 2) for k, v in r.items()} for r in stages(timeline).iter_rows(named=True)],
    }


def segment_dicts(a: Analysis) -> list[dict[str, Any]]:
    """The engine starts of the log, each with the start-up figures of an analysed one."""
    startups = {s["segment"]: s for s in a.startups}
    out = []
    for row in a.segments.iter_rows(named=True):
        startup = startups.get(row["segment"])
        out.append(
            {
                **{k: _round(v, 3) for k, v in row.items()},
                "startup": None if startup is None else _startup_dict(a, startup),
            }
        )
    return out


def input_label(ph: dict[str, Any]) -> str:
    """A phase's input length as the tables print it: `64K`, `~64K` estimated, `?64K` guessed."""
    text = tokens_label(ph["input_tokens"])
    confidence = ph.get("input_confidence") or ("estimated" if ph.get("input_tokens_estimated") else "exact")
    return text if text == "-" else mark_of(confidence) + text


def evidence_notes(summary: dict[str, Any]) -> list[str]:
    """One line per figure of the phases that is not exact: what it is and how it was obtained."""
    notes = []
    for ph in summary["phases"]:
        for name, ev in (ph.get("evidence") or {}).items():
            if ev["confidence"] == "exact":
                continue
            value = ph["input_tokens"] if name == "input_tokens" else (ph["stable"] or {}).get(name)
            bound = "" if ev.get("bound") is None else f", ± {ev['bound']:,.0f}"
            notes.append(
                f"phase {ph['phase']}: {FIGURE_NAMES.get(name, name)} {fmt(value, 0)} is "
                f"{ev['confidence']} ({ev['how']}{bound})"
            )
    return notes


FIGURE_NAMES = {
    "input_tokens": "input",
    "context_tokens_per_request": "ctx/req",
    "kv_pool_tokens": "KV pool",
    "init_s": "engine init",
    "ready_s": "ready after",
}


def render_windows(summary: dict[str, Any]) -> str:
    """The phase and stable-window table, one row per phase (with its engine start when the log
    holds several), then the reason for every gap and how each figure that is not exact was
    obtained (`~` estimated, `?` guessed)."""
    rows, notes, bounds = [], [], []
    several = len(summary.get("segments") or []) > 1
    guessed = date_mark(summary.get("times"), year_shown=False)
    for ph in summary["phases"]:
        s = ph["stable"]
        span = f"{guessed}{fmt(_parse(ph['start']))[5:]} +{fmt(ph['duration_s'], 0)}s"
        base = [
            *([fmt(ph.get("segment"))] if several else []),
            str(ph["phase"]),
            span,
            input_label(ph),
            fmt(ph["concurrency"]),
        ]
        if s is None:
            rows.append([*base, "0", "-", "-", "-", "-", "-", "-", "-"])
        else:
            rows.append(
                [
                    *base,
                    fmt(s["samples"]),
                    fmt(s["duration_s"], 0),
                    fmt(s["gen_tps_mean"]),
                    f"{fmt(s['gen_tps_min'], 0)}-{fmt(s['gen_tps_max'], 0)}",
                    fmt(s["per_request_tps"], 2),
                    fmt(s["ms_per_token"]),
                    fmt(s["cv"], 3),
                    fmt(s["context_tokens_per_request"], 0),
                ]
            )
        if ph["stable_note"]:
            label = "no stable window" if s is None else "stable window"
            notes.append(f"phase {ph['phase']}: {label}: {ph['stable_note']}")
        if ph.get("start_boundary") or ph.get("end_boundary"):
            bounds.append(
                f"phase {ph['phase']} (lines {ph['first_line']}-{ph['last_line']}): begins {ph.get('start_boundary')};"
                f" ends {ph.get('end_boundary')}"
            )
    if not rows:
        return f"no phases: {summary.get('no_phases_reason') or 'no decode activity'}"
    headers = [
        *(["seg"] if several else []),
        "phase",
        "start",
        "input",
        "N",
        "samples",
        "secs",
        "tok/s",
        "min-max",
        "tok/s/req",
        "ms/tok",
        "cv",
        "ctx/req",
    ]
    table = render_table(rows, headers)
    if guessed:
        notes.append(
            f"start {guessed}: the log prints no date; it is taken from "
            f"{(summary.get('times') or {}).get('inferred_from')} (a copied or touched file moves it)"
        )
    notes += evidence_notes(summary)
    text = table + ("\n\n" + "\n".join(notes) if notes else "")
    return text + ("\n\nphase boundaries:\n" + "\n".join(f"  {b}" for b in bounds) if bounds else "")


# Findings that qualify the phase table itself, printed beside it by `windows`.
WINDOW_CODES = (
    "input_estimates_disagree",
    "context_contradicts_input",
    "restarts",
    "no_decode_stats",
    "impossible_value",
)


def input_warnings(summary: dict[str, Any]) -> list[str]:
    """The summary's findings that qualify every figure of it, one line each (escaped for the
    terminal): its problems reading the input (``input warning: ...``), evidence seen but not
    typed (``unparsed_*``) and the findings about the phase table itself (`WINDOW_CODES`)."""
    out = []
    for d in summary["diagnostics"]:
        code = str(d["code"])
        if code.startswith("input_") and code != "input_estimates_disagree":
            out.append(for_terminal(f"input warning: {d['message']}"))
        elif code.startswith("unparsed_") or code in WINDOW_CODES:
            out.append(for_terminal(f"{d['severity']}: {code}: {d['message']}"))
    return out


def _parse(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


TEXT_WIDTH = 100  # the diagnostics table is wrapped to fit a terminal this wide


def _wrapped_diagnostics(diags: list[dict[str, Any]]) -> list[list[str]]:
    """Rows of the diagnostics table, each message wrapped under its own column."""
    lead = max(len("severity"), *(len(d["severity"]) for d in diags)) + max(
        len("code"), *(len(d["code"]) for d in diags)
    )
    width = max(40, TEXT_WIDTH - lead - 4)
    rows = []
    for d in diags:
        lines = textwrap.wrap(str(d["message"]), width=width, break_on_hyphens=False) or [""]
        rows.append([d["severity"], d["code"], lines[0]])
        rows.extend(["", "", more] for more in lines[1:])
    return rows


def kv_pool_text(s: dict[str, Any]) -> str:
    """The KV pool of start-up figures `s` with its mark (`?2,687,776 tokens` when guessed)."""
    text = fmt(s.get("kv_pool_tokens"), unit="tokens")
    confidence = ((s.get("evidence") or {}).get("kv_pool_tokens") or {}).get("confidence")
    return text if text == "-" else mark_of(confidence) + text


def kv_pool_range_note(s: dict[str, Any]) -> str | None:
    """`the ranks print 900,000-916,672 tokens; the smallest (DP1) binds`, when they differ."""
    spread = s.get("kv_pool_range")
    if not spread:
        return None
    return (
        f"the ranks print {spread['min']:,}-{spread['max']:,} tokens; the smallest "
        f"({', '.join(spread['binding'])}) binds"
    )


def render_startup(s: dict[str, Any], *, never_ready: bool = False) -> str:
    """One engine start's figures: `~` marks an estimate, `?` a guess (`evidence`); a start that
    never said it was ready says so instead of a blank."""
    ev = s.get("evidence") or {}

    def shown(key: str, digits: int = 1, unit: str = "") -> str:
        text = fmt(s.get(key), digits, unit=unit)
        return text if text == "-" else mark_of((ev.get(key) or {}).get("confidence")) + text

    ready = (
        "never said ready"
        if never_ready and s.get("ready_s") is None
        else ("≥ " if s.get("ready_s_approx") else "") + fmt(s.get("ready_s"), 1, unit="s")
    )
    rows = [
        [
            "weights",
            fmt(s.get("weights_gib"), 2, unit="GiB"),
            "loaded in",
            shown("weight_load_s", unit="s"),
        ],
        ["KV pool", kv_pool_text(s), "size", fmt(s.get("kv_gib"), 2, unit="GiB")],
        *[
            [
                f"  {pool['pool']} pool",
                fmt(pool.get("tokens"), unit="states" if pool["pool"] == "mamba" else "tokens"),
                "size",
                fmt(pool.get("gib"), 2, unit="GiB")
                + ("" if pool.get("peak_usage") is None else f", peak usage {pool['peak_usage']:.2f}")
                + (" (binding)" if pool["pool"] == s.get("kv_binding_pool") else ""),
            ]
            for pool in s.get("kv_pools") or []
        ],
        ["max concurrency", fmt(s.get("max_concurrency"), 2), "context", fmt(s.get("context_len"))],
        [
            "CUDA graphs",
            fmt(s.get("cuda_graph_s"), 1, unit="s"),
            "memory",
            fmt(s.get("cuda_graph_gib"), 2, unit="GiB"),
        ],
        [
            "compile",
            fmt(s.get("compile_s"), 1, unit="s"),
            "engine init",
            fmt(s.get("init_s"), 1, unit="s") + (" (inferred)" if s.get("init_s_inferred") else ""),
        ],
        ["ready after", ready, "", ""],
    ]
    notes = [
        f"  {FIGURE_NAMES.get(k, k)}: {e['confidence']} ({e['how']})"
        for k, e in ev.items()
        if e["confidence"] != "exact" and k != "init_s"
    ]
    spread = kv_pool_range_note(s)
    if spread:
        notes.append(f"  KV pool: {spread}")
    return "\n".join([render_table(rows, None, align="lrlr", indent="  "), *notes])


def render_cold_start(startup: dict[str, Any], title: str) -> list[str]:
    """The cold-start stage table of one start (nothing when it has no stage)."""
    if not startup.get("timeline"):
        return []
    rows = [
        [
            t["stage"],
            fmt(t["ranks"]),
            fmt(t["seconds"], 1),
            fmt(t["seconds_max"], 1),
            fmt(t["first_at_s"], 1),
            fmt(t["last_at_s"], 1),
        ]
        for t in startup["timeline"]
    ]
    return ["", title, render_table(rows, ["stage", "ranks", "took", "slowest", "first at", "last at"])]


def render_segments(segments: list[dict[str, Any]]) -> str:
    """The engine starts of a log: lines, ready, CUDA graph capture, phases, model and TP."""
    rows = [
        [
            str(g["segment"]),
            f"{g['first_line']}-{g['last_line']}",
            "-" if g["ready"] is None else ("yes" if g["ready"] else "no"),
            fmt(g["ready_s"], 1),
            fmt(g["cuda_graph_s"], 1),
            fmt(g["phases"]),
            fmt(g["model"]),
            fmt(g["tensor_parallel"]),
        ]
        for g in segments
    ]
    return render_table(
        rows,
        ["start", "lines", "ready", "ready after s", "CUDA graphs s", "phases", "model", "TP"],
        align="llllrrll",
    )


def spec_notes(summary: dict[str, Any]) -> list[str]:
    """Under the speculative-decoding table: which phases' drafted and accepted tok/s are derived
    (SGLang prints neither) and how."""
    derived = [
        ph
        for ph in summary["phases"]
        if (ph["spec"] or {}).get("throughput_derived") and ph["spec"]["drafted_tps"]
    ]
    if not derived:
        return []
    k = derived[0]["spec"].get("spec_tokens")
    drafted = f"gen ÷ accept len × {k} draft tokens" if k else "accepted ÷ the printed accept rate"
    phases = ", ".join(str(ph["phase"]) for ph in derived)
    return [
        f"phase {phases}: drafted and accepted tok/s are derived, not printed (SGLang prints accept len "
        f"and gen throughput): drafted = {drafted}, accepted = gen ÷ accept len × (accept len − 1)"
    ]


def render_summary(summary: dict[str, Any]) -> str:
    """The whole post-mortem as readable text (control characters from the log or its path made
    visible: a file name or a logged string cannot drive the reader's terminal)."""
    s = summary["startup"]
    out = [
        f"{summary['source']}: {summary['engine']}" + (f" {summary['version']}" if summary["version"] else "")
    ]
    segments = summary.get("segments") or []
    hung = any(d["code"] == "start_not_ready" for d in summary["diagnostics"])
    if len(segments) > 1:
        out += [
            "",
            f"engine starts: {len(segments)} (each analysed on its own; `--segment K` for one)",
            render_segments(segments),
        ]
        for seg in segments:
            if seg["startup"] is not None:
                what = f"start {seg['segment']} (lines {seg['first_line']}-{seg['last_line']})"
                out += [
                    "",
                    f"startup of {what}",
                    render_startup(seg["startup"], never_ready=hung and seg["ready"] is False),
                ]
                out += render_cold_start(seg["startup"], f"cold start of {what} (s since its first line)")
    else:
        out += ["", "startup", render_startup(s, never_ready=hung)]
        out += render_cold_start(s, "cold start (s since the first line)")
    out += ["", "phases and stable decode windows", render_windows(summary)]
    pf_rows = []
    for ph in summary["phases"]:
        pf = ph["prefill"]
        chunks = pf["first_request_chunks"]
        curve = " → ".join(fmt(c["input_tps"], 0) for c in chunks if c["input_tps"] is not None)
        pf_rows.append(
            [str(ph["phase"]), fmt(pf["input_tps_mean"], 0), fmt(pf["input_tps_max"], 0), curve[:90] or "-"]
        )
    pf_rows = [r for r in pf_rows if r[1:] != ["-", "-", "-"]]
    if pf_rows:
        out += [
            "",
            "prefill",
            render_table(
                pf_rows,
                ["phase", "mean tok/s", "max tok/s", "first request, chunk by chunk (tok/s)"],
                align="lrrl",
            ),
        ]
    sp_rows = [
        [
            str(ph["phase"]),
            fmt(sp["mean_accept_len"], 2),
            fmt(None if sp["accept_rate"] is None else 100 * sp["accept_rate"], 1),
            fmt(sp["drafted_tps"], 1),
            fmt(sp["accepted_tps"], 1),
            fmt(sp["wasted_draft_pct"], 1),
        ]
        for ph in summary["phases"]
        if (sp := ph["spec"]) is not None
    ]
    if sp_rows:
        out += [
            "",
            "speculative decoding",
            render_table(
                sp_rows, ["phase", "accept len", "accept %", "drafted tok/s", "accepted tok/s", "wasted %"]
            ),
            *spec_notes(summary),
        ]
    if summary["degradation"]:
        out += ["", "degradation (per-request decode throughput)", render_degradation(summary["degradation"])]
    c = summary["counts"]
    out += ["", "counts: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c.items())]
    diags = summary["diagnostics"]
    out += ["", "diagnostics" + ("" if diags else ": none")]
    if diags:
        out.append(render_table(_wrapped_diagnostics(diags), ["severity", "code", "message"], align="lll"))
    return for_terminal("\n".join(out), keep_newlines=True)
