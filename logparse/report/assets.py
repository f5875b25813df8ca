"""The page's own style sheet and scripts (inlined in `index.html`; the Vega bundle is separate).

The first screen (1400 x 900) holds the answer: the Core Result table and the top findings on
the left, the verdict charts on the right. Charts are drawn when they come near the viewport
(an IntersectionObserver), so a closed `<details>` costs nothing until it is opened; a link to
something inside a closed `<details>` opens it first.
"""

from __future__ import annotations

CSS = """
:root { --fg:#1d1d1f; --muted:#5a5a5f; --line:#e3e3e6; --bg:#ffffff; --soft:#f6f6f8; --link:#24507f; }
* { box-sizing: border-box; }
body { font: 13.5px/1.42 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1380px; padding: 12px 20px 60px; }
a { color: var(--link); }
h1 { font-size: 19px; margin: 0 0 2px; }
h2 { font-size: 16px; margin: 26px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 3px; }
h3 { font-size: 14.5px; margin: 0; }
.meta { color: var(--muted); margin: 0 0 6px; font-size: 12px; }
nav.toc { font-size: 12.5px; margin: 2px 0 0; } nav.toc a { margin-right: 14px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 4px 0 8px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; max-width: 100%; }
.answer { display: grid; grid-template-columns: minmax(0, 690px) minmax(0, 1fr); gap: 8px 22px;
          align-items: start; margin-top: 8px; }
.answer h2 { margin: 4px 0 6px; }
#core-result table { font-size: 12.5px; } #core-result td { white-space: nowrap; }
#core-result th, #core-result td { padding: 3px 6px; }
#core-result td:first-child { white-space: normal; min-width: 150px; }
#core-result td.lead { font-weight: 600; }
p.marks { color: var(--muted); font-size: 11.5px; margin: 0 0 4px; }
ol.findings { margin: 0; padding-left: 20px; font-size: 12.5px; } ol.findings li { margin: 0 0 5px; }
ol.findings .where { color: var(--muted); }
.sev { display: inline-block; min-width: 58px; font-size: 10.5px; font-weight: 600; text-transform: uppercase;
       padding: 0 5px; border-radius: 3px; margin-right: 5px; text-align: center; }
.sev-error { background: #fde2e1; color: #a4161a; } .sev-warning { background: #fff1d6; color: #8a5300; }
.sev-info { background: #e8f0fb; color: #24507f; }
.code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 11.5px; color: var(--muted); }
figure.chart { margin: 0 0 14px; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; }
.answer figure.chart { margin-bottom: 8px; padding: 6px 8px; }
p.finding { margin: 0 0 4px; font-size: 12.5px; } .answer p.finding { font-size: 12px; }
p.files { margin: 4px 0 0; font-size: 11.5px; color: var(--muted); } p.files a { color: var(--muted); }
.vega { overflow-x: auto; min-height: 60px; }
#js-errors { background: #fde2e1; color: #a4161a; padding: 8px 12px; border-radius: 4px; }
details > summary { cursor: pointer; font-weight: 600; margin: 4px 0; }
article.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 0 0 12px; }
article.card header { display: flex; gap: 12px; align-items: baseline; }
dl.facts { display: grid; grid-template-columns: repeat(7, minmax(0, 1fr)); gap: 4px 14px; margin: 8px 0 4px; }
dl.facts div { min-width: 0; } dl.facts dt { color: var(--muted); font-size: 11px; }
dl.facts dd { margin: 0; font-size: 12.5px; overflow-wrap: anywhere; }
ul.diag { list-style: none; padding: 0; margin: 0 0 6px; } ul.diag li { padding: 2px 0; }
ul.places { margin: 2px 0 6px; padding-left: 18px; font-size: 12.5px; }
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
  window.__logparseViews = {};
  if (typeof vegaEmbed !== 'function') { fail('page', 'the inlined Vega bundle did not load'); return; }
  function embed(el) {
    if (el.hasAttribute('data-embedding')) { return; }
    el.setAttribute('data-embedding', 'yes');
    var id = el.getAttribute('data-spec');
    var spec;
    try { spec = JSON.parse(document.getElementById(id).textContent); }
    catch (e) { fail(id, 'unreadable chart spec: ' + e); return; }
    vegaEmbed(el, spec, {renderer: 'svg', actions: false})
      .then(function (result) {
        window.__logparseViews[id] = result.view;
        el.setAttribute('data-rendered', 'yes');
      })
      .catch(function (e) { fail(id, String(e)); });
  }
  var charts = document.querySelectorAll('div.vega[data-spec]');
  if ('IntersectionObserver' in window) {
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) { seen.unobserve(entry.target); embed(entry.target); }
      });
    }, {rootMargin: '300px 0px'});
    charts.forEach(function (el) { seen.observe(el); });
  } else {
    charts.forEach(embed);
  }
  // Printing shows everything: open every fold and draw every chart.
  window.addEventListener('beforeprint', function () {
    document.querySelectorAll('details').forEach(function (d) { d.open = true; });
    charts.forEach(embed);
  });
  // A link to something inside a closed <details> opens it (and every fold around it) first.
  function reveal(id) {
    var target = id && document.getElementById(id);
    if (!target) { return; }
    for (var p = target; p; p = p.parentElement) { if (p.tagName === 'DETAILS') { p.open = true; } }
    target.scrollIntoView();
  }
  document.addEventListener('click', function (e) {
    var a = e.target.closest && e.target.closest('a[href^="#"]');
    if (a) { reveal(decodeURIComponent(a.getAttribute('href').slice(1))); }
  });
  window.addEventListener('hashchange', function () { reveal(decodeURIComponent(location.hash.slice(1))); });
  if (location.hash) { reveal(decodeURIComponent(location.hash.slice(1))); }
})();
"""
