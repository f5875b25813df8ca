"""`reconcile` never uses a stable window too short to trust (issue 14): the engine's rate from one
sample is reported, not compared, and any problem makes the exit status 1."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.emulate import emulate
from logparse.emulate.presets import gpustack


@pytest.fixture(scope="module")
def one_sample_window(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The GPUStack vLLM 200K run with 400 output tokens: its stable window holds one sample."""
    base = gpustack("vllm", "200k")
    run = emulate(dataclasses.replace(base, phases=(dataclasses.replace(base.phases[0], output_len=400),)))
    path = tmp_path_factory.mktemp("srv") / "server.log"
    run.write(path)
    return path, run.truth


def _client(tmp_path: Path, truth: dict, output_tps: float) -> Path:
    phase = truth["phases"][0]
    payload = {"date": "20260728-172000", "backend": "openai-chat", "model_id": "m", "num_prompts": 10,
               "max_concurrency": 10, "random_input_len": phase["input_tokens"], "random_output_len": 400,
               "duration": phase["duration_s"], "completed": 10, "total_output_tokens": 4000,
               "output_throughput": output_tps, "mean_ttft_ms": 900.0, "mean_tpot_ms": 20.0,
               "mean_itl_ms": 20.0, "mean_e2el_ms": 15_000.0}
    path = tmp_path / "client.json"
    path.write_text(json.dumps(payload))
    return path


def test_a_one_sample_window_is_reported_not_compared(one_sample_window: tuple[Path, dict], tmp_path: Path) -> None:
    log, truth = one_sample_window
    bound = 4000 / truth["phases"][0]["duration_s"]
    result = CliRunner().invoke(cli, ["reconcile", str(log), str(_client(tmp_path, truth, 0.9 * bound)), "--json",
                                      "--concurrency", "10"])
    verdict = json.loads(result.output)
    assert verdict["server_phase"]["stable_samples"] == 1 and verdict["server_phase"]["stable_trusted"] is False
    (run,) = verdict["runs"]
    assert run["server_stable_gen_tps"] is None and run["server_ratio"] is None
    assert any("too short to trust" in note for note in run["notes"])
    assert result.exit_code == 0   # no problem: the client is within the physical bound


def test_a_problem_exits_1(one_sample_window: tuple[Path, dict], tmp_path: Path) -> None:
    log, truth = one_sample_window
    bound = 4000 / truth["phases"][0]["duration_s"]
    result = CliRunner().invoke(cli, ["reconcile", str(log), str(_client(tmp_path, truth, 11 * bound))])
    assert result.exit_code == 1, result.output
    assert "problem" in result.output and "Traceback" not in result.output
