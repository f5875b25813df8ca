"""User grammars: a rule added with --patterns types a line no built-in rule knows, and the drift
warning names the built-in rule that came closest before the user rule existed."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.grammar import load_grammar
from logparse.ingest import ingest

# SGLang's 0.4 decode line (sglang-log-formats.md §3) as a future release might print it: one more
# field at the end. No built-in rule matches it whole, so today it is `unparsed`.
FUTURE = ("[2027-01-10 10:00:0{i} TP0] Decode batch. #running-req: {run}, #token: 67724, token usage: 0.13, "
          "gen throughput (token/s): 183.54, #queue-req: 0, #evicted-req: {ev}")
USER_RULES = r"""
engine = "sglang"

# A future SGLang release: "#evicted-req" after "#queue-req" (hypothetical)
[[rule]]
name = "decode_batch_future"
kind = "decode_batch"
anchor = "Decode batch"
types = { evicted_req = "int" }
regex = '''(?x)
  Decode[ ]batch\.[ ]
  \#running-req:[ ](?P<running_req>[0-9]+),[ ]
  \#token:[ ](?P<num_token>[0-9]+),[ ]
  token[ ]usage:[ ](?P<token_usage>[0-9.]+),[ ]
  gen[ ]throughput[ ]\(token/s\):[ ](?P<gen_tps>[0-9.]+),[ ]
  \#queue-req:[ ](?P<queue_req>[0-9]+),[ ]
  \#evicted-req:[ ](?P<evicted_req>[0-9]+)
'''
[[rule.sample]]
line = '[2027-01-10 10:00:00 TP0] Decode batch. #running-req: 8, #token: 67724, token usage: 0.13, gen throughput (token/s): 183.54, #queue-req: 0, #evicted-req: 3'
expect = { running_req = 8, num_token = 67724, token_usage = 0.13, gen_tps = 183.54, queue_req = 0, evicted_req = 3 }
"""


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), color=True)


@pytest.fixture()
def future_log(tmp_path: Path) -> Path:
    lines = [FUTURE.format(i=i, run=8 + i, ev=i) for i in range(6)]
    path = tmp_path / "future.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def user_rules(tmp_path: Path) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(USER_RULES, encoding="utf-8")
    return path


def test_the_future_line_is_unparsed_and_reported_as_drift(future_log: Path) -> None:
    result = run("ingest", str(future_log), "--format", "json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["engine"] == "sglang" and facts["lines_per_kind"] == {"unparsed": 6}
    [warning] = facts["drift"]
    assert warning["anchor"] == "Decode batch" and warning["lines"] == 6 and warning["first_line"] == 1
    rules = {r.name: r for r in load_grammar().engines["sglang"].rules}
    assert rules[warning["closest_rule"]].kind == "decode_batch"
    assert warning["matched"] > len("Decode batch")  # it read well past the anchor before it stopped
    assert "#evicted-req" in warning["matched_text"] + warning["stopped_at"]
    [family] = [f for f in facts["coverage_by_family"] if f["family"] == "decode_batch"]
    assert family["near_miss"] == 6 and family["typed"] == 0 and family["coverage"] == 0.0

    text = run("ingest", str(future_log))
    assert "warning: 6 lines contain 'Decode batch' but match no rule; closest rule: " in text.output
    assert "matched up to '" in text.output


def test_user_rule_gives_a_typed_column(future_log: Path, user_rules: Path, tmp_path: Path) -> None:
    check = run("patterns", "check", str(user_rules))
    assert check.exit_code == 0, check.output
    out = tmp_path / "out"
    result = run("ingest", str(future_log), "--patterns", str(user_rules), "--out", str(out),
                 "--format", "json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["lines_per_kind"] == {"decode_batch": 6} and facts["drift"] == []
    table = pl.read_parquet(out / "decode_batch.parquet")
    assert table.schema["evicted_req"] == pl.Int64
    assert table["evicted_req"].to_list() == [0, 1, 2, 3, 4, 5]
    assert table["running_req"].to_list() == [8, 9, 10, 11, 12, 13]
    assert set(table["rule"].to_list()) == {"decode_batch_future"}


def test_user_rule_from_the_environment(future_log: Path, user_rules: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGPARSE_PATTERNS", str(user_rules))
    result = ingest(future_log)
    assert result.counts == {"decode_batch": 6}
    assert result["decode_batch"].schema["evicted_req"] == pl.Int64


def test_a_broken_user_rule_is_refused_with_the_check_message(future_log: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(USER_RULES.replace("evicted_req = 3", "evicted_req = 4"), encoding="utf-8")
    result = run("patterns", "check", str(bad))
    assert result.exit_code == 1
    assert 'rule "decode_batch_future", sample 1' in result.output
    assert "evicted_req = 3, expected 4" in result.output
