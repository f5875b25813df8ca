# ruff: noqa: F811  (pytest fixtures imported from report_inputs, used as arguments)
"""Open index.html in headless Chromium with the network disabled: every chart renders (an <svg>
inside each chart's container), and the page records no script error or console error."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_inputs import bench_file, gpustack_logs, gpustack_report  # noqa: F401 (pytest fixtures)

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs headless Chromium at /usr/bin/chromium "
        "(Debian package `chromium`; `make test` installs it)",
    ),
]


class ChartScan(HTMLParser):
    """Per chart container (`div[data-spec]`): does an <svg> or <canvas> render inside it?
    Also collects the text of the page's error box."""

    def __init__(self) -> None:
        super().__init__()
        self.charts: dict[str, int] = {}
        self.rendered: set[str] = set()
        self.stack: list[str | None] = []
        self.errors: list[str] = []
        self.in_errors = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div" and a.get("data-spec"):
            name = a["data-spec"] or ""
            self.charts[name] = 0
            if a.get("data-rendered") == "yes":
                self.rendered.add(name)
            self.stack.append(name)
        elif tag in ("svg", "canvas") and self.stack and self.stack[-1]:
            self.charts[self.stack[-1]] += 1
        elif tag == "div":
            self.stack.append(None)
        if tag == "div" and a.get("id") == "js-errors":
            self.in_errors = 1
        elif self.in_errors and tag == "div":
            self.in_errors += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            if self.stack:
                self.stack.pop()
            if self.in_errors:
                self.in_errors -= 1

    def handle_data(self, data: str) -> None:
        if self.in_errors and data.strip():
            self.errors.append(data.strip())


def dump_dom(page: Path, profile: Path) -> tuple[str, str]:
    """Load `page` from disk with every network request refused; return (DOM, Chromium's log)."""
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        f"--user-data-dir={profile}",
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=15000",
        "--dump-dom",
        page.resolve().as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def test_every_chart_renders_offline_without_errors(gpustack_report, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A copy in a fresh directory: the page must not need anything next to it.
    page = tmp_path / "page" / "index.html"
    page.parent.mkdir()
    shutil.copy(gpustack_report.index, page)
    dom, log = dump_dom(page, tmp_path / "profile")
    scan = ChartScan()
    scan.feed(dom)
    expected = {f"spec-{c.id}" for c in gpustack_report.charts}
    assert set(scan.charts) == expected
    empty = sorted(name for name, n in scan.charts.items() if n == 0)
    assert not empty, f"charts without an <svg>/<canvas>: {empty}"
    assert scan.rendered == expected
    assert not scan.errors, scan.errors
    console = [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    bad = [
        line
        for line in console
        if "Uncaught" in line or "ERROR" in line.split("CONSOLE")[-1][:40] or "Error" in line
    ]
    assert not bad, bad
