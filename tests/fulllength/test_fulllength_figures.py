"""Figures of the real full-length logs come from the engine's own lines (issue 25).

Expected values: `grep -n 'Loading weights took\\|Load weight end\\|GPU KV cache size\\|
max_total_num_tokens='` on each raw file (the first loading line is the target model's, the
second the speculative draft's), and `grep -n 'Running: 0 reqs, Waiting: 0 reqs'` for the idle
stats lines, which no phase may hold whatever their averaged throughput says.
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from logparse.analysis.analyze import analyze_log
from tests.fulllength.corpus import server

pytestmark = pytest.mark.slow

# file: (weight load s, KV pool tokens)
FIGURES = {
    "dgx-vllm.log": (570.62, 94_135),
    "dgx-vllm-int4.log": (92.65, 950_420),
    "dgx-qwen36.log": (107.31, 3_366_051),
    "dgx-qwen38-int4.log": (104.59, 1_191_213),
    "dgx-qwen38-nvfp4.log": (136.84, 2_192_477),
    "dgx-gemma4-int4.log": (36.80, 3_875_400),
    "dgx-laguna-int4-pinned.log": (101.55, 1_018_134),
    "dgx-sglang-int4.log": (109.33, 185_897),
}
IDLE = re.compile(r"Running: 0 reqs, (?:Swapped: 0 reqs, Pending|Waiting): 0 reqs")


def _lines(path: Path) -> list[str]:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return raw.decode("utf-8", errors="replace").split("\n")


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_weight_load_and_pool_are_printed_figures(name: str) -> None:
    a = analyze_log(server(name), year=2026)
    load, pool = FIGURES[name]
    assert a.startup["weight_load_s"] == pytest.approx(load)
    assert a.startup["evidence"]["weight_load_s"]["confidence"] == "exact"
    assert a.startup["kv_pool_tokens"] == pool


@pytest.mark.parametrize(
    "name",
    [*sorted(n for n in FIGURES if n.startswith("dgx-") and "sglang" not in n), "k8s-lws-run-1.log.gz",
     "k8s-lws-run-2.log.gz"],
)
def test_no_phase_holds_an_idle_stats_line(name: str) -> None:
    idle = [no for no, line in enumerate(_lines(server(name)), start=1) if IDLE.search(line)]
    assert idle, "each of these logs prints idle stats lines"
    a = analyze_log(server(name), year=2026)
    for ph in a.phases.iter_rows(named=True):
        inside = [no for no in idle if ph["first_line"] <= no <= ph["last_line"]]
        assert not inside, (ph["phase"], inside)


@pytest.mark.parametrize(
    ("name", "load"), [("dgx-vllm-run1-oom.log", 716.49), ("dgx-sglang-versuch1.log", 618.01)]
)
def test_a_start_that_never_served_has_no_phase_and_says_why(name: str, load: float) -> None:
    a = analyze_log(server(name), year=2026)
    assert a.phases.is_empty() and a.no_phases_reason
    assert a.startup["weight_load_s"] == pytest.approx(load)
