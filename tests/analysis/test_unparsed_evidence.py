"""Evidence seen but not typed is never reported as absent (issue 14, "No decode stats lines when
they are there"): every command says how many lines of the family it saw, shows one, and points
at `logparse unknown --rule`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from untyped_tables import as_if_untyped

from logparse.analysis.analyze import analyze
from logparse.analysis.unparsed import unparsed_families
from logparse.cli import cli
from logparse.grammar import load_grammar
from logparse.store import write_tables

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "real-logs"
VLLM_076 = REAL / "vllm" / "076.log"      # a cut "2 Engines Aggregated: Avg prompt throughput" line
VLLM_013 = REAL / "vllm" / "013.log"      # six real V0 stats lines
SGLANG_050 = REAL / "sglang" / "050.log"  # a cut "Prefill batch." line
SGLANG_002 = REAL / "sglang" / "002.log"  # real "Decode batch." lines


def _json(*args: str) -> dict:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def untyped_stats_folder(tmp_path: Path) -> Path:
    """A table folder of a real vLLM log whose stats lines no rule typed."""
    out = tmp_path / "tables"
    write_tables(as_if_untyped(VLLM_013, "vllm", "engine_stats"), out)
    return out


def test_summary_json_names_the_stats_line_no_rule_typed(untyped_stats_folder: Path) -> None:
    summary = _json("summary", str(untyped_stats_folder), "--json")
    codes = {d["code"]: d for d in summary["diagnostics"]}
    assert codes["unparsed_engine_stats"]["severity"] == "warning"
    assert "6 line(s)" in codes["unparsed_engine_stats"]["message"]
    assert "Avg prompt throughput" in codes["unparsed_engine_stats"]["message"]
    assert "logparse unknown" in codes["unparsed_engine_stats"]["message"]
    assert "no decode stats lines (engine_stats)" not in codes["no_decode_stats"]["message"]
    assert codes["no_decode_stats"]["severity"] == "warning"
    (evidence,) = summary["unparsed_evidence"]
    assert evidence["kind"] == "engine_stats" and evidence["lines"] == 6
    assert evidence["example"] == VLLM_013.read_text().splitlines()[evidence["first_line"] - 1]
    assert "could be read" in summary["no_phases_reason"]


@pytest.mark.parametrize("command", ["summary", "windows"])
def test_text_commands_warn_with_count_and_example(command: str, untyped_stats_folder: Path) -> None:
    result = CliRunner().invoke(cli, [command, str(untyped_stats_folder)])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "unparsed_engine_stats" in flat and "6 line(s) look like vLLM stats" in flat
    assert "Avg prompt throughput" in flat
    assert "no decode stats lines (engine_stats)" not in flat


def test_stats_lines_cut_short_are_typed_as_far_as_they_go() -> None:
    """A cut stats line is read up to the cut, so it is not unparsed evidence: the dangling key is
    kept in `extra` with no value."""
    from logparse.ingest import ingest

    vllm = ingest(VLLM_076, engine="vllm")
    (stats,) = vllm.tables["engine_stats"].to_dicts()
    assert (stats["engines_aggregated"], stats["running"], stats["waiting"]) == (2, 1, 0)
    assert stats["extra"] == [{"key": "GPU", "value": ""}]
    sglang = ingest(SGLANG_050, engine="sglang")
    (prefill,) = sglang.tables["prefill_batch"].to_dicts()
    assert (prefill["new_seq"], prefill["new_token"], prefill["cached_token"]) == (17, 13938, 3260)
    for result in (vllm, sglang):
        assert unparsed_families(result.tables, load_grammar(), result.engine or "") == []


def test_decode_batch_lines_no_rule_typed_are_not_absent() -> None:
    tables = as_if_untyped(SGLANG_002, "sglang", "decode_batch")
    a = analyze(tables, engine="sglang", source="002.log")
    codes = {d["code"]: d for d in a.diagnostics.to_dicts()}
    lines = len(SGLANG_002.read_text().splitlines())
    assert f"{lines:,} line(s) look like `Decode batch` lines" in codes["unparsed_decode_batch"]["message"]
    assert codes["no_decode_stats"]["severity"] == "warning"
    assert "not measured, not absent" in codes["no_decode_stats"]["message"]
    assert a.no_phases_reason is not None and "unparsed_decode_batch" in a.no_phases_reason


def test_families_come_from_the_grammars_own_anchors() -> None:
    grammar = load_grammar()
    tables = as_if_untyped(SGLANG_002, "sglang", "decode_batch")
    (family,) = unparsed_families(tables, grammar, "sglang")
    anchors = {a for r in grammar.engines["sglang"].rules if r.kind == "decode_batch" for a in r.marks}
    assert family.kind == "decode_batch" and any(a in family.example for a in anchors)
    assert unparsed_families(tables, grammar, "vllm") == []   # vLLM's anchors do not read SGLang lines


def test_every_typed_real_excerpt_claims_no_missing_decode_stats() -> None:
    """Where the grammar typed every stats line, nothing is reported as unparsed stats."""
    grammar = load_grammar()
    from logparse.ingest import ingest

    for engine in ("sglang", "vllm"):
        for path in sorted((REAL / engine).glob("*.log")):
            families = unparsed_families(ingest(path, engine=engine).tables, grammar, engine)
            kinds = {f.kind for f in families}
            if path not in (VLLM_076, SGLANG_050):
                assert not kinds & {"decode_batch", "engine_stats", "prefill_batch"}, path.name


def test_the_headline_warns_of_untyped_decode_lines() -> None:
    """`ingest` says so too: N lines that look like Decode batch lines, however few, are evidence."""
    import dataclasses

    from logparse.headline import headline, render_headline
    from logparse.ingest import ingest

    result = ingest(SGLANG_002, engine="sglang")
    untyped = dataclasses.replace(result, tables=as_if_untyped(SGLANG_002, "sglang", "decode_batch"))
    facts = headline(untyped)
    lines = len(SGLANG_002.read_text().splitlines())
    assert [(f["kind"], f["lines"]) for f in facts["unparsed_evidence"]] == [("decode_batch", lines)]
    text = render_headline(facts)
    assert f"warning: {lines:,} line(s) look like decode_batch lines but no rule typed them" in text, text
    assert headline(result)["unparsed_evidence"] == []
