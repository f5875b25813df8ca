# ruff: noqa: F811  (pytest fixtures imported from report_inputs, used as arguments)
"""`logparse report` takes what `summary` takes: --engine, a table folder, a dataset, `-`; and
shows `compare`'s Core Result and memory in the unit the numbers are in."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from report_inputs import ROOT, bench_file, gpustack_logs, gpustack_report  # noqa: F401 (pytest fixtures)

from logparse.cli import cli
from logparse.report import build_report

VLLM_64K = ROOT / "fixtures" / "vllm" / "gpustack-64k.log"
SGLANG_64K = ROOT / "fixtures" / "sglang" / "gpustack-64k.log"


def _report(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["report", *args, "--no-images"], input=stdin)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _unknown_log(tmp_path: Path) -> Path:
    """A log in neither engine's format, with one SGLang decode line deep inside (not detected)."""
    lines = [f"line {i}: nothing an engine prints" for i in range(400)]
    lines.append("[2026-07-28 17:00:10 TP0] Decode batch. #running-req: 4, #token: 1000, token usage: 0.10, "
                 "gen throughput (token/s): 100.00, #queue-req: 0")
    path = tmp_path / "unknown.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_report_has_the_engine_option_its_error_asks_for(tmp_path: Path) -> None:
    log = _unknown_log(tmp_path)
    code, output = _report(str(log), "-o", str(tmp_path / "a"))
    assert code == 2 and "pass --engine" in output
    code, output = _report(str(log), "--engine", "sglang", "-o", str(tmp_path / "b"))
    assert code == 0, output
    assert (tmp_path / "b" / "index.html").exists()


def test_report_reads_a_dataset_as_its_runs(tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    ingest = CliRunner().invoke(cli, ["ingest", str(VLLM_64K), str(SGLANG_64K), "--out", str(dataset)])
    assert ingest.exit_code == 0, ingest.output
    code, output = _report(str(dataset), "-o", str(tmp_path / "r"))
    assert code == 0, output
    summary = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "| vllm vllm_gpustack-64k | vllm |" in summary
    assert "| sglang sglang_gpustack-64k | sglang |" in summary


def test_report_reads_a_table_folder(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    ingest = CliRunner().invoke(cli, ["ingest", str(SGLANG_64K), "--out", str(folder)])
    assert ingest.exit_code == 0, ingest.output
    code, output = _report(str(folder), "-o", str(tmp_path / "r"))
    assert code == 0, output
    summary = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "| sglang tables | sglang |" in summary and "not analysed" not in summary


def test_report_reads_one_log_from_stdin(tmp_path: Path) -> None:
    code, output = _report("-", "-o", str(tmp_path / "r"), stdin=VLLM_64K.read_text(encoding="utf-8"))
    assert code == 0, output
    summary = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "| vllm stdin | vllm |" in summary
    code, output = _report("-", "-", "-o", str(tmp_path / "r2"), stdin="")
    assert code == 1 and "once" in output


def test_report_has_the_core_result_of_compare(tmp_path: Path) -> None:
    report = build_report([VLLM_64K, SGLANG_64K], [], tmp_path, images=False, progress=False)
    assert report.core is not None
    rows = report.core.to_dicts()
    assert list(report.core.columns) == ["scenario", "sglang", "vllm", "result"]
    assert rows[0] == {"scenario": "64K (~ vllm) stable decode (N=10)", "sglang": "~335 tok/s", "vllm": "~501 tok/s",
                       "result": "vllm leads by ~1.50x"}
    html = report.index.read_text(encoding="utf-8")
    assert '<section id="core-result"><h2>Core Result</h2>' in html and "vllm leads by ~1.50x" in html
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "## Core Result" in summary and "| 64K (~ vllm) stable decode (N=10) | ~335 tok/s | ~501 tok/s |" in summary


def test_full_report_core_result_has_degradation(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    scenarios = gpustack_report.core.get_column("scenario").to_list()
    assert "decode degradation 64K→200K (~ vllm)" in scenarios and "200K (~ vllm) stable decode (N=10)" in scenarios


def test_core_result_of_one_engine_is_a_note(tmp_path: Path) -> None:
    report = build_report([VLLM_64K, VLLM_64K], [], tmp_path, images=False, progress=False)
    assert report.core is None
    assert any("Core Result not shown" in n.message for n in report.notes)
    html = report.index.read_text(encoding="utf-8")
    shown = html.split('<section id="core-result">', 1)[1].split("</section>", 1)[0]
    assert "Not shown: Core Result not shown" in shown and "<table" not in shown


def test_sglang_memory_is_labelled_gib_as_in_summary(gpustack_report) -> None:  # type: ignore[no-untyped-def]
    memory = [c for c in gpustack_report.charts if c.id.startswith("memory-sglang")]
    assert memory
    for item in memory:
        assert item.caption.endswith("in all)") and "(GiB;" in item.caption and "GB;" not in item.caption
        spec = item.chart.to_dict()
        assert 'SGLang prints "GB" but counts bytes / 2^30' in str(spec)


def test_report_says_a_truncated_log_was_not_read_whole(tmp_path: Path) -> None:
    import gzip

    whole = gzip.compress(VLLM_64K.read_bytes())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    code, output = _report(str(cut), "-o", str(tmp_path / "r"))
    assert code == 0, output
    page = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    summary = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "compressed stream ends early" in page and "compressed stream ends early" in summary


def test_an_empty_log_claims_no_engine_in_the_report(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    code, output = _report(str(empty), str(VLLM_64K), "-o", str(tmp_path / "r"))
    assert code == 0, output
    summary = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert "| empty | - |" in summary and "sglang" not in summary
    assert "empty file: no engine" in summary
