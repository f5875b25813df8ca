"""The report as one self-contained HTML page (Vega inlined) and as Markdown.

Every piece of text that comes from a log or a file name goes through `escape.for_html`
(`html.escape` after making control characters visible); chart specs are embedded as JSON with
`<`, `>` and `&` escaped, so nothing taken from a log can open or close an element.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

import polars as pl

from logparse.escape import for_html as esc
from logparse.escape import for_terminal
from logparse.report.digest import (
    SEVERITY_TITLES,
    Finding,
    Place,
    by_severity,
    findings,
    slug,
    table_anchor,
    top,
)
from logparse.report.sections import ACROSS, ANSWER, CLIENT

if TYPE_CHECKING:
    from logparse.report.build import Report


def _version() -> str:
    try:
        return metadata.version("logparse")
    except metadata.PackageNotFoundError:
        return "?"


def fmt(value: Any) -> str:
    """A table cell as plain text: thousands separators, sensible decimals, — for missing."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "—"
        a = abs(value)
        if a >= 100:
            return f"{value:,.0f}"
        if a >= 1:
            return f"{value:,.2f}"
        return f"{value:.3g}"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, list):
        return ", ".join(fmt(v) for v in value)
    return str(value)


def html_table(frame: pl.DataFrame, *, max_rows: int = 200) -> str:
    """An escaped HTML table of `frame` (at most `max_rows` rows, with a note when cut)."""
    numeric = {c for c, t in frame.schema.items() if t.is_numeric()}
    head = "".join(f"<th>{esc(c.replace('_', ' '))}</th>" for c in frame.columns)
    body = []
    for row in frame.head(max_rows).iter_rows():
        cells = "".join(
            f'<td class="num">{esc(fmt(v))}</td>' if c in numeric else f"<td>{esc(fmt(v))}</td>"
            for c, v in zip(frame.columns, row, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    more = (
        f'<p class="meta">{frame.height - max_rows:,} more rows in the CSV.</p>'
        if frame.height > max_rows
        else ""
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<div class="scroll">{table}</div>{more}'


CORE_NOTE = (
    "As `logparse compare` prints it: each engine's stable decode throughput per input length "
    "(aggregate over the N requests decoding, then per request), who leads by how much, and the "
    "decode degradation between input lengths (mean over mean; peak over mean in brackets)."
)
MARKS_NOTE = (
    "Marks: ~ estimated, ? guessed (an input length inferred, not printed); "
    "`logparse explain` says how each figure is obtained."
)
ANSWER_CHARTS = ("degradation", "bench-slo-verdict")


def _core_html(report: Report) -> str:
    if report.core is None:
        why = next((n.message for n in report.notes if "Core Result" in n.message), None)
        why = why or "it needs logs of two engines with a trusted stable window each (as `logparse compare`)"
        return (
            f'<section id="core-result"><h2>Core Result</h2><p class="meta">Not shown: {esc(why)}</p>'
            "</section>"
        )
    return (
        f'<section id="core-result"><h2>Core Result</h2>{html_table(report.core)}'
        f'<p class="marks">{esc(CORE_NOTE)} {esc(MARKS_NOTE)}</p></section>'
    )


def _place_links(places: Sequence[Place]) -> str:
    return ", ".join(f'<a href="#{esc(p.evidence)}">{esc(p.where)}</a>' for p in places)


def _also(places: Sequence[Place]) -> str:
    """The other places a finding was seen (each with its own figures in the Diagnostics)."""
    return f"; also in {_place_links(places)}" if places else ""


def _top_findings_html(found: Sequence[Finding], total: int) -> str:
    shown = top(found)
    if not shown:
        body = '<p class="meta">No error or warning in these inputs.</p>'
    else:
        items = "".join(
            f'<li><span class="sev sev-{esc(f.severity)}">{esc(f.severity)}</span>'
            f'<a class="code" href="#{esc(f.anchor)}">{esc(f.code)}</a> {esc(f.places[0].message)} '
            f'<span class="where">— {_place_links(f.places[:1])}{_also(f.places[1:])}</span></li>'
            for f in shown
        )
        body = f'<ol class="findings">{items}</ol>'
    more = f'<p class="meta">All {total} findings, by severity: <a href="#diagnostics">Diagnostics</a>.</p>'
    return f'<section id="top-findings"><h2>Top findings</h2>{body}{more}</section>'


def _diagnostics_html(found: Sequence[Finding]) -> str:
    groups = []
    for severity, items in by_severity(found).items():
        entries = []
        for f in items:
            places = "".join(
                f'<li><a href="#{esc(p.evidence)}">{esc(p.where)}</a>: {esc(p.message)}</li>'
                for p in f.places
            )
            entries.append(
                f'<li id="{esc(f.anchor)}"><span class="sev sev-{esc(severity)}">{esc(severity)}</span>'
                f'<span class="code">{esc(f.code)}</span> ({len(f.places)})<ul class="places">{places}</ul></li>'
            )
        title = SEVERITY_TITLES.get(severity, severity)
        opened = " open" if severity == "error" else ""
        groups.append(
            f'<details class="severity sev-group-{esc(severity)}"{opened}><summary>{esc(title)} '
            f'({len(items)})</summary><ul class="diag">{"".join(entries)}</ul></details>'
        )
    body = "".join(groups) or '<p class="meta">Nothing to report.</p>'
    return f'<section id="diagnostics"><h2>Diagnostics</h2>{body}</section>'


def _chart_html(item: Any) -> str:
    links = []
    for kind, path in item.files.items():
        label = kind.upper() if ":" not in kind else f"CSV ({kind.split(':', 1)[1]})"
        links.append(f'<a href="{esc(path)}">{esc(label)}</a>')
    files = f'<p class="files">{" · ".join(links)}</p>' if links else ""
    return (
        f'<figure class="chart" id="{esc(item.id)}" aria-label="{esc(item.title)}">'
        f'<p class="finding"><b>{esc(item.short)}:</b> {esc(item.caption)}</p>'
        f'<div class="vega" data-spec="spec-{esc(item.id)}"></div>{files}</figure>'
    )


def _client_facts_html(report: Report) -> str:
    if report.bench is None:
        return ""
    rows_df = report.bench.rows
    tools = ", ".join(rows_df.get_column("source_tool").unique(maintain_order=True).to_list())
    configs = ", ".join(rows_df.get_column("config").unique(maintain_order=True).to_list())
    levels = sorted({int(c) for c in rows_df.get_column("concurrency").drop_nulls().to_list()})
    models = [m for m in rows_df.get_column("model").unique(maintain_order=True).to_list() if m]
    workloads = [w for w in rows_df.get_column("workload").unique(maintain_order=True).to_list() if w]
    settings = report.bench.settings
    items = [
        ("files", ", ".join(report.bench_files)),
        ("tools", tools),
        ("configurations", configs),
        ("concurrency levels", ", ".join(str(c) for c in levels) or "—"),
        ("workload (input x output)", ", ".join(workloads) or "—"),
        ("model", ", ".join(models) or "—"),
        (
            "SLOs",
            f"TTFT ≤ {settings.get('slo_ttft_ms'):g} ms, per-user TPS ≥ {settings.get('slo_tps'):g} tok/s, "
            f"think time {settings.get('think_s'):g} s",
        ),
    ]
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in items)
    return f'<table class="facts">{rows}</table>'


def _section(anchor: str, heading: str, body: str) -> str:
    return f'<section id="{esc(anchor)}"><h2>{esc(heading)}</h2>{body}</section>'


def render_html(report: Report) -> str:
    """The whole page as one string: the answer first, then the overlays, the client benchmark,
    a card per run, the diagnostics and the tables; styles, scripts and the Vega bundle inlined."""
    from logparse.report.assets import CSS, EMBED_JS, ERROR_HOOK_JS
    from logparse.report.cards import card_html
    from logparse.report.render import javascript_bundle, script_json

    generated = dt.datetime.now().isoformat(sep=" ", timespec="seconds")
    found = findings(report)
    charts = {item.id: item for item in report.charts}
    answer = "".join(_chart_html(charts[c]) for c in ANSWER_CHARTS if c in charts)
    across = "".join(_chart_html(i) for i in report.charts if i.section == ACROSS)
    client = "".join(_chart_html(i) for i in report.charts if i.section == CLIENT)
    facts = {f["log"]: f for f in report.facts}
    cards = "".join(
        card_html(run, facts[run.name], [_chart_html(i) for i in report.charts if i.section == run.name], fmt)
        for run in report.runs
    )
    tables = "".join(
        f'<details id="{esc(table_anchor(name))}"><summary>{esc(name)} ({frame.height:,} rows)</summary>'
        f"{html_table(frame)}</details>"
        for name, frame in report.tables.items()
    )
    specs = "".join(
        f'<script type="application/json" id="spec-{esc(item.id)}">{script_json(item.spec)}</script>\n'
        for item in report.charts
        if item.spec is not None
    )
    inputs = [r.path for r in report.runs] + report.bench_files
    counts = [f"{len(report.runs)} log(s)"] + (
        [f"{len(report.bench_files)} client file(s)"] if report.bench_files else []
    )
    nav = [("answer", "Answer")]
    if across:
        nav.append((slug(ACROSS), "Runs overlaid"))
    if report.bench is not None:
        nav.append((slug(CLIENT), "Client benchmark"))
    if report.runs:
        nav.append(("runs", f"Runs ({len(report.runs)})"))
    nav += [("diagnostics", f"Diagnostics ({len(found)})"), ("tables", "Tables"), ("inputs", "Inputs")]
    body = [
        f'<section id="{esc(ANSWER)}" class="answer"><div class="answer-text">{_core_html(report)}'
        f'{_top_findings_html(found, len(found))}</div><div class="answer-charts">{answer}</div></section>'
    ]
    if across:
        body.append(_section(slug(ACROSS), "Runs overlaid", across))
    if report.bench is not None:
        body.append(_section(slug(CLIENT), "Client benchmark", _client_facts_html(report) + client))
    if report.runs:
        body.append(_section("runs", "Runs", cards))
    body.append(_diagnostics_html(found))
    body.append(
        _section(
            "tables",
            "Tables",
            (tables or '<p class="meta">No tables.</p>')
            + '<p class="meta">Each chart\'s data is in <code>tables/&lt;chart&gt;.csv</code>.</p>',
        )
    )
    body.append(
        _section(
            "inputs",
            "Inputs",
            f'<p class="meta">Generated by logparse {esc(_version())} on {esc(generated)} from:</p>'
            f'<ul class="places">{"".join(f"<li>{esc(i)}</li>" for i in inputs)}</ul>',
        )
    )
    toc = "".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t in nav)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(report.title)}</title>
<style>{CSS}</style>
<script>{ERROR_HOOK_JS}</script>
<script>{javascript_bundle()}</script>
</head>
<body>
<header>
<h1>{esc(report.title)}</h1>
<p class="meta">{esc(", ".join(counts))} · logparse {esc(_version())} · self-contained, works offline ·
charts: wheel to zoom, drag to pan, click a legend entry to pick a run</p>
<nav class="toc">{toc}</nav>
</header>
<div id="js-errors" hidden></div>
{"".join(body)}
{specs}<script>{EMBED_JS}</script>
</body>
</html>
"""


def _md(text: Any) -> str:
    """Markdown-safe text: `<`, `>` and `&` escaped (a `<script>` stays text), pipes escaped."""
    return html.escape(for_terminal(fmt(text), keep_newlines=False), quote=False).replace("|", "\\|")


def md_table(frame: pl.DataFrame, *, max_rows: int = 60) -> str:
    """A Markdown table of `frame`."""
    head = "| " + " | ".join(_md(c) for c in frame.columns) + " |"
    sep = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_md(v) for v in row) + " |" for row in frame.head(max_rows).iter_rows()]
    more = [f"\n_{frame.height - max_rows} more rows in the CSV._"] if frame.height > max_rows else []
    return "\n".join([head, sep, *rows, *more])


def render_markdown(report: Report) -> str:
    """summary.md in the page's order: the Core Result, the findings, each chart's statement with
    its files, a row per run, the tables."""
    from logparse.report.cards import card_facts

    out = [f"# {_md(report.title)}", ""]
    if report.core is not None:
        out += ["## Core Result", "", md_table(report.core), "", _md(CORE_NOTE), "", _md(MARKS_NOTE), ""]
    found = findings(report)
    if found:
        out += ["## Findings", ""]
        for f in found:
            where = f.places[0].where + (
                "; also in " + ", ".join(p.where for p in f.places[1:]) if f.places[1:] else ""
            )
            out.append(f"- **{_md(f.severity)}** `{_md(f.code)}` ({_md(where)}): {_md(f.places[0].message)}")
        out.append("")
    if report.charts:
        out += ["## Charts", ""]
        for item in report.charts:
            links = ", ".join(f"[{_md(k)}]({v})" for k, v in item.files.items())
            out += [f"### {_md(item.title)}", "", _md(item.caption), ""]
            if "png" in item.files:
                out += [f"![{_md(item.title)}]({item.files['png']})", ""]
            if links:
                out += [links, ""]
    if report.facts:
        rows = [{"log": f["log"], **dict(card_facts(f, fmt))} for f in report.facts]
        out += ["## Runs", "", md_table(pl.DataFrame(rows)), ""]
    if report.tables:
        out += ["## Tables", ""]
        for name, frame in report.tables.items():
            out += [f"### {_md(name)}", "", md_table(frame), ""]
    return "\n".join(out)
