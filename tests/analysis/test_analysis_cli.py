"""The `summary`, `windows` and `compare` commands: output, Parquet, errors, real logs."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import cli

ROOT = Path(__file__).resolve().parents[2]
REAL_LOGS = ROOT.parent / "shared" / "real-logs"
REAL = sorted(REAL_LOGS.glob("*/*.log")) if REAL_LOGS.is_dir() else []
SUMMARY_KEYS = {"engine", "version", "startup", "phases", "degradation", "counts", "diagnostics"}
STARTUP_KEYS = {"weights_gib", "weight_load_s", "kv_pool_tokens", "kv_gib", "max_concurrency", "cuda_graph_s",
                "compile_s", "init_s", "ready_s"}
STABLE_KEYS = {"samples", "start", "end", "gen_tps_mean", "gen_tps_median", "gen_tps_min", "gen_tps_max",
               "per_request_tps", "ms_per_token", "context_tokens_per_request"}

VLLM_LOG = "\n".join(
    f"(APIServer pid=1) INFO 07-28 17:{m:02d}:{s:02d} [loggers.py:127] Engine 000: Avg prompt throughput: "
    f"{p:.1f} tokens/s, Avg generation throughput: {g:.1f} tokens/s, Running: {r} reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%"
    for m, s, p, g, r in [(0, 0, 9000.0, 20.0, 4), (0, 10, 0.0, 200.0, 4), (0, 20, 0.0, 210.0, 4),
                          (0, 30, 0.0, 190.0, 4), (0, 40, 0.0, 200.0, 4), (0, 50, 0.0, 80.0, 0)]) + "\n"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("command", ["summary", "windows", "compare"])
def test_help(command: str) -> None:
    code, out = run(command, "--help")
    assert code == 0 and "--out" in out and "--concurrency" in out


@pytest.mark.parametrize("command", ["summary", "windows", "compare"])
def test_missing_file_is_a_clean_error(command: str, tmp_path: Path) -> None:
    code, out = run(command, str(tmp_path / "nope.log"))
    assert code == 1
    assert "Error" in out and "Traceback" not in out


def test_summary_text_json_and_parquet(tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(VLLM_LOG, encoding="utf-8")
    code, out = run("summary", str(log))
    assert code == 0
    assert "phases and stable decode windows" in out and "200.0" in out
    code, out = run("summary", str(log), "--json", "--out", str(tmp_path / "out"))
    assert code == 0
    data = json.loads(out)
    assert SUMMARY_KEYS <= set(data) and STARTUP_KEYS <= set(data["startup"])
    phase = data["phases"][0]
    assert {"start", "end", "concurrency", "input_tokens", "stable", "prefill", "spec"} <= set(phase)
    assert STABLE_KEYS <= set(phase["stable"])
    assert phase["stable"]["samples"] == 4 and phase["stable"]["gen_tps_mean"] == 200.0
    assert {"input_tps_mean", "first_request_chunks"} <= set(phase["prefill"])
    assert {"oom", "preemptions", "retractions", "jit_compiles", "warnings"} <= set(data["counts"])
    assert pl.read_parquet(tmp_path / "out" / "windows.parquet").height == 1
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["engine"] == "vllm"


def test_windows_says_why_there_is_no_window(tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(VLLM_LOG, encoding="utf-8")
    code, out = run("windows", str(log), "--concurrency", "5")
    assert code == 0 and "no stable window: running never reached N=5" in out
    code, out = run("windows", str(log), "--min-samples", "10")
    assert code == 0 and "not trusted: 4 sample(s), need 10" in out


def test_compare_writes_parquet(tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(VLLM_LOG, encoding="utf-8")
    code, out = run("compare", str(log), str(log), "--out", str(tmp_path / "cmp"))
    assert code == 0 and "stable tok/s" in out
    assert pl.read_parquet(tmp_path / "cmp" / "compare.parquet").height == 2


@pytest.mark.skipif(not REAL, reason="../shared/real-logs is absent")
@pytest.mark.parametrize("log", REAL, ids=[f"{p.parent.name}/{p.name}" for p in REAL])
def test_summary_exits_0_on_every_real_log(log: Path) -> None:
    result = CliRunner().invoke(cli, ["summary", str(log)])
    assert result.exit_code == 0, result.output
    assert "diagnostics" in result.output


def test_summary_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A file name (and so the summary's first line) holding escape sequences is shown escaped."""
    log = tmp_path / "run\x1b]0;owned\x07\x1b[31m.log"
    log.write_text(VLLM_LOG, encoding="utf-8")
    code, out = run("summary", str(log))
    assert code == 0, out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07" in out


def test_summary_diagnostics_wrap_to_100_columns() -> None:
    log = ROOT / "fixtures" / "vllm" / "gpustack-64k.log"
    code, out = run("summary", str(log))
    assert code == 0, out
    table = out[out.index("\ndiagnostics\n"):]
    assert "kv_cache_overcommitted" in table and "--gpu-memory-utilization" in table  # not cut at a hyphen
    assert max(len(line) for line in table.splitlines()) <= 100
