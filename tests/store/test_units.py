"""Derived unit columns: one idea in one unit on every engine (`kv_usage_frac` on vLLM and SGLang),
the printed column kept, added by the core as it finishes each block, in JSONL too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
import logparse
from logparse.cli import cli
from logparse.grammar import build_grammar, builtin_files
from logparse.store.units import Derivation, derivations

ROOT = Path(__file__).resolve().parents[2]
VLLM_LOG = ROOT / "fixtures" / "vllm" / "gpustack-64k.log"
SGLANG_LOG = ROOT / "fixtures" / "sglang" / "gpustack-64k.log"
GRAMMAR = build_grammar(builtin_files())


def test_the_rules_are_data_from_kinds_toml() -> None:
    rules = derivations(GRAMMAR)
    assert Derivation("engine_stats", "kv_usage_frac", "gpu_kv_pct", 0.01) in rules
    assert Derivation("decode_batch", "kv_usage_frac", "token_usage", 1.0) in rules
    assert Derivation("prefill_batch", "kv_usage_pct", "token_usage", 100.0) in rules
    # every derived column is documented as derived in the schema
    for rule in rules:
        assert GRAMMAR.column_docs[rule.kind][rule.target].description.startswith("Derived:")


@pytest.mark.parametrize(
    ("log", "kind", "printed", "factor"),
    [(VLLM_LOG, "engine_stats", "gpu_kv_pct", 0.01), (SGLANG_LOG, "decode_batch", "token_usage", 1.0)],
    ids=["vllm", "sglang"],
)
def test_both_engines_carry_kv_usage_as_a_fraction(log: Path, kind: str, printed: str, factor: float) -> None:
    frame = logparse.ingest(log)[kind]
    assert frame.height > 0
    assert printed in frame.columns  # the printed value is kept
    for row in frame.select(printed, "kv_usage_frac", "kv_usage_pct").iter_rows(named=True):
        assert row["kv_usage_frac"] == pytest.approx(row[printed] * factor, abs=1e-12)
        assert 0.0 <= row["kv_usage_frac"] <= 1.0
        assert row["kv_usage_pct"] == pytest.approx(row["kv_usage_frac"] * 100, abs=1e-9)


def test_derived_value_is_the_printed_one_moved_without_float_noise() -> None:
    frame = logparse.ingest(VLLM_LOG)["engine_stats"]
    pairs = list(zip(frame["gpu_kv_pct"].to_list(), frame["kv_usage_frac"].to_list()))
    assert pairs and all(frac == round(pct / 100, 10) for pct, frac in pairs)
    assert all(
        len(repr(frac)) <= len(repr(pct)) + 2 for pct, frac in pairs
    )  # 37.2 -> 0.372, not 0.37200000000000005


def test_the_first_source_set_gives_the_value(tmp_path: Path) -> None:
    """`draft_accept_frac` comes from the printed percent or, where a line prints a rate, from it."""
    rate_lines = [s for r in GRAMMAR.engines["vllm"].rules for s in r.samples if "draft_accept_rate" in s.expect]
    log = tmp_path / "spec.log"
    log.write_text("".join(s.line + "\n" for s in rate_lines), encoding="utf-8")
    frame = logparse.ingest(log, engine="vllm")["spec_decode"]
    assert len(rate_lines) >= 2
    assert frame["draft_accept_frac"].to_list() == [s.expect["draft_accept_rate"] for s in rate_lines]
    pct = logparse.ingest(VLLM_LOG)["spec_decode"].select("draft_accept_pct", "draft_accept_frac").drop_nulls()
    assert pct.height and all(frac == round(p / 100, 10) for p, frac in pct.iter_rows())


# a real vLLM 0.9 line (tests/robustness' STATS), its KV figure set to each value vLLM can print
VLLM_KV = ("(APIServer pid=719) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: 2870.5 "
           "tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV cache "
           "usage: {pct}%, Prefix cache hit rate: 0.0%")


def test_every_printed_percent_to_one_decimal_becomes_its_fraction(tmp_path: Path) -> None:
    pcts = [tenths / 10 for tenths in range(1001)]  # every value vLLM prints, 0.0% to 100.0%
    log = tmp_path / "kv.log"
    log.write_text("".join(VLLM_KV.format(pct=p) + "\n" for p in pcts), encoding="utf-8")
    frame = logparse.ingest(log, engine="vllm")["engine_stats"]
    assert frame["gpu_kv_pct"].to_list() == pcts
    assert frame["kv_usage_frac"].to_list() == [float(f"{p / 100:.4f}") for p in pcts]


def test_jsonl_carries_the_derived_columns() -> None:
    runner = CliRunner()
    args = ["ingest", str(SGLANG_LOG), "--format", "jsonl"]
    core = runner.invoke(cli, args)
    assert core.exit_code == 0
    events = [json.loads(line) for line in core.stdout.splitlines()]
    decode = [e for e in events if e["kind"] == "decode_batch"]
    assert decode and all(e["kv_usage_frac"] == e["token_usage"] for e in decode)
    assert all(e["kv_usage_pct"] == pytest.approx(100 * e["token_usage"]) for e in decode)
