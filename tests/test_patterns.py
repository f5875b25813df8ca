"""The grammars check themselves; broken grammars fail with messages that say where and why."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.grammar.check import check_files, check_grammar, matched_prefix
from logparse.cli import cli
from logparse.grammar import builtin_files, patterns_dir

BAD = Path(__file__).parent / "bad_patterns"
BAD_CASES = sorted(p.stem for p in BAD.glob("*.toml"))


def test_builtin_grammars_pass_their_own_check(grammar) -> None:  # type: ignore[no-untyped-def]
    problems = check_grammar(grammar)
    assert not problems, "\n".join(map(str, problems))


def test_patterns_dir_has_both_engines() -> None:
    names = {p.stem for p in builtin_files()}
    assert {"vllm", "sglang", "kinds", "envelope"} <= names
    assert (patterns_dir() / "vllm.toml").is_file()


def test_every_rule_has_samples(grammar) -> None:  # type: ignore[no-untyped-def]
    for engine in grammar.engines.values():
        for rule in engine.rules:
            assert rule.samples, rule.name
            assert rule.marks or rule.fallback, f"rule {rule.name} has no anchor"


@pytest.mark.parametrize("case", BAD_CASES)
def test_broken_grammar_is_reported(case: str) -> None:
    _, problems = check_files([BAD / f"{case}.toml"])
    text = "\n".join(problems)
    assert problems, f"{case}.toml passed the check"
    assert str(BAD / f"{case}.toml") in text or "not valid TOML" in text
    for expected in (BAD / f"{case}.expected").read_text().splitlines():
        assert expected in text, f"{expected!r} missing from:\n{text}"


def test_cli_check_fails_on_broken_grammar_and_passes_on_builtin() -> None:
    runner = CliRunner()
    ok = runner.invoke(cli, ["patterns", "check"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith("ok:")
    bad = runner.invoke(cli, ["patterns", "check", str(BAD / "mismatch.toml")])
    assert bad.exit_code == 1
    assert "matched up to here" in bad.output and "problem(s)" in bad.output


def test_caret_points_where_matching_stopped() -> None:
    import regex

    pattern = regex.compile(r"Running: (?P<r>[0-9]+) reqs, Waiting: (?P<w>[0-9]+) reqs")
    text = "Running: 3 reqs, Swapped: 0 reqs"
    assert matched_prefix(pattern, text, full=True) == len("Running: 3 reqs, ")


# Two rules that hand any text to a derive function, to test the functions in the core. Their
# samples are probe lines made up for this test (a grammar needs one per rule), not engine lines.
DERIVE_PROBE = """\
engine = "sglang"
[[rule]]
name = "probe_count"
kind = "cuda_graph"
anchor = "probe count="
derive = { num_sizes = "count:_text" }
regex = '''probe count=(?P<_text>.*)'''
[[rule.sample]]
line = "probe count=1, 2"
expect = { num_sizes = 2 }
[[rule]]
name = "probe_duration"
kind = "weight_load"
anchor = "probe duration="
derive = { seconds = "duration:_text" }
regex = '''probe duration=(?P<_text>.*)'''
[[rule.sample]]
line = "probe duration=00:02"
expect = { seconds = 2.0 }
"""


@pytest.mark.parametrize(("function", "text", "column", "want"), [
    ("count", "1, 2, 4, 8", "num_sizes", 4),
    ("count", "", "num_sizes", 0),
    ("duration", "00:04", "seconds", 4.0),
    ("duration", "01:22", "seconds", 82.0),
    ("duration", "1:02:03", "seconds", 3723.0),
    ("duration", "soon", "seconds", None),
])
def test_derive_functions(tmp_path: Path, function: str, text: str, column: str, want: object) -> None:
    from logparse.engine import compiled
    from logparse.grammar import build_grammar

    probe = tmp_path / "probe.toml"
    probe.write_text(DERIVE_PROBE, encoding="utf-8")
    core = compiled(build_grammar([*builtin_files(), probe]), "sglang")
    event = core.parse_lines([f"[2025-12-01 10:00:00 TP0] probe {function}={text}"])[0]
    assert event["rule"] == f"probe_{function}"
    assert event.get(column) == want


def test_field_types_cannot_conflict_across_files(tmp_path: Path) -> None:
    bad = tmp_path / "conflict.toml"
    bad.write_text('[kinds.engine_stats]\ngen_tps = "int"\n')
    _, problems = check_files([bad])
    assert any("declared 'float' elsewhere" in p for p in problems), problems


def test_a_rule_the_core_cannot_run_stops_ingest_with_one_error() -> None:
    from conftest import REAL_LOGS

    log = REAL_LOGS / "vllm" / "050.log"
    for engine in ("vllm", "auto"):
        result = CliRunner().invoke(
            cli, ["ingest", str(log), "--engine", engine, "--patterns", str(BAD / "lookahead.toml")]
        )
        assert result.exit_code == 1, result.output
        assert isinstance(result.exception, SystemExit), result.exception
        assert 'rule "attention_block_lookahead"' in result.output
        assert "a lookahead has no Rust equivalent" in result.output and "lookaround" in result.output
