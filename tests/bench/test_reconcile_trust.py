"""`reconcile` a user can trust (issue 22): a log with no load phase exits 1 as the help says, a
client run of another output length is flagged and not compared, and no text says `N=None`."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, REAL_LOGS
from logparse.bench.render import render_reconcile
from logparse.cli import cli
from logparse.emulate import PhaseParams, RunParams, emulate

CLIENT = FIXTURES / "bench" / "vllm_bench_serve_c16.json"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def test_a_log_without_a_load_phase_exits_1_and_says_why() -> None:
    excerpt = REAL_LOGS / "vllm" / "005.log"  # start-up lines only: no stats line
    if not excerpt.exists():
        pytest.skip("the shared real excerpts are not here")
    out = run("reconcile", str(excerpt), str(CLIENT), "--engine", "vllm")
    assert out.exit_code == 1, out.output
    flat = " ".join(out.stdout.split())
    assert "no load phase found (no decode activity" in flat
    assert "problem the server log has no load phase" in flat
    doc = json.loads(run("reconcile", str(excerpt), str(CLIENT), "--engine", "vllm", "--json").stdout)
    assert doc["server_phase"] is None and doc["problems"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run_ = emulate(RunParams(engine="vllm", seed=7, phases=(PhaseParams(concurrency=6, output_len=3000),)))
    path = tmp_path_factory.mktemp("srv") / "server.log"
    run_.write(path)
    return path, run_.truth


def _client(tmp_path: Path, truth: dict, *, output_len: int) -> Path:
    """A `vllm bench serve --save-result` file of the server's N and run (its `date` the end of the
    log's phase: reconcile matches the client's time span to the phase's), with `output_len`
    tokens per request."""
    phase = truth["phases"][0]
    n, duration = phase["concurrency"], phase["duration_s"]
    ended = dt.datetime.fromisoformat(phase["end"])
    payload = {
        "date": f"{ended:%Y%m%d-%H%M%S}", "backend": "openai-chat", "model_id": "m", "num_prompts": n,
        "max_concurrency": n, "random_output_len": output_len, "duration": duration, "completed": n,
        "total_output_tokens": n * output_len, "output_throughput": round(0.9 * n * output_len / duration, 2),
        "mean_ttft_ms": 900.0, "mean_tpot_ms": 20.0, "mean_itl_ms": 20.0, "mean_e2el_ms": 15_000.0,
    }
    path = tmp_path / f"client-{output_len}.json"
    path.write_text(json.dumps(payload))
    return path


def test_another_output_length_is_flagged_not_compared(server: tuple[Path, dict], tmp_path: Path) -> None:
    log, truth = server
    same = json.loads(run("reconcile", str(log), str(_client(tmp_path, truth, output_len=3000)), "--json").stdout)
    assert same["runs"][0]["mismatches"] == [] and same["trust"] == "client"
    assert same["server_phase"]["output_tokens"] == pytest.approx(3000, rel=0.15)
    assert "time" in same["server_phase"]["matched_by"]  # the client's span is the log's phase
    out = run("reconcile", str(log), str(_client(tmp_path, truth, output_len=512)), "--json")
    assert out.exit_code == 1
    doc = json.loads(out.stdout)
    (verdict,) = doc["runs"]
    assert [m.split(" ")[0] for m in verdict["mismatches"]] == ["output"]
    assert "512 tokens per request in the client, ~3K in the log's phase" in verdict["mismatches"][0]
    assert verdict["server_ratio"] is None or any("is not compared" in n for n in verdict["notes"])
    assert doc["trust"] != "client"


def test_reconcile_text_never_says_n_none() -> None:
    result = {"server_log": "x.log", "engine": "vllm", "trust": "undetermined", "reason": "r", "runs": [],
              "server_phase": {"phase": 1, "concurrency": None, "input_tokens": 65536, "stable_gen_tps": None}}
    text = render_reconcile(result)
    assert "N unknown" in text and "N=None" not in text


LOGS = sorted(FIXTURES.glob("*/*.log")) + sorted((FIXTURES / "real").glob("*/*.log"))


@pytest.mark.slow
@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_text_says_n_none(log: Path) -> None:
    for command in (["summary"], ["windows"], ["compare", str(log)], ["reconcile", str(CLIENT)]):
        args = [command[0], str(log), *command[1:]]
        out = CliRunner().invoke(cli, args)
        assert "N=None" not in out.output and "N None" not in out.output, (args, out.output)
