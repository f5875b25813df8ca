"""A card per run: what ran (engine, version, model, GPUs), when and how well it was read (span,
coverage), what start-up gave (KV pool, cold start) and what went wrong (OOM, preemption, JIT
counts); its charts and its diagnostics folded behind it (`<details>`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from logparse.escape import for_html as esc
from logparse.report.digest import SEVERITY_ORDER, SEVERITY_TITLES, diagnostic_anchor, slug
from logparse.report.frames import LogRun


def _seconds(value: float | None) -> str | None:
    if value is None:
        return None
    return f"{value:,.0f} s" if value < 120 else f"{value:,.0f} s ({value / 60:.1f} min)"


def card_facts(facts: dict[str, Any], fmt: Callable[[Any], str]) -> list[tuple[str, str]]:
    """(label, text) of a run card, from `facts.run_facts` (plain text, not yet escaped)."""
    start, end = facts.get("start"), facts.get("end")
    span = None
    if start is not None and end is not None:
        span = f"{fmt(start)} → {end:%H:%M:%S} ({_seconds(facts.get('span_s'))})"
    cold = _seconds(facts.get("ready_s"))
    if cold is not None and facts.get("weight_load_s") is not None:
        cold += f", weights {facts['weight_load_s']:,.1f} s"
    pool = facts.get("kv_pool_tokens")
    oom = facts.get("oom")
    if oom and facts.get("oom_recovered"):
        oom = f"{oom:,} ({facts['oom_recovered']:,} recovered)"
    preempt = facts.get("preemptions")
    if facts.get("retractions"):
        preempt = f"{preempt or 0:,} (+{facts['retractions']:,} retractions)"
    jit = facts.get("jit")
    if jit and facts.get("runtime_jit") is not None:
        jit = f"{jit:,} ({facts['runtime_jit']:,} at run time)"
    coverage = facts.get("coverage")
    return [
        ("engine", fmt(facts.get("engine"))),
        ("version", fmt(facts.get("version"))),
        ("model", fmt(facts.get("model"))),
        ("GPUs (ranks)", fmt(facts.get("ranks"))),
        ("N / input", f"{fmt(facts.get('concurrency'))} / {fmt(facts.get('inputs'))}"),
        ("phases", fmt(facts.get("phases"))),
        ("engine starts", fmt(facts.get("starts"))),
        ("load span", fmt(span)),
        ("lines typed", f"{coverage:.1%} of {facts['lines']:,}" if coverage is not None else "—"),
        ("KV pool", f"{pool:,} tokens" if pool else "—"),
        ("cold start (ready after)", fmt(cold)),
        ("OOM", fmt(oom)),
        ("preemptions", fmt(preempt)),
        ("JIT compiles", fmt(jit)),
    ]


def diagnostics_html(run: LogRun) -> tuple[str, str]:
    """(summary text, the run's diagnostics grouped by severity as HTML lists)."""
    a = run.analysis
    if a is None or a.diagnostics.is_empty():
        return "no diagnostics", ""
    rows = sorted(a.diagnostics.iter_rows(named=True), key=lambda r: SEVERITY_ORDER.get(r["severity"], 9))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["severity"]] = counts.get(row["severity"], 0) + 1
    summary = ", ".join(f"{n} {SEVERITY_TITLES.get(sev, sev).lower()}" for sev, n in counts.items())
    parts, anchored = [], set()
    for sev in counts:
        items = []
        for row in (r for r in rows if r["severity"] == sev):
            anchor = diagnostic_anchor(run.name, row["code"])
            attr = "" if anchor in anchored else f' id="{esc(anchor)}"'
            anchored.add(anchor)
            items.append(
                f'<li{attr}><span class="sev sev-{esc(sev)}">{esc(sev)}</span>'
                f'<span class="code">{esc(row["code"])}</span> {esc(row["message"])}</li>'
            )
        parts.append(f'<ul class="diag">{"".join(items)}</ul>')
    return summary, "".join(parts)


def card_html(
    run: LogRun, facts: dict[str, Any], charts_html: Sequence[str], fmt: Callable[[Any], str]
) -> str:
    """One run's card: its facts, then its charts and its diagnostics, each folded."""
    cells = "".join(
        f"<div><dt>{esc(label)}</dt><dd>{esc(text)}</dd></div>" for label, text in card_facts(facts, fmt)
    )
    summary, diag = diagnostics_html(run)
    error = f'<p class="meta">Not analysed: {esc(run.error)}</p>' if run.error else ""
    charts = (
        f'<details class="run-charts"><summary>Timeline and charts ({len(charts_html)})</summary>'
        f"{''.join(charts_html)}</details>"
        if charts_html
        else ""
    )
    diagnostics = f'<details class="run-diag"><summary>Diagnostics: {esc(summary)}</summary>{diag}</details>'
    return (
        f'<article class="card" id="run-{esc(slug(run.name))}"><header><h3>{esc(run.name)}</h3>'
        f'<span class="meta">{esc(run.path)}</span></header>{error}<dl class="facts">{cells}</dl>'
        f"{charts}{diagnostics if diag else ''}</article>"
    )
