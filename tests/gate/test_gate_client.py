"""`logparse gate` on client result files: the SGLang bench_serving fixture against edited copies."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from logparse.cli import cli
from logparse.gate import run_gate

BENCH = FIXTURES / "bench" / "sglang_bench_serving.jsonl"  # four runs: direct/spec x c=4/16


def edited(tmp_path: Path, name: str, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of `BENCH` with `change` applied to each of its JSON lines."""
    records = [json.loads(line) for line in BENCH.read_text().splitlines() if line.strip()]
    for record in records:
        change(record)
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_client_file_against_itself_holds_every_metric() -> None:
    result = run_gate([str(BENCH)], str(BENCH))
    assert result.exit_status == 0
    keys = {j.metric.key for j in result.judgements}
    assert keys == {"ttft_p50_ms", "ttft_p90_ms", "tpot_p50_ms", "tpot_p90_ms", "itl_p50_ms", "itl_p90_ms",
                    "output_tps", "c_max"}
    assert {j.scope for j in result.judgements if j.metric.key == "c_max"} == {
        "sglang direct qwen3-32b SLOs", "sglang spec qwen3-32b SLOs"}


def test_a_slower_first_token_at_one_level_regresses_that_level_only(tmp_path: Path) -> None:
    def slower(record: dict[str, Any]) -> None:
        if record["max_concurrency"] == 16 and record["server_info"]["speculative_algorithm"] is None:
            record["p90_ttft_ms"] = round(record["p90_ttft_ms"] * 1.2, 2)

    result = run_gate([str(BENCH)], str(edited(tmp_path, "slower.jsonl", slower)))
    assert result.exit_status == 1
    regressed = [j.name for j in result.judgements if j.verdict == "regressed"]
    assert regressed == ["ttft_p90_ms[sglang direct qwen3-32b c=16]"]


def test_c_max_falls_when_a_level_breaks_the_ttft_slo(tmp_path: Path) -> None:
    def breaks(record: dict[str, Any]) -> None:
        if record["max_concurrency"] == 16:
            record["p90_ttft_ms"] = 1500.0

    result = run_gate([str(BENCH)], str(edited(tmp_path, "breaks.jsonl", breaks)))
    c_max = [j for j in result.judgements if j.metric.key == "c_max"]
    assert [(j.baseline, j.candidate, j.verdict) for j in c_max] == [(16.0, 4.0, "regressed")] * 2


def test_another_input_length_or_level_set_is_not_comparable(tmp_path: Path) -> None:
    def longer(record: dict[str, Any]) -> None:
        record["random_input_len"] = 4096
        record["total_input_tokens"] *= 4

    result = run_gate([str(BENCH)], str(edited(tmp_path, "longer.jsonl", longer)))
    assert result.exit_status == 2
    assert any(p.startswith("input length (") for p in result.problems), result.problems
    levels = FIXTURES / "bench" / "vllm_bench_serve_summary.txt"  # c=8 and c=32
    other = run_gate([str(FIXTURES / "bench" / "vllm_bench_serve_c16.json")], str(levels))
    assert other.exit_status == 2
    assert other.problems[0].startswith("concurrency levels:") and "c=16" in other.problems[0]


@pytest.mark.parametrize("option", [[], ["--slo-ttft-ms", "100"]])
def test_the_cli_judges_c_max_under_the_slos_given(option: list[str]) -> None:
    out = CliRunner().invoke(cli, ["gate", str(BENCH), str(BENCH), "--json", *option])
    assert out.exit_code == 0, out.output
    c_max = {m["scope"]: m["baseline"] for m in json.loads(out.output)["metrics"] if m["metric"] == "c_max"}
    expected = 16.0 if not option else 0.0  # no level has a TTFT P90 under 100 ms
    assert set(c_max.values()) == {expected}
