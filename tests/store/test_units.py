"""Derived unit columns: one idea in one unit on every engine (`kv_usage_frac` on vLLM and SGLang),
the printed column kept, the same from the core and from the reference parser, in JSONL too."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import logparse
from logparse.cli import cli
from logparse.grammar import build_grammar, builtin_files
from logparse.store.units import Derivation, add_derived, derivations

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
    for reference in (False, True):
        frame = logparse.ingest(log, reference=reference)[kind]
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


def test_the_first_source_set_gives_the_value() -> None:
    schema = pa.schema([("draft_accept_pct", pa.float64()), ("draft_accept_rate", pa.float64())])
    batch = pa.RecordBatch.from_pydict(
        {"draft_accept_pct": [62.3, None, None], "draft_accept_rate": [None, 0.712, None]}, schema=schema
    )
    got = add_derived(GRAMMAR, "spec_decode", batch)
    assert got.schema.names == [*schema.names, "draft_accept_frac"]
    assert got.column("draft_accept_frac").to_pylist() == [0.623, 0.712, None]


@given(st.integers(min_value=0, max_value=1000))
def test_a_printed_percent_to_one_decimal_becomes_its_fraction(tenths: int) -> None:
    pct = tenths / 10
    batch = pa.RecordBatch.from_pydict({"gpu_kv_pct": [pct]})
    frac = add_derived(GRAMMAR, "engine_stats", batch).column("kv_usage_frac")[0].as_py()
    assert frac == float(f"{pct / 100:.4f}")


def test_jsonl_carries_the_derived_columns_from_core_and_reference() -> None:
    runner = CliRunner()
    args = ["ingest", str(SGLANG_LOG), "--format", "jsonl"]
    core = runner.invoke(cli, args)
    ref = runner.invoke(cli, [*args, "--reference"])
    assert core.exit_code == ref.exit_code == 0
    assert core.stdout == ref.stdout
    events = [json.loads(line) for line in core.stdout.splitlines()]
    decode = [e for e in events if e["kind"] == "decode_batch"]
    assert decode and all(e["kv_usage_frac"] == e["token_usage"] for e in decode)
    assert all(e["kv_usage_pct"] == pytest.approx(100 * e["token_usage"]) for e in decode)
