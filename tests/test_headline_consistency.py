"""`ingest`'s headline and `summary` agree on every start-up figure of the same log."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOGS = sorted([*FIXTURES.glob("vllm/*.log"), *FIXTURES.glob("sglang/*.log")])

# What the headline prints under weights, KV pool, CUDA graphs, compile and engine init.
SHOWN = ("weights_gib", "weight_load_s", "kv_pool_tokens", "kv_gib", "max_concurrency", "cuda_graph_s",
         "cuda_graph_gib", "compile_s", "init_s", "init_s_inferred", "ready_s", "ready_s_approx")


def _json(*args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)):
        return b == pytest.approx(a, abs=1e-3)  # the summary rounds to 3 digits
    return a == b


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_headline_startup_equals_summary_startup(log: Path) -> None:
    headline = _json("ingest", str(log), "--format", "json")["startup"]
    summary = _json("summary", str(log), "--json")["startup"]
    differ = {k: (headline[k], summary.get(k)) for k in headline if not _same(headline[k], summary.get(k))}
    assert not differ, f"headline vs summary: {differ}"
    assert set(SHOWN) <= set(headline)


def test_gpustack_figures_are_the_write_ups() -> None:
    """The figures the seed write-ups quote: vLLM's 'Loading weights took', SGLang's rank-0 graph capture."""
    vllm = _json("ingest", str(FIXTURES / "vllm/gpustack-64k.log"), "--format", "json")["startup"]
    assert vllm["weight_load_s"] == pytest.approx(163.8)
    sglang = _json("ingest", str(FIXTURES / "sglang/gpustack-64k.log"), "--format", "json")["startup"]
    assert sglang["cuda_graph_s"] == pytest.approx(330.0) and sglang["cuda_graph_gib"] == pytest.approx(1.46)
    assert sglang["kv_gib"] == pytest.approx(11.8)
    assert sglang["init_s"] == pytest.approx(370.0) and sglang["init_s_inferred"] is True


def test_headline_text_shows_the_summary_figures() -> None:
    result = CliRunner().invoke(cli, ["ingest", str(FIXTURES / "sglang/gpustack-64k.log")])
    assert result.exit_code == 0, result.output
    lines = {line.split("  ", 1)[0]: line for line in result.output.splitlines()}
    assert "330 s, 1.46 GiB" in lines["CUDA graphs"]
    assert "11.8 GiB" in lines["KV pool"]
    assert "370 s (inferred)" in lines["engine init"]
    assert "606 s" in lines["ready after"]
