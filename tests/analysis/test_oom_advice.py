"""Advice in the engine's own flags (issue 22): SGLang is never told about --gpu-memory-utilization;
"memory is overcommitted" only where the KV figures say so; autotuner fallbacks are a milder case."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from conftest import FIXTURES, REAL_LOGS
from logparse.analysis.diagnostics import oom_advice
from logparse.cli import cli

SGLANG_LOGS = sorted((FIXTURES / "sglang").glob("*.log")) + sorted((REAL_LOGS / "sglang").glob("*.log"))


def diagnostics(log: Path, *extra: str) -> dict[str, dict[str, object]]:
    out = CliRunner().invoke(cli, ["summary", str(log), "--json", *extra])
    assert out.exit_code == 0, out.output
    return {d["code"]: d for d in json.loads(out.stdout)["diagnostics"]}


@pytest.mark.parametrize("log", SGLANG_LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_sglang_run_is_never_told_vllm_flags(log: Path) -> None:
    out = CliRunner().invoke(cli, ["summary", str(log), "--engine", "sglang"])
    assert "--gpu-memory-utilization" not in out.output and "--kv-cache-memory" not in out.output


def test_sglang_oom_retries_speak_sglang() -> None:
    found = diagnostics(FIXTURES / "sglang" / "emulated-0.5.6-hybrid-spec.log")["oom_retries"]
    assert "--mem-fraction-static" in str(found["message"])
    assert "overcommitted" not in str(found["message"])


def test_overcommitted_only_where_the_kv_figures_support_it() -> None:
    gpustack = diagnostics(FIXTURES / "vllm" / "gpustack-64k.log")  # KV 43.76 GiB over vLLM's 38.48
    assert "kv_cache_overcommitted" in gpustack
    assert gpustack["oom_retries"]["severity"] == "warning"
    assert "memory is overcommitted" in str(gpustack["oom_retries"]["message"])
    quiet = diagnostics(FIXTURES / "vllm" / "emulated-0.31-color-oom.log")  # autotuner OOMs, KV fits
    assert "kv_cache_overcommitted" not in quiet
    assert quiet["oom_retries"]["severity"] == "info"
    assert "overcommitted" not in str(quiet["oom_retries"]["message"])
    assert "autotuner" in str(quiet["oom_retries"]["message"])


def _ooms(*details: str) -> pl.DataFrame:
    return pl.DataFrame({"detail": list(details), "recovered": [True] * len(details)})


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_oom_advice_by_case_in_the_engines_flags(engine: str) -> None:
    flag = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static"}[engine]
    other = {"vllm": "--mem-fraction-static", "sglang": "--gpu-memory-utilization"}[engine]
    tuner = "[Autotuner]: OOM detected, falling back to default tactic"
    cases = {
        "tuner": oom_advice(_ooms(tuner, tuner), engine=engine, overcommitted=False),
        "other": oom_advice(_ooms(tuner, "CUDA out of memory. Tried to allocate 2.00 GiB"), engine=engine,
                            overcommitted=False),
        "over": oom_advice(_ooms(tuner), engine=engine, overcommitted=True),
    }
    assert [severity for severity, _ in cases.values()] == ["info", "warning", "warning"]
    assert "default tactic" in cases["tuner"][1] and "overcommitted" not in cases["tuner"][1]
    assert "1 of them autotuner fallbacks" in cases["other"][1] and "overcommitted" not in cases["other"][1]
    assert "memory is overcommitted" in cases["over"][1]
    for _, advice in cases.values():
        assert flag in advice and other not in advice
