"""`logparse gate` on emulated runs: another noise seed holds, a 15 % decode cut fails naming decode,
64K against 200K is not comparable, and the JUnit file has the shape pytest's own has."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.emulate import emulate
from logparse.emulate.presets import preset
from logparse.gate import run_gate

# The decode throughput each engine prints per stats interval (vLLM's stats line, SGLang's Decode line).
DECODE_RATE = {
    "vllm": re.compile(r"(Avg generation throughput: )([0-9.]+)"),
    "sglang": re.compile(r"(gen throughput \(token/s\): )([0-9.]+)"),
}


def cut_decode(text: str, engine: str, factor: float) -> str:
    """The same log with every printed decode throughput multiplied by `factor`."""
    return DECODE_RATE[engine].sub(lambda m: f"{m.group(1)}{float(m.group(2)) * factor:.2f}", text)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gate")
    out: dict[str, Path] = {}
    for engine in ("vllm", "sglang"):
        # The preset's 64K workload with 6,000 output tokens instead of 3,000: every seed's stable
        # window is then long enough to trust (vLLM: 10-11 samples; with 3,000, some seeds give 4,
        # an untrusted window the gate rightly refuses to judge).
        params = preset("gpustack-64k", engine)
        params = replace(params, phases=(replace(params.phases[0], output_len=6000),))
        for name, seed in (("base", params.seed), ("seed2", params.seed + 1000), ("seed3", params.seed + 2000)):
            path = folder / f"{engine}-64k-{name}.log"
            emulate(replace(params, seed=seed)).write(path)
            out[f"{engine}-{name}"] = path
        cut = folder / f"{engine}-64k-cut.log"
        cut.write_text(cut_decode(out[f"{engine}-base"].read_text(), engine, 0.85))
        out[f"{engine}-cut"] = cut
    long = folder / "vllm-200k.log"
    emulate(preset("gpustack-200k", "vllm")).write(long)
    out["vllm-200k"] = long
    return out


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_same_preset_with_another_noise_seed_holds(logs: dict[str, Path], engine: str) -> None:
    result = run_gate([str(logs[f"{engine}-base"])], str(logs[f"{engine}-seed2"]))
    assert result.verdict == "holds", result.summary()
    assert result.exit_status == 0
    judged = {j.metric.key for j in result.judgements}
    assert {"decode_tps", "per_request_tps", "prefill_tps", "cold_start_s", "kv_pool_tokens"} <= judged
    decode = next(j for j in result.judgements if j.metric.key == "decode_tps")
    assert decode.candidate != decode.baseline  # another seed: other samples, still within bounds


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_decode_throughput_cut_15_percent_fails_naming_decode(logs: dict[str, Path], engine: str) -> None:
    result = run_gate([str(logs[f"{engine}-base"])], str(logs[f"{engine}-cut"]))
    assert result.exit_status == 1
    regressed = {j.metric.key for j in result.judgements if j.verdict == "regressed"}
    assert regressed == {"decode_tps", "per_request_tps"}
    decode = next(j for j in result.judgements if j.metric.key == "decode_tps")
    assert decode.change_pct == pytest.approx(-15.0, abs=0.1)
    assert decode.bound_pct < 15.0
    assert "decode_tps" in result.summary()


def test_64k_against_200k_is_not_comparable_and_names_the_input_length(logs: dict[str, Path]) -> None:
    result = run_gate([str(logs["vllm-base"])], str(logs["vllm-200k"]))
    assert result.exit_status == 2
    assert result.verdict == "not comparable"
    assert result.judgements == []
    assert any("input length" in p and "64K" in p and "200K" in p for p in result.problems)


def test_a_candidate_window_too_short_to_trust_is_missing_not_judged(tmp_path: Path) -> None:
    """The preset itself (3,000 output tokens) with another seed: its window has 4 contiguous
    stable samples, under the window rule's 5, so the gate judges no decode figure on it."""
    params = preset("gpustack-64k", "vllm")
    base, short = tmp_path / "base.log", tmp_path / "short.log"
    emulate(params).write(base)
    emulate(replace(params, seed=params.seed + 1000)).write(short)
    result = run_gate([str(base)], str(short))
    assert result.verdict == "incomplete" and result.exit_status == 2
    decode = next(j for j in result.judgements if j.metric.key == "decode_tps")
    assert decode.verdict == "missing" and decode.candidate is None
    assert decode.note is not None and "not trusted: 4 sample(s), need 5" in decode.note


def test_several_baselines_give_their_median_and_their_spread(logs: dict[str, Path]) -> None:
    bases = [str(logs[f"vllm-{n}"]) for n in ("base", "seed2", "seed3")]
    result = run_gate(bases, str(logs["vllm-cut"]))
    decode = next(j for j in result.judgements if j.metric.key == "decode_tps")
    values = [v for v in decode.baselines if v is not None]
    assert len(values) == 3
    assert decode.baseline == sorted(values)[1]
    assert decode.noise_source in ("window cv", "baseline spread")
    assert decode.verdict == "regressed"


def test_cli_writes_junit_markdown_and_json(logs: dict[str, Path], tmp_path: Path) -> None:
    junit, markdown = tmp_path / "gate.xml", tmp_path / "gate.md"
    args = ["gate", str(logs["vllm-base"]), str(logs["vllm-cut"]), "--junit", str(junit), "--markdown", str(markdown)]
    out = CliRunner().invoke(cli, [*args, "--json"])
    assert out.exit_code == 1, out.output
    doc = json.loads(out.output)
    assert doc["verdict"] == "regressed" and doc["exit_status"] == 1
    assert {m["name"] for m in doc["metrics"] if m["verdict"] == "regressed"} == {
        "decode_tps[phase 1 (~64K, N=10)]",
        "per_request_tps[phase 1 (~64K, N=10)]",
    }
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert int(suite.get("tests", "")) == len(cases) == len(doc["metrics"])
    failed = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("failures", "")) == len(failed) == 2
    for case in failed:
        failure = case.find("failure")
        assert failure is not None
        assert "-15.0%" in failure.get("message", "") and "tok/s" in failure.get("message", "")
    text = markdown.read_text()
    assert "### logparse gate: regressed" in text and "| `decode_tps[phase 1 (~64K, N=10)]` |" in text
    shown = CliRunner().invoke(cli, args)
    assert shown.exit_code == 1 and "REGRESSED" in shown.output and "decode_tps" in shown.output


def _shape(root: ET.Element) -> tuple[set[tuple[str, str]], dict[str, set[str]]]:
    """(parent tag, child tag) pairs and the attributes seen per tag."""
    pairs: set[tuple[str, str]] = set()
    attrs: dict[str, set[str]] = {}
    for parent in root.iter():
        attrs.setdefault(parent.tag, set()).update(parent.attrib)
        pairs.update((parent.tag, child.tag) for child in parent)
    return pairs, attrs


@pytest.mark.slow
def test_junit_has_the_shape_pytest_writes(logs: dict[str, Path], tmp_path: Path) -> None:
    """Our file next to one the real pytest writes for a passing, failing and erroring test."""
    (tmp_path / "test_shape.py").write_text(
        "import pytest\n"
        "def test_pass(record_testsuite_property):\n    record_testsuite_property('baseline', 'a.log')\n"
        "    print('out')\n"
        "def test_fail():\n    assert 1 == 2\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('x')\n"
        "def test_error(broken):\n    pass\n"
    )
    reference = tmp_path / "pytest.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_logging=system-out",
         "-o", "junit_family=xunit2", f"--junitxml={reference}", "test_shape.py"],
        cwd=tmp_path, capture_output=True, check=False,
    )
    ref_pairs, ref_attrs = _shape(ET.parse(reference).getroot())
    ours = tmp_path / "gate.xml"
    for candidate in ("vllm-cut", "vllm-200k"):  # failures; errors (not comparable)
        CliRunner().invoke(cli, ["gate", str(logs["vllm-base"]), str(logs[candidate]), "--junit", str(ours)])
        pairs, attrs = _shape(ET.parse(ours).getroot())
        assert pairs <= ref_pairs, pairs - ref_pairs
        for tag, names in attrs.items():
            assert names <= ref_attrs[tag], (tag, names - ref_attrs[tag])
