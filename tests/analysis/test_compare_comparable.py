"""`compare` and the fleet table only set comparable runs side by side (issue 14, "Degradation
between runs that are not comparable"): no ratio across runs of another model, engine, TP/DP
size, N, spec decoding or quantisation, and none from a window that is not trusted."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.emulate import PhaseParams, RunParams, StartupParams, emulate
from logparse.emulate.presets import gpustack

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
KIMI_64K = FIXTURES / "vllm" / "gpustack-64k.log"   # Kimi-K3, TP8, N=10, spec on


@pytest.fixture(scope="module")
def llama_200k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Llama-3.1-8B (the emulator's default model) at 200K, N=8, no spec decoding; 2,000 output
    tokens, so that its stable window is long enough to trust (5 samples)."""
    params = RunParams(engine="vllm", era="0.26", seed=3,
                       startup=StartupParams(max_model_len=262_144, kv_pool_tokens=1_700_000),
                       phases=(PhaseParams(concurrency=8, input_len=200_000, output_len=2000, decode_tps=20.0),))
    path = tmp_path_factory.mktemp("llama") / "llama-200k.log"
    emulate(params).write(path)
    return path


def _compare(*logs: Path) -> dict:
    result = CliRunner().invoke(cli, ["compare", *map(str, logs), "--year", "2026", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_no_ratio_between_different_models(llama_200k: Path) -> None:
    data = _compare(KIMI_64K, llama_200k)
    assert data["degradation"] == []
    (warning,) = [w for w in data["warnings"] if w["code"] == "not_comparable"]
    assert "Kimi-K3 vs meta-llama/Llama-3.1-8B-Instruct" in warning["message"]
    assert "N 10 vs 8" in warning["message"] and "speculative True vs False" in warning["message"]
    rows = {r["source"]: r for r in data["rows"]}
    assert rows[str(KIMI_64K)]["tensor_parallel"] == 8


def test_the_same_setup_still_gives_its_ratio() -> None:
    data = _compare(KIMI_64K, FIXTURES / "vllm" / "gpustack-200k.log")
    (ratio,) = data["degradation"]
    assert ratio["engine"] == "vllm" and ratio["ratio"] == pytest.approx(3.07, abs=0.01)
    assert not [w for w in data["warnings"] if w["code"] in ("not_comparable", "untrusted_window")]


def test_an_untrusted_window_enters_no_ratio(tmp_path: Path) -> None:
    """The same Kimi-K3 200K run with a window of 1 sample (too short to trust)."""
    short = tmp_path / "short-window.log"
    base = gpustack("vllm", "200k")
    phase = dataclasses.replace(base.phases[0], output_len=400)
    emulate(dataclasses.replace(base, phases=(phase,))).write(short)
    data = _compare(KIMI_64K, short)
    rows = {r["source"]: r for r in data["rows"]}
    assert rows[str(short)]["trusted"] is False
    assert data["degradation"] == []
    assert [w["code"] for w in data["warnings"]] == ["untrusted_window"]
    text = CliRunner().invoke(cli, ["compare", str(KIMI_64K), str(short), "--year", "2026"]).output
    assert "64K→200K" not in text and "untrusted_window" in text


def test_the_fleet_flags_runs_that_are_not_comparable(llama_200k: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kimi.log").write_bytes(KIMI_64K.read_bytes())
    (logs / "llama.log").write_bytes(llama_200k.read_bytes())
    dataset = tmp_path / "ds"
    assert CliRunner().invoke(cli, ["ingest", str(logs), "--out", str(dataset), "--year", "2026"]).exit_code == 0
    result = CliRunner().invoke(cli, ["summary", str(dataset), "--brief"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "are not comparable" in flat and "N 10 vs 8" in flat
    fleet = json.loads(CliRunner().invoke(cli, ["summary", str(dataset), "--json"]).output)["fleet"]
    assert {r["model"] for r in fleet} == {"/var/lib/gpustack/cache/model_scope/moonshotai/Kimi-K3",
                                           "meta-llama/Llama-3.1-8B-Instruct"}
