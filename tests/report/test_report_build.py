# ruff: noqa: F811  (pytest fixtures imported from report_inputs, used as arguments)
"""`build_report` and `logparse report`: files written, findings stated, inputs of every shape,
graceful degradation, and text from logs escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from report_inputs import ROOT, bench_file, gpustack_logs, gpustack_report  # noqa: F401 (pytest fixtures)

from logparse.report import build_report


def spec_blocks(html: str) -> dict[str, dict]:  # type: ignore[type-arg]
    blocks = re.findall(r'<script type="application/json" id="spec-([^"]+)">(.*?)</script>', html, re.S)
    return {name: json.loads(body) for name, body in blocks}


def test_full_report_files(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    out: Path = gpustack_report.out_dir
    html = (out / "index.html").read_text(encoding="utf-8")
    ids = [c.id for c in gpustack_report.charts]
    assert len(ids) == len(set(ids))
    for family in (
        "degradation",
        "timeline-",
        "kv-",
        "prefill-",
        "spec-accept-",
        "spec-draft-",
        "coldstart-",
        "memory-",
        "bench-metrics",
        "bench-aggregate",
        "bench-capacity",
        "bench-spec-speedup",
        "bench-slo",
    ):
        assert any(i.startswith(family) for i in ids), family
    specs = spec_blocks(html)
    assert set(specs) == set(ids)
    for item in gpustack_report.charts:
        assert f'data-spec="spec-{item.id}"' in html
        csv = out / "tables" / f"{item.id}.csv"
        assert csv.exists() and pl.read_csv(csv).height > 0, item.id
        assert item.caption, item.id
    assert (out / "summary.md").read_text(encoding="utf-8").startswith("# ")
    # Self-contained: the Vega libraries are inlined, nothing is fetched.
    assert "vegaEmbed" in html
    assert not re.search(r'<script[^>]+src=|<link[^>]+href="https?:', html)
    assert not list((out / "charts").glob("*.png"))  # images=False


def test_header_facts_and_diagnostics(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    facts = {f["log"]: f for f in gpustack_report.facts}
    assert set(facts) == {
        "vllm gpustack-64k",
        "vllm gpustack-200k",
        "sglang gpustack-64k",
        "sglang gpustack-200k",
    }
    v64 = facts["vllm gpustack-64k"]
    assert v64["engine"] == "vllm" and v64["version"] and v64["model"].endswith("Kimi-K3")
    assert v64["concurrency"] == "10" and v64["ranks"].startswith("8 ")
    html = gpustack_report.index.read_text(encoding="utf-8")
    for text in ("Runs", "Diagnostics", "oom_retries", "spec_acceptance_collapse", "Tables"):
        assert text in html


def test_captions_state_the_findings(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    captions = {c.id: c.caption for c in gpustack_report.charts}
    deg = captions["degradation"]
    ratios = gpustack_report.tables["degradation"]
    vllm = ratios.filter(pl.col("group") == "vllm").row(0, named=True)
    assert f"vllm: stable decode throughput per request fell {vllm['ratio']:.2f}× from 64K to 200K" in deg
    assert "sglang overtakes vllm between 64K and 200K" in deg
    assert "stable window of N=10" in captions["timeline-vllm-gpustack-64k"]
    assert "OOM (recovered)" in captions["timeline-vllm-gpustack-64k"]
    assert "% of drafted tokens rejected" in captions["spec-accept-vllm-gpustack-200k"]
    assert "break-even c≈15.4" in captions["bench-spec-speedup"]
    assert "vllm direct 32, vllm spec 32, sglang direct 16, sglang spec 2" in captions["bench-slo"]


def test_degradation_chart_data_matches_the_analysis(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    item = next(c for c in gpustack_report.charts if c.id == "degradation")
    frame = item.data["degradation"]
    for run in gpustack_report.runs:
        window = run.analysis.windows.filter(pl.col("trusted")).row(0, named=True)
        row = frame.filter(pl.col("source") == run.name).row(0, named=True)
        assert row["per_request_tps"] == pytest.approx(window["per_request_tps"])
        assert row["ms_per_token"] == pytest.approx(window["ms_per_token"])


def test_only_bench_files(bench_file: Path, tmp_path: Path) -> None:
    report = build_report([], [bench_file], tmp_path, images=False, progress=False)
    assert {c.section for c in report.charts} == {"answer", "client benchmark"}
    assert [c.id for c in report.charts if c.section == "answer"] == ["bench-slo-verdict"]
    assert report.index.exists() and not report.runs


def test_only_logs_with_images(gpustack_logs: list[Path], tmp_path: Path) -> None:
    report = build_report(gpustack_logs[:1], [], tmp_path, progress=False)
    assert report.bench is None and report.charts
    for item in report.charts:
        assert (tmp_path / item.files["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / item.files["svg"]).read_text(encoding="utf-8").lstrip().startswith("<svg")
    # Only one context length: the degradation chart still shows its one point.
    assert "one context length only" in next(c.caption for c in report.charts if c.id == "degradation")


SGLANG_HEAD = "[2026-07-28 17:00:00] server_args=ServerArgs(model_path='{model}', tp_size=1, port=30000)\n"


def sglang_log(path: Path, *, model: str = "Qwen/Qwen3-8B", waiting: int = 0, lines: int = 12) -> Path:
    body = [
        SGLANG_HEAD.format(model=model),
        "[2026-07-28 17:00:08 TP0] Prefill batch. #new-seq: 4, #new-token: 4000, #cached-token: 0, "
        "token usage: 0.05, #running-req: 0, #queue-req: 3\n",
    ]
    for i in range(lines):
        body.append(
            f"[2026-07-28 17:00:{10 + 2 * i:02d} TP0] Decode batch. #running-req: 4, "
            f"#token: {1000 + 40 * i}, token usage: 0.10, gen throughput (token/s): {100 + i}.00, "
            f"#queue-req: {waiting}\n"
        )
    path.write_text("".join(body), encoding="utf-8")
    return path


def test_log_without_stable_window_is_noted_not_fatal(tmp_path: Path) -> None:
    log = sglang_log(tmp_path / "busy.log", waiting=3)  # requests always waiting: no stable window
    report = build_report([log], [], tmp_path / "out", images=False, progress=False)
    ids = [c.id for c in report.charts]
    assert "degradation" not in ids
    assert any("degradation chart skipped" in n.message for n in report.notes)
    timeline = next(c for c in report.charts if c.id.startswith("timeline-"))
    assert "no stable window" in timeline.caption
    assert "degradation chart skipped" in report.index.read_text(encoding="utf-8")


def test_log_without_stats_lines(tmp_path: Path) -> None:
    log = tmp_path / "startup-only.log"
    log.write_text(SGLANG_HEAD.format(model="m"), encoding="utf-8")
    report = build_report([log], [], tmp_path / "out", images=False, progress=False)
    assert report.index.exists()
    assert any("no decode stats" in n.message for n in report.notes)


def test_model_name_with_script_is_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    log = sglang_log(tmp_path / "x<b>bold<i>.log", model=evil)
    report = build_report([log], [], tmp_path / "out", images=False, progress=False)
    assert report.facts[0]["model"] == evil  # read as data ...
    html = report.index.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # ... shown as text
    assert evil not in html and "<b>bold<i>" not in html and "x&lt;b&gt;bold" in html
    assert "<script>alert" not in html.lower()
    md = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert evil not in md


def test_cli_report_command(gpustack_logs: list[Path], bench_file: Path, tmp_path: Path) -> None:
    from logparse.cli import cli

    result = CliRunner().invoke(
        cli, ["report", str(gpustack_logs[0]), "--bench", str(bench_file), "-o", str(tmp_path), "--no-images"]
    )
    assert result.exit_code == 0, result.output
    assert "index.html" in result.output
    assert (tmp_path / "index.html").exists() and (tmp_path / "summary.md").exists()


def test_cli_needs_an_input(tmp_path: Path) -> None:
    from logparse.cli.report import report_command

    result = CliRunner().invoke(report_command, ["-o", str(tmp_path)])
    assert result.exit_code == 2 and "at least one LOG" in result.output


def test_cli_bad_bench_file_names_it(tmp_path: Path) -> None:
    from logparse.cli import cli

    bad = tmp_path / "results.txt"
    bad.write_text("hello\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", "--bench", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "results.txt" in result.output


def test_progress_only_when_asked(
    gpustack_logs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_report(gpustack_logs[:1], [], tmp_path / "a", images=False)  # stderr is not a TTY here
    assert capsys.readouterr().err == ""
    build_report(gpustack_logs[:1], [], tmp_path / "b", images=False, progress=True)
    err = capsys.readouterr().err
    assert "reading" in err and "rendering" in err


def test_the_committed_example_report_is_up_to_date(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    """reports/gpustack-kimi-k3 shows what logparse produces today: its tables equal a fresh build
    (after a change to the grammars or the analysis, run `make reports`)."""
    committed = ROOT / "reports" / "gpustack-kimi-k3" / "tables"
    fresh = Path(gpustack_report.index).parent / "tables"
    names = sorted(p.name for p in committed.glob("*.csv"))
    assert names and names == sorted(p.name for p in fresh.glob("*.csv"))
    stale = [name for name in names if (committed / name).read_text() != (fresh / name).read_text()]
    assert not stale, f"stale example report tables (run `make reports`): {stale}"
