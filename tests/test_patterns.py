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


@pytest.mark.parametrize(("function", "text", "want"), [
    ("count", "1, 2, 4, 8", 4),
    ("count", "", 0),
    ("duration", "00:04", 4.0),
    ("duration", "01:22", 82.0),
    ("duration", "1:02:03", 3723.0),
    ("duration", "soon", None),
])
def test_derive_functions(function: str, text: str, want: object) -> None:
    from logparse.parse.values import derive

    assert derive(function, text) == want


def test_field_types_cannot_conflict_across_files(tmp_path: Path) -> None:
    bad = tmp_path / "conflict.toml"
    bad.write_text('[kinds.engine_stats]\ngen_tps = "int"\n')
    _, problems = check_files([bad])
    assert any("declared 'float' elsewhere" in p for p in problems), problems
