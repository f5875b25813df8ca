"""A phase's output tokens per request (`analysis.outputs`, what gate and reconcile compare with a
client's output length) land within the 15 % its docstring states of the emulator's truth.

The idle stats line that ends a vLLM phase (nothing running: `analysis.phases`) still carries
the generation of the interval in which the phase's last requests finished; a 400-token run at
200K context has a single stable sample, so that last interval is a quarter of its output.
"""
from __future__ import annotations

import dataclasses

import pytest

from emulated_runs import analyse
from logparse.analysis.outputs import phase_outputs
from logparse.emulate import RunParams
from logparse.emulate.presets import PRESETS, preset, scenarios


def _short_200k() -> RunParams:
    base = preset("gpustack-200k", "vllm")
    return dataclasses.replace(base, phases=(dataclasses.replace(base.phases[0], output_len=400),))


RUNS = {
    **{f"{engine}/{name}": preset(name, engine) for name in PRESETS for engine in ("vllm", "sglang")},
    **scenarios(),
    "vllm/gpustack-200k-400-output": _short_200k(),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_each_phase_output_length_is_within_15_percent_of_the_truth(name: str) -> None:
    truth, a = analyse(RUNS[name])
    estimated = {r["phase"]: r["output_tokens"] for r in phase_outputs(a.samples, a.phases).iter_rows(named=True)}
    expected = [p["output_tokens"] for p in truth["phases"]]
    assert sorted(estimated) == list(range(1, len(expected) + 1)), estimated
    for phase, tokens in enumerate(expected, start=1):
        assert estimated[phase] == pytest.approx(tokens, rel=0.15), (phase, estimated, expected)
