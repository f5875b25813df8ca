"""Defects from a QA pass: logs without phases in `compare`, damaged input in the post-mortem,
the no-window wording, vLLM's own KV figure, the fleet legend and ratio formatting."""
from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import polars as pl
import pytest

from logparse.analysis import analyze, summary_dict
from logparse.analysis import compare
from logparse.analysis.fleet import FLEET_SCHEMA, fleet_row, render_fleet
from logparse.analysis.summary import render_summary
from logparse.analysis.windows import mark_stable, no_window_reasons
from cli_checks import empty_log, invoke  # noqa: F401 (empty_log: a pytest fixture)
from logparse.ingest import ingest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VLLM_64K = FIXTURES / "vllm" / "gpustack-64k.log"
VLLM_200K = FIXTURES / "vllm" / "gpustack-200k.log"
TWO_PHASES = FIXTURES / "vllm" / "emulated-0.6-spec-two-phases.log"
STATS = ("(APIServer pid=1) INFO 07-28 17:00:{s:02d} [loggers.py:127] Engine 000: Avg prompt throughput: "
         "{p:.1f} tokens/s, Avg generation throughput: {g:.1f} tokens/s, Running: {r} reqs, Waiting: 0 reqs, "
         "GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%")


@pytest.fixture
def truncated_gz(tmp_path: Path) -> Path:
    """The 64K vLLM log gzipped and cut after 3000 bytes (as `gzip -c LOG | head -c 3000`)."""
    path = tmp_path / "trunc.log.gz"
    path.write_bytes(gzip.compress(VLLM_64K.read_bytes())[:3000])
    return path


# -- 1. compare keeps a row for every log ----------------------------------------------------------


def test_compare_has_a_row_with_the_reason_for_each_log_without_phases(empty_log: Path,
                                                                       truncated_gz: Path) -> None:
    logs = [str(empty_log), str(truncated_gz), str(VLLM_64K)]
    result = invoke("compare", *logs, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert sorted({r["source"] for r in rows}) == sorted(logs)
    notes = {r["source"]: r["note"] for r in rows if r["phase"] is None}
    assert notes[str(empty_log)] == "no phases: the log is empty"
    assert notes[str(truncated_gz)].startswith("no phases: no decode activity")
    text = invoke("compare", *logs).stdout
    assert f"{empty_log}: no phases: the log is empty" in text
    assert f"{truncated_gz}: no phases: no decode activity" in text
    shown = {line.split()[0] for line in text.splitlines()[2:5]}
    assert shown == set(logs)


def test_compare_rows_of_a_log_without_phases() -> None:
    tables = {"config": pl.DataFrame({"line_no": [1], "version": ["0.26.0"]})}
    a = analyze(tables, engine="vllm", source="startup.log")
    rows = compare.compare_rows([a])
    assert rows.height == 1 and rows.row(0, named=True)["phase"] is None
    assert rows.row(0, named=True)["engine"] == "vllm"
    assert rows.row(0, named=True)["note"] == "no phases: no decode activity (no decode stats lines)"


# -- 2. problems reading the input reach the post-mortem -------------------------------------------


def test_summary_reports_a_truncated_gz_as_ingest_does(truncated_gz: Path) -> None:
    notes = json.loads(invoke("ingest", str(truncated_gz), "--format", "json").stdout)["input"]["notes"]
    assert any("compressed stream ends early" in note for note in notes)
    summary = json.loads(invoke("summary", str(truncated_gz), "--json").stdout)
    warned = {d["message"]: d for d in summary["diagnostics"] if d["code"].startswith("input_")}
    assert all(warned[note]["severity"] == "warning" for note in notes)
    assert "input_truncated_last_line" in {d["code"] for d in warned.values()}
    assert "not read cleanly" in summary["no_phases_reason"]
    text = invoke("summary", str(truncated_gz)).stdout
    assert "input_read" in text and "compressed stream ends early" in text
    assert "no phases: no decode activity (no decode stats lines) in what could be read" in text


def test_windows_and_compare_report_a_damaged_input(truncated_gz: Path) -> None:
    text = invoke("windows", str(truncated_gz)).stdout
    assert "input warning:" in text and "compressed stream ends early" in text
    data = json.loads(invoke("compare", str(truncated_gz), "--json").stdout)
    assert {w["code"] for w in data["warnings"]} >= {"input_read", "input_truncated_last_line"}
    assert all(w["source"] == str(truncated_gz) for w in data["warnings"])


def test_invalid_utf8_and_a_cut_last_line_are_warnings_beside_the_phases(tmp_path: Path) -> None:
    lines = [STATS.format(s=s, p=p, g=g, r=r) for s, p, g, r in
             [(0, 9000.0, 20.0, 4), (10, 0.0, 200.0, 4), (20, 0.0, 210.0, 4), (30, 0.0, 190.0, 4),
              (40, 0.0, 200.0, 4), (50, 0.0, 80.0, 0)]]
    log = tmp_path / "v.log"
    log.write_bytes("\n".join(lines).encode() + b"\nnoise \xff\xfe here\n" + lines[-1].encode())
    result = ingest(log)
    a = analyze(result.tables, engine=result.engine, source=str(log), read_stats=result.stats)
    codes = a.diagnostics.filter(pl.col("severity") == "warning").get_column("code").to_list()
    assert {"input_invalid_utf8", "input_truncated_last_line"} <= set(codes)
    assert a.phases.height == 1 and a.no_phases_reason is None
    assert compare.compare_warnings([a]).get_column("code").to_list()[:2] == codes[:2]  # input problems first


def test_a_clean_log_has_no_input_warning() -> None:
    result = ingest(VLLM_64K)
    a = analyze(result.tables, engine=result.engine, read_stats=result.stats)
    assert not a.diagnostics.filter(pl.col("code").str.starts_with("input_")).height
    assert compare.compare_warnings([a]).height == 0


# -- 3. the no-window reason does not contradict itself --------------------------------------------


def test_windows_says_running_was_never_exactly_n() -> None:
    result = invoke("windows", "-n", "5", str(VLLM_64K))
    assert "running never reached N=5" not in result.stdout
    # the stats line printing `Running: 0 reqs` after the last request is idle, not the phase's
    assert "running was never exactly N=5 (it ranged 3–10)" in result.stdout


@pytest.mark.parametrize(("n", "reason"), [(5, "running was never exactly N=5 (it ranged 1–10)"),
                                           (12, "running never reached N=12 (peak 10)")])
def test_no_window_reason_for_n_missed(n: int, reason: str) -> None:
    t0 = dt.datetime(2026, 1, 1)
    samples = pl.DataFrame({"sample": range(4), "line_no": range(1, 5),
                            "time": [t0 + dt.timedelta(seconds=10 * i) for i in range(4)], "phase": [1] * 4,
                            "running": [1, 4, 10, 7], "waiting": [0] * 4, "prefill": [False] * 4,
                            "gen_tps": [100.0] * 4})
    phases = pl.DataFrame({"phase": [1], "concurrency": [n]})
    assert no_window_reasons(mark_stable(samples, phases), phases).get_column("reason").to_list() == [reason]


# -- 4. vLLM's own KV figure is quoted -------------------------------------------------------------


def kv_message(tables: dict[str, pl.DataFrame]) -> str:
    a = analyze(tables, engine="vllm")
    return a.diagnostics.filter(pl.col("code") == "kv_cache_overcommitted").get_column("message").item()


def test_kv_overcommit_quotes_the_engines_figure_when_the_log_has_it() -> None:
    tables = dict(ingest(VLLM_64K).tables)
    # What the memory line says: "`--kv-cache-memory=41317885440` (38.48 GiB) to fit into requested memory"
    tables["memory"] = tables["memory"].with_columns(pl.lit(41317885440).alias("kv_fit_bytes"),
                                                     pl.lit(38.48).alias("kv_fit_gib"))
    message = kv_message(tables)
    assert "38.48 GiB" in message and "--kv-cache-memory=41317885440" in message
    assert "38.64" not in message


def test_kv_overcommit_recomputes_the_budget_when_the_log_gives_no_figure() -> None:
    tables = dict(ingest(VLLM_64K).tables)
    tables["memory"] = tables["memory"].drop([c for c in ("kv_fit_bytes", "kv_fit_gib")
                                              if c in tables["memory"].columns])
    assert "~38.64 GiB left in the memory budget" in kv_message(tables)


def test_no_kv_overcommit_when_the_engines_figure_says_it_fits() -> None:
    tables = dict(ingest(VLLM_64K).tables)
    tables["memory"] = tables["memory"].with_columns(pl.lit(47_000_000_000).alias("kv_fit_bytes"),
                                                     pl.lit(None, dtype=pl.Float64).alias("kv_fit_gib"))
    a = analyze(tables, engine="vllm")
    assert "kv_cache_overcommitted" not in a.diagnostics.get_column("code").to_list()


# -- 5. the fleet legend and ratio formatting -----------------------------------------------------


def test_fleet_legend_defines_span() -> None:
    summary = summary_dict(analyze(ingest(TWO_PHASES).tables, engine="vllm"))
    rows = pl.DataFrame([fleet_row("r", summary)], schema=FLEET_SCHEMA, orient="row")
    text = " ".join(render_fleet(rows).split())
    assert "span: from the first phase's start to the last phase's end (the load, not the whole log)" in text
    narrow = " ".join(render_fleet(rows, width=60).split())
    assert "span: from the first phase's start" in narrow and "start: when" not in narrow


def ratio_cells(text: str, title: str) -> list[str]:
    """The mean/mean and peak/mean cells of the degradation table under `title`."""
    lines = text.splitlines()
    start = lines.index(title) + 3
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return [cell for line in lines[start:end] for cell in line.split()[-2:]]


def test_summary_degradation_ratios_all_end_in_x() -> None:
    summary = summary_dict(analyze(ingest(TWO_PHASES).tables, engine="vllm"))
    assert summary["degradation"], "the fixture has two phases of different length"
    cells = ratio_cells(render_summary(summary), "degradation (per-request decode throughput)")
    assert cells and all(c.endswith("x") and float(c[:-1]) > 0 for c in cells)


def test_compare_of_one_engine_prints_its_degradation_with_x() -> None:
    result = invoke("compare", str(VLLM_64K), str(VLLM_200K))
    cells = ratio_cells(result.stdout, "degradation (per-request decode throughput)")
    ratios = json.loads(invoke("compare", str(VLLM_64K), str(VLLM_200K), "--json").stdout)["degradation"]
    assert cells == [f"{ratios[0]['ratio']:.2f}x", f"{ratios[0]['ratio_peak_over_mean']:.2f}x"]
