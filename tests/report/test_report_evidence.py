"""The report says how sure each figure is, shows a log's engine starts, and warns about evidence
seen but not typed (issue 14), as `summary` does."""
from __future__ import annotations

from pathlib import Path

import pytest
from untyped_tables import as_if_untyped

from logparse.report.build import build_report
from logparse.store import write_tables

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
VLLM_013 = ROOT.parent / "shared" / "real-logs" / "vllm" / "013.log"  # six real V0 stats lines


@pytest.fixture(scope="module")
def markdown(tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("report")
    restarted = tmp / "restarted.log"
    restarted.write_bytes((FIXTURES / "vllm" / "gpustack-64k.log").read_bytes()
                          + (FIXTURES / "vllm" / "gpustack-200k.log").read_bytes())
    untyped = tmp / "untyped-013"  # its stats lines as if no rule typed them
    write_tables(as_if_untyped(VLLM_013, "vllm", "engine_stats"), untyped)
    report = build_report([restarted, untyped], [], tmp / "out", images=False, progress=False)
    return (report.out_dir / "summary.md").read_text()


def test_figures_that_are_not_exact_are_listed_with_their_evidence(markdown: str) -> None:
    section = markdown.split("### figures and their evidence", 1)[1].split("###", 1)[0]
    assert "input_tokens" in section and "Σ prompt throughput × the 10 s stats interval" in section
    assert "estimated" in section and "exact" not in section.replace("exactly", "")


def test_the_engine_starts_of_a_restarted_log_are_shown(markdown: str) -> None:
    section = markdown.split("### engine starts", 1)[1].split("###", 1)[0]
    assert section.count("vllm restarted") == 2
    assert "| engine starts |" in markdown and "`restarts`" in markdown


def test_unparsed_stats_lines_are_a_warning(markdown: str) -> None:
    assert "`unparsed_engine_stats`" in markdown and "no rule typed them" in markdown
    assert "no decode stats lines (engine_stats)" not in markdown
