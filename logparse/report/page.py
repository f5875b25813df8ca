"""The report as one self-contained HTML page (Vega inlined) and as Markdown.

Every piece of text that comes from a log or a file name goes through `escape.for_html`
(`html.escape` after making control characters visible); chart specs are embedded as JSON with
`<`, `>` and `&` escaped, so nothing taken from a log can open or close an element.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from importlib import metadata
from typing import TYPE_CHECKING, Any

import polars as pl

from logparse.escape import for_html as esc
from logparse.escape import for_terminal

if TYPE_CHECKING:
    from logparse.report.build import Report

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

CSS = """
:root { --fg:#1d1d1f; --muted:#5a5a5f; --line:#e3e3e6; --bg:#ffffff; --soft:#f6f6f8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1180px; padding: 24px 28px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 34px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 6px; }
.meta { color: var(--muted); margin: 0 0 8px; font-size: 13px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 9px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; max-width: 100%; }
ul.diag { list-style: none; padding: 0; margin: 0; } ul.diag li { padding: 3px 0; }
.sev { display: inline-block; min-width: 62px; font-size: 11px; font-weight: 600; text-transform: uppercase;
       padding: 1px 6px; border-radius: 3px; margin-right: 6px; text-align: center; }
.sev-error { background: #fde2e1; color: #a4161a; } .sev-warning { background: #fff1d6; color: #8a5300; }
.sev-info { background: #e8f0fb; color: #24507f; }
.code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; color: var(--muted); }
figure.chart { margin: 18px 0 26px; padding: 12px 14px; border: 1px solid var(--line); border-radius: 6px; }
figure.chart h4 { margin: 0 0 2px; font-size: 14.5px; } p.finding { margin: 0 0 10px; font-size: 13.5px; }
p.files { margin: 6px 0 0; font-size: 12px; color: var(--muted); } p.files a { color: var(--muted); }
.vega { overflow-x: auto; min-height: 40px; }
#js-errors { background: #fde2e1; color: #a4161a; padding: 8px 12px; border-radius: 4px; }
nav.toc { font-size: 13px; color: var(--muted); } nav.toc a { color: #24507f; margin-right: 10px; }
"""

EMBED_JS = """
(function () {
  var box = document.getElementById('js-errors');
  function fail(where, message) {
    box.hidden = false;
    var p = document.createElement('p');
    p.className = 'js-error';
    p.textContent = where + ': ' + message;
    box.appendChild(p);
  }
  (window.__logparseErrors || []).forEach(function (m) { fail('page', m); });
  window.__logparseFail = fail;
  if (typeof vegaEmbed !== 'function') { fail('page', 'the inlined Vega bundle did not load'); return; }
  var charts = document.querySelectorAll('div.vega[data-spec]');
  charts.forEach(function (el) {
    var id = el.getAttribute('data-spec');
    var spec;
    try { spec = JSON.parse(document.getElementById(id).textContent); }
    catch (e) { fail(id, 'unreadable chart spec: ' + e); return; }
    vegaEmbed(el, spec, {renderer: 'svg', actions: false})
      .then(function () { el.setAttribute('data-rendered', 'yes'); })
      .catch(function (e) { fail(id, String(e)); });
  });
})();
"""

ERROR_HOOK_JS = """
window.__logparseErrors = [];
window.addEventListener('error', function (e) {
  var m = (e && e.message) ? e.message : String(e);
  if (window.__logparseFail) { window.__logparseFail('page', m); } else { window.__logparseErrors.push(m); }
});
(function () {
  var original = console.error;
  console.error = function () {
    var m = Array.prototype.map.call(arguments, String).join(' ');
    if (window.__logparseFail) { window.__logparseFail('console', m); }
    else { window.__logparseErrors.push(m); }
    return original.apply(console, arguments);
  };
})();
"""


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


def diagnostics_items(report: Report) -> list[tuple[str, str, str, str]]:
    """(severity, where, code, message) for every diagnostic, check and note, errors first."""
    items: list[tuple[str, str, str, str]] = []
    for run in report.runs:
        if run.analysis is None:
            continue
        for row in run.analysis.diagnostics.iter_rows(named=True):
            items.append((row["severity"], run.name, row["code"], row["message"]))
    if report.bench is not None:
        for row in report.bench.checks.filter(pl.col("severity") != "ok").iter_rows(named=True):
            where = (
                f"{row['config']} c={row['concurrency']}"
                if row.get("concurrency") is not None
                else row["config"]
            )
            items.append((row["severity"], f"benchmark: {where}", row["code"], row["message"]))
    for note in report.notes:
        items.append((note.severity, note.section, "report", note.message))
    return sorted(items, key=lambda i: SEVERITY_ORDER.get(i[0], 9))


FACT_COLUMNS = [
    ("log", "log"),
    ("engine", "engine"),
    ("version", "version"),
    ("model", "model"),
    ("ranks", "ranks"),
    ("concurrency", "N"),
    ("inputs", "input lengths"),
    ("phases", "phases"),
    ("starts", "engine starts"),
    ("lines", "lines"),
    ("coverage", "lines typed"),
]


def _facts_html(report: Report) -> str:
    parts = []
    if report.facts:
        head = "".join(f"<th>{esc(t)}</th>" for _, t in FACT_COLUMNS)
        rows = []
        for f in report.facts:
            cells = []
            for key, _ in FACT_COLUMNS:
                v = f.get(key)
                text = f"{v:.1%}" if key == "coverage" and isinstance(v, float) else fmt(v)
                cells.append(f"<td>{esc(text)}</td>")
            rows.append(f"<tr>{''.join(cells)}</tr>")
        parts.append(
            f'<div class="scroll"><table class="facts"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>"
        )
    if report.bench is not None:
        rows_df = report.bench.rows
        tools = ", ".join(rows_df.get_column("source_tool").unique(maintain_order=True).to_list())
        configs = ", ".join(rows_df.get_column("config").unique(maintain_order=True).to_list())
        levels = sorted({int(c) for c in rows_df.get_column("concurrency").drop_nulls().to_list()})
        models = [m for m in rows_df.get_column("model").unique(maintain_order=True).to_list() if m]
        workloads = [w for w in rows_df.get_column("workload").unique(maintain_order=True).to_list() if w]
        items = [
            ("files", ", ".join(report.bench_files)),
            ("tools", tools),
            ("configurations", configs),
            ("concurrency levels", ", ".join(str(c) for c in levels) or "—"),
            ("workload (input x output)", ", ".join(workloads) or "—"),
            ("model", ", ".join(models) or "—"),
            (
                "SLOs",
                f"TTFT ≤ {report.bench.settings.get('slo_ttft_ms'):g} ms, per-user TPS ≥ "
                f"{report.bench.settings.get('slo_tps'):g} tok/s, think time "
                f"{report.bench.settings.get('think_s'):g} s",
            ),
        ]
        item_rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in items)
        parts.append(f'<h3>Client benchmark</h3><table class="facts">{item_rows}</table>')
    return "".join(parts)


CORE_NOTE = "As `logparse compare` prints it: each engine's stable decode throughput per input length."


def _core_html(report: Report) -> str:
    if report.core is None:
        return ""
    return (
        f'<section id="core-result"><h2>Core Result</h2><p class="meta">{esc(CORE_NOTE)}</p>'
        f"{html_table(report.core)}</section>"
    )


def _chart_html(item: Any) -> str:
    links = []
    for kind, path in item.files.items():
        label = kind.upper() if ":" not in kind else f"CSV ({kind.split(':', 1)[1]})"
        links.append(f'<a href="{esc(path)}">{esc(label)}</a>')
    files = f'<p class="files">{" · ".join(links)}</p>' if links else ""
    return (
        f'<figure class="chart" id="{esc(item.id)}" aria-label="{esc(item.title)}">'
        f'<p class="finding"><b>Finding:</b> {esc(item.caption)}</p>'
        f'<div class="vega" data-spec="spec-{esc(item.id)}"></div>{files}</figure>'
    )


def render_html(report: Report) -> str:
    """The whole page as one string: styles, the Vega bundle, charts, tables."""
    from logparse.report.render import javascript_bundle, script_json

    generated = dt.datetime.now().isoformat(sep=" ", timespec="seconds")
    inputs = [r.path for r in report.runs] + report.bench_files
    diag = diagnostics_items(report)
    diag_html = "".join(
        f'<li><span class="sev sev-{esc(sev)}">{esc(sev)}</span><b>{esc(where)}</b> '
        f'<span class="code">{esc(code)}</span> {esc(msg)}</li>'
        for sev, where, code, msg in diag
    )
    sections: dict[str, list[Any]] = {}
    for item in report.charts:
        sections.setdefault(item.section, []).append(item)
    chart_html = "".join(
        f"<h3>{esc(name)}</h3>" + "".join(_chart_html(i) for i in items) for name, items in sections.items()
    )
    if not report.charts:
        chart_html = '<p class="meta">No chart could be drawn from these inputs (see the diagnostics).</p>'
    tables_html = "".join(f"<h3>{esc(name)}</h3>{html_table(frame)}" for name, frame in report.tables.items())
    specs = "".join(
        f'<script type="application/json" id="spec-{esc(item.id)}">{script_json(item.spec)}</script>\n'
        for item in report.charts
        if item.spec is not None
    )
    toc = "".join(
        f"<div><b>{esc(name)}:</b> "
        + " ".join(f'<a href="#{esc(i.id)}">{esc(i.short)}</a>' for i in items)
        + "</div>"
        for name, items in sections.items()
    )
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
<p class="meta">Generated by logparse {esc(_version())} on {esc(generated)} from {esc(", ".join(inputs))}.
Self-contained: opens without a network connection.</p>
<nav class="toc">{toc}</nav>
</header>
<div id="js-errors" hidden></div>
<section id="facts"><h2>Runs</h2>{_facts_html(report)}</section>
{_core_html(report)}
<section id="diagnostics"><h2>Diagnostics</h2>
{f'<ul class="diag">{diag_html}</ul>' if diag else '<p class="meta">Nothing to report.</p>'}
</section>
<section id="charts"><h2>Charts</h2>{chart_html}</section>
<section id="tables"><h2>Tables</h2>{tables_html or '<p class="meta">No tables.</p>'}
<p class="meta">Each chart's data is in <code>tables/&lt;chart&gt;.csv</code>.</p></section>
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
    """summary.md: facts, diagnostics, each chart's finding with its files, the tables."""
    out = [f"# {_md(report.title)}", ""]
    if report.facts:
        facts = pl.DataFrame(
            [
                {
                    t: (
                        f"{f.get(k):.1%}"
                        if k == "coverage" and isinstance(f.get(k), float)
                        else fmt(f.get(k))
                    )
                    for k, t in FACT_COLUMNS
                }
                for f in report.facts
            ]
        )
        out += ["## Runs", "", md_table(facts), ""]
    if report.core is not None:
        out += ["## Core Result", "", _md(CORE_NOTE), "", md_table(report.core), ""]
    diag = diagnostics_items(report)
    if diag:
        out += ["## Diagnostics", ""]
        out += [f"- **{_md(sev)}** {_md(where)} `{_md(code)}`: {_md(msg)}" for sev, where, code, msg in diag]
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
    if report.tables:
        out += ["## Tables", ""]
        for name, frame in report.tables.items():
            out += [f"### {_md(name)}", "", md_table(frame), ""]
    return "\n".join(out)
