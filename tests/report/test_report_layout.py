# ruff: noqa: F811  (pytest fixtures imported from report_inputs, used as arguments)
"""The page's order and folds (answer first, runs overlaid, a card per run with its charts folded,
findings by severity), links that land, and the chart gaps of issue 24: an SGLang silence is a gap
in the KV and timeline charts, and the cold-start chart has a bar for the weight-loading time its
caption names."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import polars as pl
import pytest
from report_inputs import ROOT, bench_file, gpustack_logs, gpustack_report  # noqa: F401 (pytest fixtures)

from logparse.report import digest
from logparse.report import frames as R
from logparse.report.build import load_runs
from logparse.report.findings import coldstart_caption
from logparse.report.sections import ANSWER

HYBRID = ROOT / "fixtures" / "sglang" / "emulated-0.5.6-hybrid-spec.log"  # 44 s of silence between phases


@pytest.fixture(scope="module")
def hybrid() -> R.LogRun:
    return load_runs([HYBRID], progress=lambda _: None)[0][0]


class Sections(HTMLParser):
    """The ids of the top-level sections in order, every id and every `#` link of the page, and
    which chart containers sit inside which run card and inside a closed `<details>`."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []
        self.charts: dict[str, tuple[str | None, bool]] = {}  # spec -> (run card, folded)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag == "a" and (a.get("href") or "").startswith("#"):
            self.links.append((a["href"] or "")[1:])
        if tag == "section" and not any(t == "section" for t, _ in self.stack):
            self.sections.append(a.get("id") or "")
        if tag == "div" and a.get("data-spec"):
            card = next((x.get("id") for t, x in reversed(self.stack) if t == "article"), None)
            folded = any(t == "details" and "open" not in x for t, x in self.stack)
            self.charts[a["data-spec"] or ""] = (card, folded)
        if tag not in ("meta", "br", "img", "input", "link"):
            self.stack.append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


@pytest.fixture(scope="module")
def page(gpustack_report: Any) -> Sections:
    parsed = Sections()
    parsed.feed(gpustack_report.index.read_text(encoding="utf-8"))
    return parsed


def test_the_answer_comes_first_then_overlays_client_runs_diagnostics(page: Sections) -> None:
    assert page.sections == [
        "answer",
        "across-runs",
        "client-benchmark",
        "runs",
        "diagnostics",
        "tables",
        "inputs",
    ]
    assert {"core-result", "top-findings", "degradation", "bench-slo-verdict"} <= page.ids


def test_each_runs_charts_are_folded_in_its_card(gpustack_report: Any, page: Sections) -> None:
    for item in gpustack_report.charts:
        card, folded = page.charts[f"spec-{item.id}"]
        if item.section in {r.name for r in gpustack_report.runs}:
            assert card == f"run-{digest.slug(item.section)}" and folded, item.id
        else:
            assert card is None and not folded, item.id
    assert {c.section for c in gpustack_report.charts if c.id.startswith("overlay-")} == {"across runs"}
    assert [c.id for c in gpustack_report.charts if c.section == ANSWER] == ["degradation", "bench-slo-verdict"]


def test_every_link_lands_on_an_anchor(page: Sections) -> None:
    assert page.links
    assert sorted(set(page.links) - page.ids) == []


def test_findings_rank_by_severity_then_charted_then_places(gpustack_report: Any) -> None:
    found = digest.findings(gpustack_report)
    order = [digest.SEVERITY_ORDER[f.severity] for f in found]
    assert order == sorted(order)
    for severity in ("warning", "info"):
        charted = [any(p.charted for p in f.places) for f in found if f.severity == severity]
        assert charted == sorted(charted, reverse=True)
    oom = next(f for f in found if f.code == "oom_retries")
    assert [p.evidence for p in oom.places] == ["timeline-vllm-gpustack-64k"]
    # Every place is named once per diagnostic: the 4 logs' fp8 warnings are one finding.
    fp8 = next(f for f in found if f.code == "fp8_kv_scale_default")
    assert len(fp8.places) == 4 and not any(p.charted for p in fp8.places)
    top = digest.top(found)
    assert len(top) <= 6 and all(f.severity in ("error", "warning") for f in top)
    assert top[0] is found[0]


def test_diagnostics_are_grouped_by_severity_and_folded(gpustack_report: Any) -> None:
    html = gpustack_report.index.read_text(encoding="utf-8")
    section = html.split('<section id="diagnostics">', 1)[1].split("</section>", 1)[0]
    groups = re.findall(r'<details class="severity sev-group-(\w+)"( open)?><summary>(\w+) \((\d+)\)', section)
    assert [g[0] for g in groups] == sorted((g[0] for g in groups), key=digest.SEVERITY_ORDER.__getitem__)
    assert all(not g[1] for g in groups if g[0] != "error")  # warnings and information folded
    found = digest.by_severity(digest.findings(gpustack_report))
    assert {g[0]: int(g[3]) for g in groups} == {s: len(f) for s, f in found.items()}


def test_run_cards_state_the_runs_facts(gpustack_report: Any) -> None:
    html = gpustack_report.index.read_text(encoding="utf-8")
    card = html.split('<article class="card" id="run-vllm-gpustack-64k">', 1)[1].split("</article>", 1)[0]
    facts = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)</dd>", card))
    assert facts["engine"] == "vllm" and facts["GPUs (ranks)"].startswith("8 ")
    assert facts["KV pool"] == "2,687,776 tokens"
    assert facts["OOM"] == "32 (32 recovered)" and facts["JIT compiles"] == "4 (4 at run time)"
    assert facts["cold start (ready after)"].startswith("626 s (10.4 min), weights 163.8 s")
    assert "Timeline and charts" in card and "Diagnostics: 5 warnings, 1 information" in card


def test_sglang_silence_is_a_gap_not_a_held_value(hybrid: R.LogRun) -> None:
    gap = R.idle_gap(hybrid)
    assert gap is not None
    got = R.kv_frames(hybrid)
    assert got is not None
    usage = got[0]
    steps = usage.with_columns(pl.col("time").diff().dt.total_seconds().alias("step"))
    starts = steps.filter(pl.col("segment").diff() > 0)
    assert starts.height == 1 and starts.get_column("step").min() > gap  # one silence, where it is
    assert steps.filter(pl.col("step") > gap).height == starts.height  # and no other
    samples, _, _ = R.timeline_frames(hybrid)
    assert samples.get_column("segment").n_unique() == 2


def test_the_named_weight_loading_time_has_its_bar(hybrid: R.LogRun, gpustack_report: Any) -> None:
    for run in [hybrid, *gpustack_report.runs]:
        spans, _ = R.coldstart_frames(run)
        named = re.search(r"weight loading ([\d,.]+) s", coldstart_caption(run))
        bars = spans.filter(pl.col("stage") == "weight loading")
        assert named is None or not bars.is_empty(), run.name
    bars = R.coldstart_frames(hybrid)[0].filter(pl.col("stage") == "weight loading")
    # Both ranks: from `Load weight begin` (17:06:39) to `Load weight end` (17:06:45), the 6 s
    # the shard bar printed.
    assert sorted(bars.get_column("rank").to_list()) == ["TP0", "TP1"]
    assert bars.get_column("seconds").to_list() == [6.0, 6.0]
    assert "weight loading 6.0 s" in coldstart_caption(hybrid)
