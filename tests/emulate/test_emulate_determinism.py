"""Determinism per seed, time-shift invariance, noise invariance, and the `emulate` command."""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.emulate import LogStyle, RunParams, emulate
from logparse.cli.emulate import emulate_command
from logparse.emulate.presets import gpustack, scenarios

SCENARIOS = scenarios()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_seed_same_bytes(name: str) -> None:
    a, b = emulate(SCENARIOS[name]), emulate(SCENARIOS[name])
    assert a.lines == b.lines and a.truth == b.truth


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_other_seed_other_log(name: str) -> None:
    params = SCENARIOS[name]
    assert emulate(params).lines != emulate(replace(params, seed=params.seed + 1000)).lines


def _windows(params: RunParams) -> list[tuple[list[int], list[float]] | None]:
    truth = emulate(params).truth
    return [(p["stable"]["lines"], p["stable"]["gen_tps"]) if p["stable"] else None for p in truth["phases"]]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_shifting_the_clock_shifts_every_window(name: str) -> None:
    params = SCENARIOS[name]
    delta = timedelta(days=40, hours=7, minutes=3, seconds=11)
    shifted = replace(params, start=(datetime.fromisoformat(params.start) + delta).isoformat())
    a, b = emulate(params).truth, emulate(shifted).truth
    assert a["lines"] == b["lines"]
    for pa, pb in zip(a["phases"], b["phases"], strict=True):
        for key in ("start", "end"):
            assert datetime.fromisoformat(pb[key]) - datetime.fromisoformat(pa[key]) == delta
        if pa["stable"]:
            assert pa["stable"]["lines"] == pb["stable"]["lines"]
            assert pa["stable"]["gen_tps"] == pb["stable"]["gen_tps"]
            start_a, start_b = (datetime.fromisoformat(p["stable"]["start"]) for p in (pa, pb))
            assert start_b - start_a == delta


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_access_noise_and_ranks_change_no_window_values(name: str) -> None:
    params = SCENARIOS[name]
    quiet = replace(params, tp=1, style=replace(params.style, access_log=False, health_poll_s=None,
                                                 metrics_poll_s=None))
    noisy = replace(params, tp=4, style=replace(params.style, health_poll_s=1.5, metrics_poll_s=2.5))
    values = [[w[1] if w else None for w in _windows(p)] for p in (params, quiet, noisy)]
    assert values[0] == values[1] == values[2]
    assert emulate(noisy).truth["lines"] > emulate(quiet).truth["lines"]


def test_cli_writes_log_and_truth(tmp_path: Path) -> None:
    log, truth = tmp_path / "run.log", tmp_path / "run.truth.json"
    args = ["--engine", "vllm", "--preset", "gpustack-200k", "--concurrency", "4", "-o", str(log),
            "--truth", str(truth)]
    result = CliRunner().invoke(emulate_command, args)
    assert result.exit_code == 0, result.output
    data = json.loads(truth.read_text())
    assert data["phases"][0]["concurrency"] == 4 and data["engine"] == "vllm"
    assert log.read_bytes().count(b"\n") == data["lines"]


def test_cli_stdout_and_errors() -> None:
    runner = CliRunner()
    ok = runner.invoke(emulate_command, ["--engine", "sglang", "--era", "0.4.8", "--output-len", "100"])
    assert ok.exit_code == 0 and "Decode batch. #running-req" in ok.output
    bad = runner.invoke(emulate_command, ["--engine", "vllm", "--era", "0.9.0"])
    assert bad.exit_code == 2 and "not emulated" in bad.output
    unknown = runner.invoke(emulate_command, ["--engine", "vllm", "--preset", "nope"])
    assert unknown.exit_code == 2 and "gpustack-64k" in unknown.output


def test_validation_rejects_contradictions() -> None:
    base = gpustack("sglang", "64k")
    with pytest.raises(ValueError, match="spec_accept_len"):
        emulate(replace(base, spec_tokens=0))
    with pytest.raises(ValueError, match="FlashInfer"):
        emulate(replace(base, phases=(replace(base.phases[0], oom_retries=3),)))
    with pytest.raises(ValueError, match="not emulated"):
        emulate(replace(base, era="0.3.0"))
    with pytest.raises(ValueError, match="warning"):
        emulate(replace(base, warnings=("nope",)))
    with pytest.raises(ValueError, match="init_s"):
        emulate(replace(base, startup=replace(base.startup, init_s=10.0)))
    assert emulate(RunParams(style=LogStyle(wrapper="docker"))).lines[0][:4] == "2026"
