"""The OpenMetrics text: its syntax, what Prometheus's own promtool says of it, the CLI around it."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from export_inputs import emulated_logs, promtool, real_logs  # noqa: F401 (pytest fixtures)

from logparse.cli import cli
from logparse.export.openmetrics import render
from logparse.export.series import Series

# `promtool check metrics` lints the Prometheus text format, not OpenMetrics: it flags the colons
# and the `toks_per_s` the engines put in their own names, and looks for a counter's HELP under
# `<family>_total`, where OpenMetrics puts it under the family name. Anything else is a defect.
EXPECTED_LINT = (re.compile(r"^(vllm|sglang):\w+ metric names should not contain ':'$"),
                 re.compile(r"^vllm:avg_\w+_toks_per_s metric names should not contain abbreviated units$"),
                 re.compile(r"^(vllm|sglang):\w+_total no help text$"))


def export_text(*logs: Path) -> str:
    result = CliRunner().invoke(cli, ["export", "openmetrics", *map(str, logs), "-o", "-"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_text_shape() -> None:
    gauge = Series("vllm:x", "gauge", 'HELP with "quotes", a \\ and\na newline',
                   (("model_name", 'a"b\\c\nd'), ("run", "r")), ((1000, 1.5), (2500, float("nan"))))
    counter = Series("vllm:tokens", "counter", "Tokens.", (("run", "r"),), ((1000, 0.0), (2000, 3.0)))
    text = "".join(render([gauge, counter]))
    assert text.splitlines() == [
        "# TYPE vllm:tokens counter",
        "# HELP vllm:tokens Tokens.",
        'vllm:tokens_total{run="r"} 0.0 1',
        'vllm:tokens_total{run="r"} 3.0 2',
        "# TYPE vllm:x gauge",
        '# HELP vllm:x HELP with \\"quotes\\", a \\\\ and\\na newline',
        'vllm:x{model_name="a\\"b\\\\c\\nd",run="r"} 1.5 1',
        'vllm:x{model_name="a\\"b\\\\c\\nd",run="r"} NaN 2.500',
        "# EOF",
    ]


def test_each_family_once_and_counters_named_total(emulated_logs: dict[str, Path]) -> None:
    text = export_text(*emulated_logs.values())
    types = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.MULTILINE)
    assert len(types) == len({name for name, _ in types})
    counters = {name for name, kind in types if kind == "counter"}
    assert {"vllm:generation_tokens", "sglang:generation_tokens"} <= counters
    samples = {line.split("{")[0] for line in text.splitlines() if not line.startswith("#")}
    assert all(name.removesuffix("_total") in counters for name in samples if name.endswith("_total"))
    assert text.endswith("# EOF\n")


def test_promtool_check_metrics_finds_nothing_but_the_known_lint(
        promtool: str, emulated_logs: dict[str, Path], real_logs: dict[str, Path]) -> None:
    text = export_text(*emulated_logs.values(), *real_logs.values())
    # `check metrics` lints names, types and help with the Prometheus text parser, whose timestamps
    # are integer milliseconds; OpenMetrics' are seconds with a fraction (a log's stamps in ms), so the
    # lint reads the samples without them. The backfill test below reads the timestamps themselves.
    text = re.sub(r"^([^#].*\}? \S+) [0-9.]+$", r"\1", text, flags=re.MULTILINE)
    done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    problems = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert problems, "promtool printed nothing: was the text read at all?"
    unexpected = [p for p in problems if not any(rule.match(p) for rule in EXPECTED_LINT)]
    assert unexpected == []


def test_promtool_backfills_every_run(promtool: str, tmp_path: Path, emulated_logs: dict[str, Path],
                                      real_logs: dict[str, Path]) -> None:
    logs = [*map(str, emulated_logs.values()), *map(str, real_logs.values())]
    result = CliRunner().invoke(cli, ["export", "prometheus", *logs, "--tsdb", str(tmp_path / "tsdb"),
                                      "--promtool", promtool])
    assert result.exit_code == 0, result.output
    blocks = [p for p in (tmp_path / "tsdb").iterdir() if (p / "meta.json").is_file()]
    assert blocks
    text = Path(tmp_path / "runs.om")
    text.write_text(export_text(*map(Path, logs)))
    samples = sum(1 for line in text.read_text().splitlines() if not line.startswith("#"))
    # promtool's table: ULID, min time, max time, duration, number of samples, ... per block.
    rows = [line.split() for line in result.stderr.splitlines() if re.match(r"^[0-9A-Z]{26}\s", line)]
    assert len(rows) == len(blocks)
    assert sum(int(row[4]) for row in rows) == samples


def test_bad_inputs_and_outputs_get_one_clear_message(tmp_path: Path, emulated_logs: dict[str, Path]) -> None:
    log = str(emulated_logs["vllm-0.31.log"])
    cases = [
        (["openmetrics", str(tmp_path / "missing.log"), "-o", str(tmp_path / "x.om")], "no such file"),
        (["openmetrics", log, "-o", str(tmp_path / "a-file" / "x.om")], "not a directory"),
        (["openmetrics", log, "-o", str(tmp_path)], "is a folder"),
        (["prometheus", log, "--tsdb", str(tmp_path / "t"), "--promtool", str(tmp_path / "nope")],
         "promtool not found"),
    ]
    (tmp_path / "a-file").write_text("in the way")
    for args, message in cases:
        result = CliRunner().invoke(cli, ["export", *args])
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output
    # as every output: a missing folder is created
    made = CliRunner().invoke(cli, ["export", "openmetrics", log, "-o", str(tmp_path / "new" / "x.om")])
    assert made.exit_code == 0 and (tmp_path / "new" / "x.om").stat().st_size > 0


def test_a_log_without_stats_lines_says_there_is_nothing(tmp_path: Path) -> None:
    log = Path(__file__).resolve().parents[2].parent / "shared" / "real-logs" / "vllm" / "076.log"
    if not log.exists():
        pytest.skip(f"needs {log}")
    result = CliRunner().invoke(cli, ["export", "openmetrics", str(log), "-o", str(tmp_path / "x.om")])
    assert result.exit_code == 1
    assert "nothing to export" in result.output
    assert not (tmp_path / "x.om").exists()


def test_help_explains_every_option() -> None:
    for command in ("openmetrics", "prometheus"):
        result = CliRunner().invoke(cli, ["export", command, "--help"])
        assert result.exit_code == 0
        for option in ("--engine", "--year", "--model-name"):
            assert option in result.output
    assert "100y" in CliRunner().invoke(cli, ["export", "prometheus", "--help"]).output
