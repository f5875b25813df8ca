"""Comparisons a user can trust (issue 22): the Core Result keeps every qualifying (engine, input,
N) and names each log left out and why (compare and report); no ratio between equal input
lengths; the `~` of an estimated input length and the "derived" of SGLang's spec throughputs stay."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, REAL_LOGS
from logparse.cli import cli
from logparse.emulate import emulate
from logparse.emulate.presets import preset

GPUSTACK = [FIXTURES / e / f"gpustack-{c}.log" for e in ("vllm", "sglang") for c in ("64k", "200k")]
SIXTEEN_K = FIXTURES / "vllm" / "emulated-0.31-color-oom.log"  # vLLM, 16K, N=5, trusted
SHORT = REAL_LOGS / "sglang" / "026.log"  # SGLang, a 2-sample window: not trusted


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare")
    again = folder / "vllm-64k-again.log"  # the same setup and workload, another noise seed
    params = preset("gpustack-64k", "vllm")
    emulate(replace(params, seed=params.seed + 1)).write(again)
    short = folder / "short-sglang.log"
    if SHORT.exists():
        shutil.copy(SHORT, short)
    return {"again": again, "short": short}


@pytest.mark.slow
def test_the_core_result_keeps_every_qualifying_cell_and_names_what_it_leaves_out(logs: dict[str, Path]) -> None:
    if not logs["short"].exists():
        pytest.skip("the shared real excerpts are not here")
    out = run("compare", *map(str, GPUSTACK), str(SIXTEEN_K), str(logs["short"]), str(logs["again"]))
    assert out.exit_code == 0, out.output
    text = out.stdout
    core = text.split("\nCore Result\n", 1)[1].split("\n\n", 1)[0]
    scenarios = [line.split("  ")[0] for line in core.splitlines()[2:]]
    assert scenarios[:2] == ["~16K stable decode (N=5)", "~16K per request"]
    assert "64K (~ vllm) stable decode (N=10)" in scenarios and "200K (~ vllm) stable decode (N=10)" in scenarios
    assert "decode degradation 64K→200K (~ vllm)" in scenarios
    left = [line for line in text.splitlines() if "left out of the Core Result" in line]
    assert len(left) == 2
    assert any(line.startswith(f"{logs['short']} phase 1:") and "not trusted" in line for line in left)
    assert any(
        line.startswith(f"{logs['again']} phase 1:") and "another trusted window of vllm at 64K, N=10" in line
        for line in left
    )


def test_no_degradation_ratio_between_equal_input_lengths(logs: dict[str, Path]) -> None:
    vllm = [str(GPUSTACK[0]), str(logs["again"]), str(GPUSTACK[1])]
    doc = json.loads(run("compare", *vllm, "--json").stdout)
    assert [(d["from_input_tokens"] < 100_000, d["to_input_tokens"] > 100_000) for d in doc["degradation"]] == [
        (True, True)]
    text = run("compare", *vllm).stdout
    assert "64K→64K" not in text and "64K  64K" not in text and "64K      64K" not in text


def test_an_estimated_input_keeps_its_mark_beside_an_exact_one() -> None:
    text = run("compare", str(GPUSTACK[0]), str(GPUSTACK[2])).stdout
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:4]}
    assert rows[str(GPUSTACK[0])][3] == "~64K"  # vLLM's input: Σ prompt throughput (estimated)
    assert rows[str(GPUSTACK[2])][3] == "64K"  # SGLang's: counted from its Prefill lines (exact)
    assert "64K (~ vllm) stable decode (N=10)" in text


@pytest.mark.slow
def test_the_report_names_the_logs_its_core_result_leaves_out(logs: dict[str, Path], tmp_path: Path) -> None:
    from logparse.report.build import build_report

    report = build_report([GPUSTACK[0], GPUSTACK[2], logs["again"]], [], tmp_path, images=False, progress=False)
    assert report.core is not None
    messages = [n.message for n in report.notes]
    assert any("vllm-64k-again phase 1: left out of the Core Result: another trusted window of vllm at 64K"
               in m for m in messages), messages


def test_sglang_spec_throughputs_say_they_are_derived() -> None:
    sglang = run("summary", str(GPUSTACK[2]))
    assert "phase 1: drafted and accepted tok/s are derived, not printed" in sglang.stdout
    spec = json.loads(run("summary", str(GPUSTACK[2]), "--json").stdout)["phases"][0]["spec"]
    assert spec["throughput_derived"] is True
    vllm = run("summary", str(GPUSTACK[0]))  # vLLM prints its drafted / accepted throughput
    assert "are derived" not in vllm.stdout
    assert json.loads(run("summary", str(GPUSTACK[0]), "--json").stdout)["phases"][0]["spec"][
        "throughput_derived"] is False
