"""`logparse reconcile`: a client result against an emulated server log."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.emulate import PhaseParams, RunParams, emulate


@pytest.fixture(scope="module")
def server_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run = emulate(RunParams(engine="vllm", seed=7, phases=(PhaseParams(concurrency=6, output_len=3000),)))
    path = tmp_path_factory.mktemp("srv") / "server.log"
    path.write_text("\n".join(run.lines) + "\n")
    return path, run.truth


def _client_file(tmp_path: Path, truth: dict, *, claim_factor: float) -> tuple[Path, float]:
    phase = truth["phases"][0]
    n, out_len, duration = phase["concurrency"], phase["output_tokens"], phase["duration_s"]
    bound = n * out_len / duration
    # the client saved its file when the emulated run ended (its `date` is the run's end)
    ended = dt.datetime.fromisoformat(phase["end"]).strftime("%Y%m%d-%H%M%S")
    payload = {  # `vllm bench serve --save-result` keys (peer-tools.md §1.1)
        "date": ended, "backend": "openai-chat", "model_id": "m", "num_prompts": n,
        "max_concurrency": n, "random_output_len": out_len, "duration": duration, "completed": n,
        "total_output_tokens": n * out_len, "output_throughput": round(bound * claim_factor, 2),
        "mean_ttft_ms": 900.0, "mean_tpot_ms": 20.0, "mean_itl_ms": 20.0, "mean_e2el_ms": 15_000.0,
    }
    path = tmp_path / "client.json"
    path.write_text(json.dumps(payload))
    return path, bound


def test_an_eleven_fold_claim_is_flagged(server_run: tuple[Path, dict], tmp_path: Path) -> None:
    log, truth = server_run
    assert truth["phases"][0]["stable"], "the emulated run must have a stable window"
    client, bound = _client_file(tmp_path, truth, claim_factor=11.0)
    result = CliRunner().invoke(cli, ["reconcile", str(log), str(client), "--json"])
    assert result.exit_code == 1, result.output   # a problem was found
    verdict = json.loads(result.output)
    assert verdict["trust"] == "server_log"
    run = verdict["runs"][0]
    assert run["bound_ratio"] == pytest.approx(11.0, rel=0.01)
    assert run["physical_bound_tps"] == pytest.approx(bound, rel=1e-6)
    stable = truth["phases"][0]["stable"]["gen_tps_mean"]
    assert verdict["server_phase"]["stable_gen_tps"] == pytest.approx(stable, rel=1e-6)
    assert verdict["server_phase"]["concurrency"] == truth["phases"][0]["concurrency"]


def test_an_honest_client_is_trusted(server_run: tuple[Path, dict], tmp_path: Path) -> None:
    log, truth = server_run
    client, _ = _client_file(tmp_path, truth, claim_factor=0.9)
    result = CliRunner().invoke(cli, ["reconcile", str(log), str(client)])
    assert result.exit_code == 0, result.output
    assert "trust       client" in result.output


ROOT = Path(__file__).resolve().parents[2] / "fixtures"


def test_another_engine_and_context_is_a_mismatch_in_the_cli() -> None:
    result = CliRunner().invoke(cli, ["reconcile", str(ROOT / "sglang" / "gpustack-64k.log"),
                                      str(ROOT / "bench" / "gpustack_vllm_kimi_k3_200k_inflated.json")])
    assert result.exit_code == 1, result.output
    out, flat = result.output, " ".join(result.output.split())  # flat: the text unwrapped
    assert "problem   not the same run: engine vllm in the client, sglang in the log" in out
    assert "input length 200K tokens per prompt in the client, 64K in the log's phase" in flat
    assert "trust       physical_bound" in out and "trust       client" not in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_another_concurrency_and_workload_is_not_trust_client() -> None:
    result = CliRunner().invoke(cli, ["reconcile", str(ROOT / "vllm" / "gpustack-64k.log"),
                                      str(ROOT / "bench" / "vllm_bench_serve_c16.json"), "--json"])
    assert result.exit_code == 1, result.output
    verdict = json.loads(result.output)
    assert verdict["trust"] == "undetermined"
    assert verdict["server_phase"]["engine"] == "vllm"
    (run,) = verdict["runs"]
    # the client's `date` (its run's end) also falls outside the log's phase, and its 128 output
    # tokens per request are not the log's ~3K: four mismatches
    assert [m.split()[0] for m in run["mismatches"]] == ["input", "time:", "concurrency", "output"]


def test_reconcile_reads_the_client_result_from_stdin(server_run: tuple[Path, dict], tmp_path: Path) -> None:
    log, truth = server_run
    client, _ = _client_file(tmp_path, truth, claim_factor=0.9)
    result = CliRunner().invoke(cli, ["reconcile", str(log), "-"], input=client.read_text())
    assert result.exit_code == 0, result.output
    assert "trust       client" in result.output
    both = CliRunner().invoke(cli, ["reconcile", "-", "-"], input="")
    assert both.exit_code == 2 and "standard input" in both.output
