"""`logparse explain`: every column of the windows table has a topic, the numbers the texts quote are
the code's defaults, and summary/windows --help point to it."""

from __future__ import annotations

import datetime as dt
import inspect
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.analysis import phases, windows
from logparse.analysis.explain import TOPICS, explain, find_topic
from logparse.cli import cli
from logparse.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def text(name: str) -> str:
    return find_topic(name).text


def test_every_column_of_the_windows_table_has_a_topic() -> None:
    got = run("windows", str(ROOT / "fixtures" / "vllm" / "gpustack-64k.log"))
    assert got.exit_code == 0, got.output
    headers = got.stdout.splitlines()[0].split()
    assert "cv" in headers and "ctx/req" in headers
    for header in [*headers, "seg", "~", "?", "+90s", "trusted"]:
        assert find_topic(header).text, header


def test_a_spelling_leads_to_one_topic_only() -> None:
    seen: dict[str, str] = {}
    for topic in TOPICS:
        for spelling in (topic.name, *topic.aliases):
            assert spelling.lower() not in seen, (spelling, seen.get(spelling.lower()), topic.name)
            seen[spelling.lower()] = topic.name


def test_trust_thresholds_quoted_are_the_defaults() -> None:
    defaults = inspect.signature(windows.stable_windows).parameters
    min_samples, min_duration = defaults["min_samples"].default, defaults["min_duration_s"].default
    for name in ("window", "trusted"):
        assert f"--min-samples samples (default {min_samples})" in text(name)
        assert f"--min-duration seconds (default {min_duration:g})" in text(name)
    for option in ("min_samples", "min_duration"):
        assert next(p for p in _summary_params() if p.name == option).default in (min_samples, min_duration)


def _summary_params():  # type: ignore[no-untyped-def]
    from logparse.cli.analysis import summary_command

    return summary_command.params


def test_the_plateau_and_idle_gap_quoted_are_the_code() -> None:
    plateau = inspect.signature(phases.find_phases).parameters["min_plateau_samples"].default
    assert f"held by\nat least {plateau} samples" in text("phase")

    def gap(engine: str, step_s: float) -> float:
        t0 = dt.datetime(2026, 1, 1)
        times = [t0 + dt.timedelta(seconds=step_s * i) for i in range(5)]
        return phases.default_idle_gap(pl.DataFrame({"time": times}), engine=engine)

    assert "vLLM 2.5 stats intervals, SGLang 5" in text("phase") and "at least 20 s" in text("phase")
    assert gap("vllm", 20.0) == pytest.approx(2.5 * 20.0)
    assert gap("sglang", 20.0) == pytest.approx(5 * 20.0)
    assert gap("vllm", 1.0) == gap("sglang", 1.0) == 20.0


def test_cv_is_the_population_std_over_the_mean() -> None:
    t = [dt.datetime(2026, 1, 1) + dt.timedelta(seconds=10 * i) for i in range(6)]
    gen = [100.0, 400.0, 500.0, 510.0, 490.0, 500.0]
    samples = pl.DataFrame(
        {
            "sample": range(6),
            "line_no": range(1, 7),
            "time": t,
            "phase": [1] * 6,
            "running": [10] * 6,
            "waiting": [0] * 6,
            "prefill": [True, True] + [False] * 4,
            "gen_tps": gen,
            "context_per_request": [None] * 6,
            "interval_s": [None] + [10.0] * 5,
        },
        schema_overrides={"context_per_request": pl.Float64},
    )
    ph = pl.DataFrame({"phase": [1], "concurrency": [10]})
    w = windows.stable_windows(windows.mark_stable(samples, ph), ph).row(0, named=True)
    stable = pl.Series(gen[2:])
    assert "(population, ddof 0) divided by its mean" in text("cv")
    assert w["cv"] == pytest.approx(stable.std(ddof=0) / stable.mean())
    assert w["per_request_tps"] == pytest.approx(stable.mean() / 10) and w["ms_per_token"] == pytest.approx(
        1000 / (stable.mean() / 10)
    )


def test_cli_lists_explains_and_refuses() -> None:
    listing = run("explain")
    assert listing.exit_code == 0 and all(t.name in listing.stdout for t in TOPICS)
    one = run("explain", "ctx/req")
    assert one.exit_code == 0 and one.stdout.startswith("ctx/req: ")
    everything = run("explain", "all")
    assert all(f"{t.name}: {t.title}" in everything.stdout for t in TOPICS)
    bad = run("explain", "nonsense")
    assert bad.exit_code == 1 and "Error: no topic 'nonsense'" in bad.output and "Traceback" not in bad.output
    with pytest.raises(InputError):
        explain("nonsense")


@pytest.mark.parametrize("command", ["summary", "windows"])
def test_help_points_to_explain(command: str) -> None:
    got = run(command, "--help")
    assert got.exit_code == 0
    assert "logparse explain [TOPIC]" in " ".join(got.stdout.split())
