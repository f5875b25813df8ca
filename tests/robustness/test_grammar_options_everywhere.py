"""`--patterns` and `--year` reach the logs `report` and `reconcile` read (they go to the one
`logparse.ingest` call), and every command that reads logs takes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from logparse.cli import LAZY_COMMANDS, cli
from logparse.emulate import PhaseParams, RunParams, emulate

# vLLM's V1 stats line as a future release might word it: "rate" for "throughput" (hypothetical,
# the input of these tests, not a sample of a real release). No built-in rule reads it.
FUTURE_WORDS = {
    "Avg prompt throughput": "Avg prompt rate",
    "Avg generation throughput": "Avg generation rate",
}
FUTURE_RULE = r"""
engine = "vllm"

[[rule]]
name = "engine_stats_rate_words"
kind = "engine_stats"
title = '''(?:Engine[ ](?P<engine_idx>[0-9]+):[ ])?'''
first = ["Avg prompt rate"]
[rule.keys]
"Avg prompt rate" = { field = "prompt_tps", unit = "tokens/s" }
"Avg generation rate" = { field = "gen_tps", unit = "tokens/s" }
"Running" = { field = "running", unit = "reqs" }
"Waiting" = { field = "waiting", unit = "reqs" }
"Prefix cache hit rate" = { field = "prefix_hit_pct", unit = "%" }
[[rule.key]]
pattern = '''GPU[ ]KV[ ]cache[ ]usage'''
field = "gpu_kv_pct"
unit = "%"
[[rule.sample]]
line = '(APIServer pid=1) INFO 07-28 17:08:16 [loggers.py:127] Engine 000: Avg prompt rate: 0.0 tokens/s, Avg generation rate: 100.4 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.4%, Prefix cache hit rate: 0.0%'
expect = { engine_idx = 0, prompt_tps = 0.0, gen_tps = 100.4, running = 4, waiting = 0, gpu_kv_pct = 4.4, prefix_hit_pct = 0.0 }
"""
CLIENT = {  # `vllm bench serve --save-result` keys of the emulated phase's run
    "date": "20260705-143310",
    "backend": "openai-chat",
    "model_id": "m",
    "num_prompts": 6,
    "max_concurrency": 6,
    "random_output_len": 3000,
    "duration": 300,
    "completed": 6,
    "total_output_tokens": 18000,
    "output_throughput": 60.0,
    "mean_ttft_ms": 900.0,
    "mean_tpot_ms": 20.0,
    "mean_itl_ms": 20.0,
    "mean_e2el_ms": 15_000.0,
}


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The emulated server log (its stamps print no year), the same log in future words, the rule
    that reads them, and a client result of the run."""
    folder = tmp_path_factory.mktemp("logs")
    text = emulate(
        RunParams(engine="vllm", seed=7, phases=(PhaseParams(concurrency=6, output_len=3000),))
    ).text
    assert " INFO 07-28 " in text  # year-less vLLM stamps: --year decides their year
    future = text
    for old, new in FUTURE_WORDS.items():
        future = future.replace(old, new)
    paths = {
        "log": folder / "server.log",
        "future": folder / "future.log",
        "rule": folder / "future.toml",
        "client": folder / "client.json",
    }
    paths["log"].write_text(text)
    paths["future"].write_text(future)
    paths["rule"].write_text(FUTURE_RULE)
    paths["client"].write_text(json.dumps(CLIENT))
    return paths


def _reconcile(log: Path, client: Path, *extra: str) -> dict[str, Any]:
    verdict = json.loads(run("reconcile", str(log), str(client), "--json", *extra).stdout)
    verdict.pop("server_log")
    return verdict


def test_a_user_pattern_changes_reconcile(logs: dict[str, Path]) -> None:
    original = _reconcile(logs["log"], logs["client"])
    assert original["server_phase"] is not None and original["server_phase"]["stable_gen_tps"] > 0
    unread = _reconcile(logs["future"], logs["client"])
    assert unread != original  # no rule reads the stats lines: no engine phase to compare with
    assert _reconcile(logs["future"], logs["client"], "--patterns", str(logs["rule"])) == original


def test_year_reaches_reconcile(logs: dict[str, Path]) -> None:
    phase = _reconcile(logs["log"], logs["client"], "--year", "2031")["server_phase"]
    assert phase["start"].startswith("2031-07-28 ") and phase["end"].startswith("2031-07-28 ")
    assert not _reconcile(logs["log"], logs["client"], "--year", "2030")["server_phase"]["start"].startswith(
        "2031"
    )


def _report(log: Path, out: Path, *extra: str) -> tuple[list[str], str]:
    result = run("report", str(log), "-o", str(out), "--no-images", *extra)
    assert result.exit_code == 0, result.output
    return sorted(p.name for p in (out / "tables").iterdir()), (out / "summary.md").read_text()


def test_a_user_pattern_changes_report(logs: dict[str, Path], tmp_path: Path) -> None:
    def kinds(tables: list[str]) -> set[str]:  # the chart each table belongs to, without the log's name
        return {name.split("-")[0] for name in tables}

    original, _ = _report(logs["log"], tmp_path / "original")
    unread, _ = _report(logs["future"], tmp_path / "unread")
    read, _ = _report(logs["future"], tmp_path / "read", "--patterns", str(logs["rule"]))
    assert "kv" in kinds(original) and "kv" not in kinds(unread)  # the KV chart needs the stats lines
    assert kinds(read) == kinds(original)


def test_year_reaches_report(logs: dict[str, Path], tmp_path: Path) -> None:
    _, summary = _report(logs["log"], tmp_path / "y2031", "--year", "2031")
    assert "2031-07-28 17:" in summary
    _, other = _report(logs["log"], tmp_path / "y2030", "--year", "2030")
    assert "2031-07-28" not in other and "2030-07-28 17:" in other


# Commands that read logs, and those that do not (bench reads client result files only).
READS_LOGS = {"ingest", "summary", "windows", "compare", "report", "reconcile", "unknown", "export", "gate",
              "follow"}
READS_NO_LOGS = {"patterns", "detect", "emulate", "bench", "schema", "explain"}


LEAVES_READING_NO_LOGS = {"export lnav"}  # writes the grammars (it takes --patterns, no --year)


def _leaf_commands(name: str) -> list[tuple[str, object]]:
    import click

    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    if isinstance(command, click.Group):
        return [(f"{name} {sub}", command.commands[sub]) for sub in sorted(command.commands)]
    return [(name, command)]


def test_every_command_that_reads_logs_takes_patterns_and_year() -> None:
    assert set(LAZY_COMMANDS) == READS_LOGS | READS_NO_LOGS  # a new command is put in one of them
    for name in sorted(READS_LOGS):
        for shown, command in _leaf_commands(name):
            if shown in LEAVES_READING_NO_LOGS:
                continue
            options = {opt for param in command.params for opt in param.opts}  # type: ignore[attr-defined]
            assert {"--patterns", "--year"} <= options, shown
