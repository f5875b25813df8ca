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
# vLLM, 16K, N=5: 4 contiguous stable samples, not trusted by the window rule (>= 5 samples)
SIXTEEN_K_SHORT = FIXTURES / "vllm" / "emulated-0.31-color-oom.log"
SHORT = REAL_LOGS / "sglang" / "026.log"  # SGLang, two phases of 2- and 1-sample windows: not trusted


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare")
    # The same setup and input, another noise seed, and 6,000 output tokens instead of 3,000: a
    # 10-sample trusted window, longer than the fixture's 5, so it holds the 64K cell.
    again = folder / "vllm-64k-again.log"
    params = preset("gpustack-64k", "vllm")
    emulate(replace(params, seed=params.seed + 1, phases=(replace(params.phases[0], output_len=6000),))).write(again)
    # The 16K preset with 2,000 output tokens instead of 1,200: an 8-sample trusted window.
    sixteen = folder / "vllm-16k.log"
    params = preset("emulated-0.31-color-oom", "vllm")
    emulate(replace(params, phases=(replace(params.phases[0], output_len=2000),))).write(sixteen)
    short = folder / "short-sglang.log"
    if SHORT.exists():
        shutil.copy(SHORT, short)
    return {"again": again, "sixteen": sixteen, "short": short}


@pytest.mark.slow
def test_the_core_result_keeps_every_qualifying_cell_and_names_what_it_leaves_out(logs: dict[str, Path]) -> None:
    if not logs["short"].exists():
        pytest.skip("the shared real excerpts are not here")
    logs_given = [*GPUSTACK, logs["sixteen"], SIXTEEN_K_SHORT, logs["short"], logs["again"]]
    out = run("compare", *map(str, logs_given))
    assert out.exit_code == 0, out.output
    text = out.stdout
    core = text.split("\nCore Result\n", 1)[1].split("\n\n", 1)[0]
    scenarios = [line.split("  ")[0] for line in core.splitlines()[2:]]
    assert scenarios[:2] == ["~16K stable decode (N=5)", "~16K per request"]
    assert "64K (~ vllm) stable decode (N=10)" in scenarios and "200K (~ vllm) stable decode (N=10)" in scenarios
    assert "decode degradation 64K→200K (~ vllm)" in scenarios
    left = [line for line in text.splitlines() if "left out of the Core Result" in line]
    assert len(left) == 4  # the 4-sample 16K run, both phases of the short run, the shorter 64K window
    assert any(
        line.startswith(f"{SIXTEEN_K_SHORT} phase 1:") and "not trusted: 4 sample(s), need 5" in line for line in left
    )
    assert any(line.startswith(f"{logs['short']} phase 1:") and "not trusted" in line for line in left)
    assert any(
        line.startswith(f"{GPUSTACK[0]} phase 1:")
        and "another trusted window of vllm at 64K, N=10 holds that cell" in line
        and f"({logs['again']} phase 1, 10 samples)" in line
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
    # the longer window (10 samples against the fixture's 5) holds the cell; the report names the other
    assert any("gpustack-64k phase 1: left out of the Core Result: another trusted window of vllm at 64K, N=10"
               " holds that cell (vllm vllm-64k-again phase 1, 10 samples)" in m for m in messages), messages


def test_sglang_spec_throughputs_say_they_are_derived() -> None:
    sglang = run("summary", str(GPUSTACK[2]))
    assert "phase 1: drafted and accepted tok/s are derived, not printed" in sglang.stdout
    spec = json.loads(run("summary", str(GPUSTACK[2]), "--json").stdout)["phases"][0]["spec"]
    assert spec["throughput_derived"] is True
    vllm = run("summary", str(GPUSTACK[0]))  # vLLM prints its drafted / accepted throughput
    assert "are derived" not in vllm.stdout
    assert json.loads(run("summary", str(GPUSTACK[0]), "--json").stdout)["phases"][0]["spec"][
        "throughput_derived"] is False
