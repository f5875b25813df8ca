"""Crashes and hangs get a root cause (issue 14): the last start-up stage reached and the time
since, SGLang's negative profiled KV pool, and one OOM printed twice counted once."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from logparse.analysis.analyze import Analysis, analyze_log
from logparse.cli import cli

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "real-logs"
FIXTURES = ROOT / "fixtures"


def _codes(a: Analysis) -> dict[str, dict]:
    return {d["code"]: d for d in a.diagnostics.to_dicts()}


def test_a_crashed_start_names_its_last_stage() -> None:
    """Real: SGLang captures CUDA graphs, then 'Scheduler hit an exception' (a traceback)."""
    a = analyze_log(REAL / "sglang" / "014.log", engine="sglang")
    finding = _codes(a)["start_not_ready"]
    assert finding["severity"] == "error"
    assert "CUDA graph capture (line 6" in finding["message"] and "traceback at line 7" in finding["message"]
    assert "crashed" in finding["message"]


def test_a_hung_start_says_how_long_the_log_went_on(tmp_path: Path) -> None:
    """The emulated GPUStack vLLM start, cut before `Application startup complete.`: the engine
    initialised, the API server never became ready."""
    lines = (FIXTURES / "vllm" / "gpustack-64k.log").read_bytes().split(b"\n")
    stop = next(i for i, line in enumerate(lines) if b"Application startup complete." in line)
    log = tmp_path / "hung.log"
    log.write_bytes(b"\n".join(lines[:stop]) + b"\n")
    a = analyze_log(log, engine="vllm", year=2026)
    finding = _codes(a)["start_not_ready"]
    assert finding["severity"] == "warning" and "engine init (line 50, 2 s before" in finding["message"]
    assert "hung start" in finding["message"]
    text = CliRunner().invoke(cli, ["summary", str(log), "--year", "2026"]).output
    assert "never said ready" in text


def test_a_negative_profiled_kv_pool_is_the_root_cause() -> None:
    """Real line: `max_total_tokens=20480 is larger than the profiled value -89624`."""
    log = FIXTURES / "real" / "sglang" / "sgldocs_profiled_value_negative.log"
    a = analyze_log(log, engine="sglang")
    finding = _codes(a)["kv_profile_negative"]
    assert finding["severity"] == "error" and "-89,624" in finding["message"] and "20,480" in finding["message"]
    assert a.startup["kv_pool_tokens"] is None   # the line states no pool: none is made up


def test_one_hip_oom_printed_by_stderr_and_the_logger_counts_once() -> None:
    log = FIXTURES / "real" / "vllm" / "lemonade5_hip_oom_stderr_and_logger.log"
    summary = json.loads(CliRunner().invoke(cli, ["summary", str(log), "--json"]).output)
    assert summary["counts"]["oom"] == 1
    (fatal,) = [d for d in summary["diagnostics"] if d["code"] == "oom_fatal"]
    assert fatal["message"].startswith("1 out-of-memory error(s)")


def test_recovered_oom_retries_are_all_counted() -> None:
    """32 autotuner fallbacks on 8 ranks are 32 retries, not echoes of one another."""
    a = analyze_log(FIXTURES / "vllm" / "gpustack-64k.log", engine="vllm", year=2026)
    assert a.counts["oom"] == 32 and a.counts["oom_recovered"] == 32


def test_a_served_start_has_no_start_failure() -> None:
    for name in ("vllm/gpustack-64k", "sglang/gpustack-64k"):
        a = analyze_log(FIXTURES / f"{name}.log", year=2026)
        assert "start_not_ready" not in _codes(a), name
