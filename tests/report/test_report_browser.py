# ruff: noqa: F811  (pytest fixtures imported from report_inputs, used as arguments)
"""index.html in headless Chromium (no network), driven over the DevTools protocol as a reader
would use it: the first screen at 1400 x 900 holds the answer, every chart draws a Vega view once
it is shown, the overlays zoom and pick runs, a hover shows a tooltip with units, a link to
evidence opens its fold, and nothing logs an error."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cdp import CHROMIUM, VIEWPORT, Browser, Page
from report_inputs import (  # noqa: F401 (pytest fixtures)
    bench_file,
    gpustack_logs,
    gpustack_report,
    six_report,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs headless Chromium at /usr/bin/chromium "
        "(Debian package `chromium`; `make test` installs it)",
    ),
]

PAGE_LIMIT = 5_000_000  # bytes: 6 logs + 2 client files
FIRST_PAINT_LIMIT_MS = 2000
OVERLAYS = ("overlay-decode", "overlay-prefill", "degradation")

# The text a reader sees in order, scripts and styles left out, folded text included; where the
# Core Result and the first run card begin in it.
TEXT_POSITIONS = """(() => {
  let text = '', core = -1, card = -1;
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) { text += node.data; return; }
    if (node.nodeType !== Node.ELEMENT_NODE || node.tagName === 'SCRIPT' || node.tagName === 'STYLE') { return; }
    if (node.id === 'core-result' && core < 0) { core = text.length; }
    if (node.classList.contains('card') && card < 0) { card = text.length; }
    node.childNodes.forEach(walk);
  };
  walk(document.body);
  return {core: core, card: card, total: text.length, coreText: text.slice(core, core + 40)};
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chromium = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield chromium
    chromium.close()


def open_copy(browser: Browser, report: Any, tmp_path: Path) -> Page:
    """The page copied alone into a fresh folder (it must need nothing beside it), opened."""
    page = tmp_path / "alone" / "index.html"
    page.parent.mkdir()
    shutil.copy(report.index, page)
    return browser.page(page.resolve().as_uri())


def chart(page: Page, chart_id: str) -> str:
    """Scroll a chart into view, wait for its Vega view; the JavaScript name of the view."""
    el = f"document.querySelector('#{chart_id} div.vega')"
    page.evaluate(f"{el}.scrollIntoView({{block: 'center'}})")
    page.wait_for(f"{el}.getAttribute('data-rendered') === 'yes'")
    return f"window.__logparseViews['spec-{chart_id}']"


def centre(page: Page, selector: str) -> tuple[float, float]:
    """The centre of the first element matching `selector`, in viewport coordinates."""
    x, y = page.evaluate(
        f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    return float(x), float(y)


def test_the_first_screen_holds_the_answer(browser: Browser, six_report: Any, tmp_path: Path) -> None:
    assert six_report.index.stat().st_size < PAGE_LIMIT
    page = open_copy(browser, six_report, tmp_path)
    try:
        paint = page.wait_for(
            "performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint')"
            "?.startTime"
        )
        assert paint < FIRST_PAINT_LIMIT_MS, f"first contentful paint after {paint:.0f} ms"
        for chart_id in ("degradation", "bench-slo-verdict"):
            chart(page, chart_id)
        page.evaluate("window.scrollTo(0, 0)")
        # At 1400 x 900, without scrolling: the Core Result table, the top findings and both
        # verdict charts, each whole.
        for selector in (
            "#core-result table",
            "#top-findings ol",
            "#degradation svg",
            "#bench-slo-verdict svg",
        ):
            top, bottom, right = page.evaluate(
                f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
                " return [r.top, r.bottom, r.right]; })()"
            )
            assert top >= 0 and bottom <= VIEWPORT[1] and right <= VIEWPORT[0], (selector, top, bottom, right)
        # whole: the Core Result is not cut by its own scroll box (its labels carry compare's marks)
        scroll, width = page.evaluate(
            "(() => { const box = document.querySelector('#core-result table').parentElement;"
            " return [box.scrollWidth, box.clientWidth]; })()"
        )
        assert scroll <= width, (scroll, width)
        at = page.evaluate(TEXT_POSITIONS)
        assert at["coreText"].startswith("Core Result")
        assert 0 <= at["core"] < at["card"], at
        assert at["core"] / at["total"] < 0.1, at
        assert page.problems() == []
    finally:
        page.close()


def test_every_chart_draws_a_vega_view_without_errors(
    browser: Browser,
    gpustack_report: Any,
    tmp_path: Path,
) -> None:
    page = open_copy(browser, gpustack_report, tmp_path)
    try:
        expected = sorted(f"spec-{c.id}" for c in gpustack_report.charts)
        assert sorted(page.evaluate("[...document.querySelectorAll('div.vega')].map(e => e.dataset.spec)")) == expected
        # Folded charts wait until their fold is opened and they come into view.
        hidden = page.evaluate("[...document.querySelectorAll('details:not([open]) div.vega')].length")
        assert hidden > 0 and page.evaluate("document.querySelectorAll('div.vega[data-rendered]').length") < len(expected)
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        for chart_id in (c.id for c in gpustack_report.charts):
            chart(page, chart_id)
        drawn = page.evaluate(
            "Object.entries(window.__logparseViews).filter(([id, view]) =>"
            " view.scenegraph().root.items.length > 0"
            " && document.querySelector(`div[data-spec='${id}'] svg .mark-group`)).map(([id]) => id).sort()"
        )
        assert drawn == expected
        assert page.evaluate("document.getElementById('js-errors').hidden") is True
        assert page.problems() == []
    finally:
        page.close()


@pytest.mark.parametrize("chart_id", OVERLAYS)
def test_overlay_charts_zoom_and_pick_runs(
    browser: Browser, six_report: Any, tmp_path: Path, chart_id: str
) -> None:
    page = open_copy(browser, six_report, tmp_path)
    try:
        view = chart(page, chart_id)
        # The legend picks: a click on its first entry selects that run (or series) alone.
        first = page.evaluate(f"{view}.scale('color').domain()[0]")
        page.click(*centre(page, f"#{chart_id} svg .role-legend-symbol path"))
        page.wait_for(f"{view}.data('pick_store').length === 1")
        assert page.evaluate(f"{view}.data('pick_store')[0].values") == [first]
        # The wheel zooms the x axis (time or context) around the pointer.
        before = page.evaluate(f"{view}.scale('x').domain()")
        x, y = centre(page, f"#{chart_id} svg .role-mark.mark-symbol, #{chart_id} svg g.mark-symbol")
        page.mouse("mouseWheel", x, y, deltaX=0, deltaY=-400)
        page.wait_for(f"JSON.stringify({view}.scale('x').domain()) !== JSON.stringify({before})")
        after = page.evaluate(f"{view}.scale('x').domain()")
        assert after[1] - after[0] < before[1] - before[0]
        assert page.problems() == []
    finally:
        page.close()


@pytest.mark.parametrize(
    ("chart_id", "unit"),
    [("degradation", "decode tok/s per request"), ("overlay-decode", "generation tok/s")],
)
def test_hovering_a_point_shows_its_tooltip_with_units(
    browser: Browser, six_report: Any, tmp_path: Path, chart_id: str, unit: str
) -> None:
    page = open_copy(browser, six_report, tmp_path)
    try:
        chart(page, chart_id)
        page.mouse("mouseMoved", *centre(page, f"#{chart_id} svg g.mark-symbol path"))
        text = page.wait_for(
            "(() => { const t = document.getElementById('vg-tooltip-element');"
            " return t && t.classList.contains('visible') ? t.innerText : ''; })()"
        )
        assert unit in text
        assert page.problems() == []
    finally:
        page.close()


def test_a_finding_links_to_its_evidence_inside_a_fold(
    browser: Browser, gpustack_report: Any, tmp_path: Path
) -> None:
    page = open_copy(browser, gpustack_report, tmp_path)
    try:
        link = "#top-findings a[href^='#timeline-']"
        target = page.evaluate(f"document.querySelector({link!r}).getAttribute('href').slice(1)")
        assert page.evaluate(f"document.getElementById({target!r}).closest('details').open") is False
        page.click(*centre(page, link))
        page.wait_for(f"document.getElementById({target!r}).getBoundingClientRect().height > 0")
        time.sleep(0.2)
        top = page.evaluate(f"document.getElementById({target!r}).getBoundingClientRect().top")
        assert 0 <= top < VIEWPORT[1]  # scrolled to it
        page.wait_for(f"document.querySelector('#{target} div.vega').getAttribute('data-rendered') === 'yes'")
        assert page.problems() == []
    finally:
        page.close()
