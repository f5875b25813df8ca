"""Real vLLM lines from public issues/PRs that an earlier grammar left unparsed (fixtures/real/vllm,
sources in its SOURCES.tsv). Expected kinds and values are read off the lines by hand."""
from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from logparse.cli import cli

REAL = FIXTURES / "real" / "vllm"

# file -> {line_no: (kind, {field: value})}; only the listed lines are asserted.
EXPECTED: dict[str, dict[int, tuple[str, dict[str, Any]]]] = {
    "spec-v1-082-and-bare-bodies.log": {
        1: ("spec_decode", {"draft_accept_rate": 1.0, "accepted": 66, "drafted": 66}),
        2: ("spec_decode", {"draft_accept_pct": 100.0, "accepted": 66, "drafted": 66}),
        3: ("engine_stats", {"prompt_tps": 1.1, "gen_tps": 10.0, "running": 0, "waiting": 0,
                             "gpu_kv_pct": 0.0, "prefix_hit_pct": 0.0}),
    },
    "memory-profiling-results-dec2024.log": {
        1: ("weight_load", {"gib": 18.4902}),
        3: ("memory", {"seconds": 71.88, "total_gpu_gib": 79.15, "non_torch_gib": 1.96, "kv_gib": 34.96,
                       "gpu_memory_utilization": 0.9, "rank": "VllmWorkerProcess", "pid": 1587462,
                       "ts": "12-13 02:10:28", "level": "INFO"}),
        4: ("memory", {"seconds": 72.36, "total_gpu_gib": 79.15, "non_torch_gib": 1.96, "kv_gib": 34.78,
                       "gpu_memory_utilization": 0.9, "rank": None, "pid": None}),
        5: ("kv_pool", {"gpu_blocks": 189945, "cpu_blocks": 21845}),
        6: ("kv_pool", {"per_request_tokens": 1024, "max_concurrency": 2967.89}),
        7: ("cuda_graph", {}),
    },
    "preemption-bare.log": {
        1: ("preemption", {"seq_group": "221", "mode": "RECOMPUTE", "count": 101, "level": None, "ts": None}),
    },
    "club3090-sanitized.log": {
        2: ("jit_compile", {"what": "cache_directory", "rank": "Worker_TP0", "pid": 184, "ts": "07-20 01:18:12"}),
        3: ("jit_compile", {"what": "dynamo_bytecode_transform", "seconds": 11.21}),
        7: ("jit_compile", {"what": "torch_compile_total", "seconds": 50.94}),
    },
    "terminal-pane-border.log": {
        1: ("unparsed", {}),
        2: ("weight_load", {"seconds": 4.6, "rank": "VllmWorker rank=0", "pid": 3008574, "ts": "05-29 23:37:00"}),
        3: ("weight_load", {"seconds": 4.74, "rank": "VllmWorker rank=1", "pid": 3008575}),
        4: ("weight_load", {"gib": 11.4384, "seconds": 5.338305, "rank": "VllmWorker rank=0"}),
        5: ("weight_load", {"gib": 11.4384, "seconds": 5.6822, "rank": "VllmWorker rank=1", "pid": 3008575}),
    },
    "stern-pod-uvicorn-access.log": {
        1: ("request", {"method": "GET", "path": "/metrics", "status": 200, "level": "INFO",
                        "rank": "APIServer", "pid": 1, "ts": None}),
        2: ("engine_stats", {"engine_idx": 0, "prompt_tps": 51.2, "running": 17, "waiting": 183,
                             "rank": "APIServer", "pid": 1, "ts": "04-10 18:45:57"}),
        5: ("request", {"method": "GET", "path": "/metrics", "status": 200, "rank": "APIServer", "pid": 1}),
        6: ("request", {"method": "GET", "path": "/metrics", "status": 200, "rank": "APIServer", "pid": 1}),
    },
    "cuda-driver-oom-traceback.log": {
        6: ("unparsed", {}),
        7: ("oom", {"detail": "CUDA driver error: out of memory", "rank": "EngineCore", "pid": 77,
                    "level": "ERROR", "ts": "05-05 07:35:19"}),
        8: ("unparsed", {}),
    },
}


def _events(name: str, *extra: str) -> dict[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["ingest", str(REAL / name), "--engine", "vllm", "--format", "jsonl", *extra])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return {e["line_no"]: e for e in events}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_hunt_lines(name: str) -> None:
    events = _events(name)
    for line_no, (kind, fields) in EXPECTED[name].items():
        event = events[line_no]
        assert event["kind"] == kind, (line_no, event)
        for field, value in fields.items():
            got = event.get(field)
            if isinstance(value, float):
                assert got == pytest.approx(value), (line_no, field, event)
            else:
                assert got == value, (line_no, field, event)


def test_sources_listed() -> None:
    listed = {row.split("\t")[0] for row in (REAL / "SOURCES.tsv").read_text().splitlines()[1:] if row}
    assert listed == {p.name for p in REAL.glob("*.log")}
