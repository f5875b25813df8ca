"""Real SGLang lines found in public GitHub threads that an earlier grammar did not type.

Fixtures under fixtures/real/sglang/ are verbatim excerpts (sources in SOURCES.tsv); the expected
values below were read off the lines by hand.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from logparse.cli import cli

REAL = FIXTURES / "real" / "sglang"

EXPECTED = {
    "issue26248_bracket_lost.log": {
        1: {"kind": "decode_batch", "ts": "2026-05-24 03:51:44", "rank": "TP0", "running_req": 4,
            "num_token": 2642688, "token_usage": 1.0, "swa_num_token": 14592, "swa_token_usage": 0.06,
            "cuda_graph": True, "gen_tps": 429.34, "queue_req": 3},
        2: {"kind": "decode_batch", "ts": "2026-05-24 03:51:45", "rank": "TP0", "gen_tps": 429.52},
        3: {"kind": "decode_batch", "ts": "2026-05-24 03:51:45", "rank": "TP0", "gen_tps": 429.74},
    },
    "pr5081_oom_run_together.log": {
        1: {"kind": "oom", "ts": None, "rank": None, "tried_alloc_tokens": 1444, "available_tokens": 5120,
            "detail": "Prefill out of memory. Try to lower your batch size.Try to allocate 1444 tokens."
                      "Avaliable tokens:5120self.token to kv pool allocator.available size()=5120"
                      "self.tree cache.evictable size()=0"},
    },
    "lmcache2400_fileinfo_prefix.log": {
        1: {"kind": "config", "ts": "2026-01-14 05:25:33", "level": "INFO", "rank": None,
            "key": "attention_backend", "value": "fa3"},
    },
    "issue7011_draft_extend.log": {
        1: {"kind": "cuda_graph", "ts": "2025-06-09 18:16:26", "rank": "TP1", "phase": "end", "graph": "draft",
            "seconds": 13.48, "avail_gib": 31.31, "gib": 1.1},
        2: {"kind": "cuda_graph", "ts": "2025-06-09 18:16:26", "rank": "TP1", "phase": "begin",
            "graph": "draft extend", "avail_gib": 31.31},
    },
    "issue4305_restamped_prefix.log": {
        1: {"kind": "decode_batch", "ts": "2025-03-11 01:44:27", "rank": "TP0", "running_req": 5,
            "num_token": 266623, "token_usage": 0.61, "gen_tps": 136.0, "queue_req": 0},
        3: {"kind": "request", "ts": "2025-03-11 01:44:29", "level": "INFO", "rank": None, "method": "GET",
            "path": "/metrics", "status": 200},
        8: {"kind": "decode_batch", "ts": "2025-03-11 01:44:36", "rank": "TP0", "num_token": 267823, "gen_tps": 135.92},
    },
    "pr17985_loading_weights_took.log": {
        12: {"kind": "weight_load", "ts": "2026-01-30 20:54:56", "rank": "PP1 TP1", "seconds": 2.69},
        13: {"kind": "memory", "ts": "2026-01-30 20:54:56", "rank": "PP1 TP1", "phase": "load_weight_end",
             "avail_gib": 76.05},
        17: {"kind": "weight_load", "ts": "2026-01-30 20:54:57", "rank": "PP0 TP0", "seconds": 2.89},
    },
    "pr4826_flashinfer_prebuilt.log": {
        4: {"kind": "jit_compile", "ts": "2025-03-27 21:33:31,320", "level": "INFO", "rank": None,
            "what": "flashinfer_jit_backend"},
        6: {"kind": "jit_compile", "ts": "2025-03-27 21:33:31,890", "what": "flashinfer_jit_load"},
    },
    "sgldocs_profiled_value_negative.log": {
        6: {"kind": "kv_pool", "ts": "2026-02-11 06:45:01", "rank": None, "max_total_tokens": 20480,
            "profiled_tokens": -89624},
    },
    "issue7547_python_logging_file.log": {
        1: {"kind": "unparsed"},
        2: {"kind": "warning", "ts": "2025-06-27 18:49:53,611", "level": "WARNING", "rank": None,
            "message": "Failed to import deepgemm, disable _ENABLE_JIT_DEEPGEMM."},
    },
}


def _events(path, *extra: str) -> dict[int, dict]:
    res = CliRunner().invoke(cli, ["ingest", str(path), "--engine", "sglang", "--format", "jsonl", "-j", "1", *extra])
    assert res.exit_code == 0, res.output
    return {e["line_no"]: e for e in map(json.loads, res.stdout.splitlines())}


def test_sources_cover_every_fixture() -> None:
    listed = {row.split("\t")[0] for row in (REAL / "SOURCES.tsv").read_text().splitlines()[1:] if row}
    assert listed == {p.name for p in REAL.glob("*.log")}
    assert listed == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_hunt_lines(name: str) -> None:
    events = _events(REAL / name)
    assert len(events) == len((REAL / name).read_text().splitlines())
    for line_no, want in EXPECTED[name].items():
        got = events[line_no]
        for key, value in want.items():
            assert got.get(key) == value, (name, line_no, key, got)


def test_a_python_logging_line_naming_an_sglang_module_settles_the_engine() -> None:
    # issue7547: a vLLM-format platform line first, then SGLang's python-logging line naming
    # `sglang.srt.…`; without the module marker the vLLM line alone decided (vllm 0.50, sglang 0.00)
    res = CliRunner().invoke(cli, ["detect", str(REAL / "issue7547_python_logging_file.log")])
    assert res.exit_code == 0, res.output
    assert res.output.split(": ", 1)[1].split()[:2] == ["sglang", "1.00"]
