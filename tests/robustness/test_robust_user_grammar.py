"""User grammars: a stats line with a key no vocabulary knows is still typed and the key reported;
a `--patterns` file adds the key to the built-in rule (`extends`), or adds a rule for a line no
built-in rule knows, and the drift warning names the built-in rule that came closest before."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.ingest import ingest

# SGLang's 0.4 decode line (sglang-log-formats.md §3) as a future release might print it: one more
# key at the end (hypothetical, the input of these tests, not a grammar sample).
FUTURE = ("[2027-01-10 10:00:0{i} TP0] Decode batch. #running-req: {run}, #token: 67724, token usage: 0.13, "
          "gen throughput (token/s): 183.54, #queue-req: 0, #evicted-req: {ev}")
EXTENSION = """
engine = "sglang"

[kinds.decode_batch]
evicted_req = { type = "int", unit = "requests", description = "SGLang `#evicted-req` (hypothetical future key)" }

# A future SGLang release: "#evicted-req" after "#queue-req" (hypothetical)
[[rule]]
extends = "decode_batch"
[rule.keys]
"#evicted-req" = "evicted_req"
[[rule.sample]]
line = '[2027-01-10 10:00:00 TP0] Decode batch. #running-req: 8, #token: 67724, token usage: 0.13, gen throughput (token/s): 183.54, #queue-req: 0, #evicted-req: 3'
expect = { running_req = 8, num_token = 67724, token_usage = 0.13, gen_tps = 183.54, queue_req = 0, evicted_req = 3 }
"""
# SGLang's "Load weight end." line with two more fields (hypothetical): no built-in rule reads it whole.
LOAD_END = ("[2027-01-10 10:00:0{i} TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
            "avail mem=63.62 GB, mem usage=14.99 GB, elapsed={s}.20 s, peak=15.10 GB.")
LOAD_RULE = r"""
engine = "sglang"

[[rule]]
name = "load_weight_end_future"
kind = "memory"
anchor = "Load weight end"
types = { peak_gb = { type = "float", unit = "GB (as printed)", description = "`peak=x GB` (hypothetical)" } }
regex = '''(?x)
  Load[ ]weight[ ]end\.[ ]type=(?P<model_type>\w+),[ ]dtype=(?P<dtype>[\w.]+),[ ]
  avail[ ]mem=(?P<avail_gib>[0-9.]+)[ ]GB,[ ]mem[ ]usage=(?P<weights_gib>[0-9.]+)[ ]GB,[ ]
  elapsed=(?P<load_s>[0-9.]+)[ ]s,[ ]peak=(?P<peak_gb>[0-9.]+)[ ]GB\.
'''
[[rule.sample]]
line = '[2027-01-10 10:00:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.62 GB, mem usage=14.99 GB, elapsed=3.20 s, peak=15.10 GB.'
expect = { model_type = 'LlamaForCausalLM', dtype = 'torch.bfloat16', avail_gib = 63.62, weights_gib = 14.99, load_s = 3.2, peak_gb = 15.1 }
"""


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), color=True)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def future_log(tmp_path: Path) -> Path:
    return _write(tmp_path / "future.log", "\n".join(FUTURE.format(i=i, run=8 + i, ev=i) for i in range(6)) + "\n")


@pytest.fixture()
def extension(tmp_path: Path) -> Path:
    return _write(tmp_path / "mine.toml", EXTENSION)


def test_a_new_key_still_types_the_line_and_is_reported(future_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("ingest", str(future_log), "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["engine"] == "sglang" and facts["lines_per_kind"] == {"decode_batch": 6}
    assert facts["drift"] == []
    [unknown] = facts["unknown_fields"]
    assert (unknown["key"], unknown["lines"], unknown["rule"], unknown["unreadable"]) == \
        ("#evicted-req", 6, "decode_batch", False)
    assert "SGLang Decode batch (rule decode_batch): unknown field '#evicted-req' on 6 lines" in unknown["message"]
    table = pl.read_parquet(out / "decode_batch.parquet")
    assert table["running_req"].to_list() == [8, 9, 10, 11, 12, 13]
    assert table["extra"].to_list()[2] == [{"key": "#evicted-req", "value": "2"}]
    text = run("ingest", str(future_log))
    assert "unknown field '#evicted-req' on 6 lines" in text.output and 'extends = "decode_batch"' in text.output


def test_an_extension_types_the_new_key(future_log: Path, extension: Path, tmp_path: Path) -> None:
    check = run("patterns", "check", str(extension))
    assert check.exit_code == 0, check.output
    out = tmp_path / "out"
    result = run("ingest", str(future_log), "--patterns", str(extension), "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["lines_per_kind"] == {"decode_batch": 6} and facts["unknown_fields"] == []
    table = pl.read_parquet(out / "decode_batch.parquet")
    assert table.schema["evicted_req"] == pl.Int64
    assert table["evicted_req"].to_list() == [0, 1, 2, 3, 4, 5]
    assert table["extra"].null_count() == 6
    assert set(table["rule"].to_list()) == {"decode_batch"}


def test_an_extension_from_the_environment(future_log: Path, extension: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGPARSE_PATTERNS", str(extension))
    result = ingest(future_log)
    assert result.counts == {"decode_batch": 6}
    assert result["decode_batch"].schema["evicted_req"] == pl.Int64


@pytest.mark.parametrize(("edit", "message"), [
    (("evicted_req = 3 }", "evicted_req = 4 }"), "evicted_req = 3, expected 4"),
    (('extends = "decode_batch"', 'extends = "decode_batches"'), "'decode_batches' is not a stats rule of sglang"),
    (('"#evicted-req" = "evicted_req"', '"#queue-req" = "evicted_req"'), "key(s) ['#queue-req'] are already in"),
    (('extends = "decode_batch"', 'extends = "decode_batch"\nname = "x"'), "unknown key 'name'"),
], ids=["wrong-expect", "no-such-rule", "key-taken", "stray-key"])
def test_a_broken_extension_is_refused_with_the_check_message(tmp_path: Path, edit: tuple[str, str],
                                                              message: str) -> None:
    assert edit[0] in EXTENSION
    bad = _write(tmp_path / "bad.toml", EXTENSION.replace(*edit))
    result = run("patterns", "check", str(bad))
    assert result.exit_code == 1 and message in result.output, result.output


def test_a_line_no_rule_reads_is_drift_until_a_user_rule_types_it(tmp_path: Path) -> None:
    log = _write(tmp_path / "load.log", "\n".join(LOAD_END.format(i=i, s=i) for i in range(4)) + "\n")
    before = json.loads(run("ingest", str(log), "--engine", "sglang", "--format", "json").stdout)
    assert before["lines_per_kind"] == {"unparsed": 4}
    [warning] = before["drift"]
    assert warning["anchor"] == "Load weight end" and warning["lines"] == 4 and warning["first_line"] == 1
    assert warning["closest_rule"] == "memory_load_weight_end"
    assert warning["matched_text"].endswith("mem usage=14.99 GB") and warning["stopped_at"].startswith(", elapsed=")
    [family] = [f for f in before["coverage_by_family"] if f["family"] == "memory"]
    assert family["near_miss"] == 4 and family["typed"] == 0

    rules = _write(tmp_path / "load.toml", LOAD_RULE)
    assert run("patterns", "check", str(rules)).exit_code == 0
    out = tmp_path / "out"
    after = run("ingest", str(log), "--engine", "sglang", "--patterns", str(rules), "--out", str(out),
                "--format", "json")
    assert after.exit_code == 0, after.output
    assert json.loads(after.stdout)["drift"] == []
    memory = pl.read_parquet(out / "memory.parquet")
    assert memory["peak_gb"].to_list() == [15.1] * 4 and memory["load_s"].to_list() == [0.2, 1.2, 2.2, 3.2]
    assert set(memory["rule"].to_list()) == {"load_weight_end_future"}
