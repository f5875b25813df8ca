"""One time-zone contract (issue 22): a stamp without a zone is UTC unless --tz, whatever the
machine's TZ, and every text says so; a wrapper's clock that disagrees with the engine's is warned
about; dates taken from the file's modification time are marked `?` in tables."""
from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, REAL_LOGS, ROOT
from logparse.cli import cli

V64 = FIXTURES / "vllm" / "gpustack-64k.log"
DOCKER = FIXTURES / "vllm" / "emulated-0.10-multirank-docker.log"
ZONES = ("UTC", "Asia/Tokyo")


def run(*args: str, tz: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner(env={"TZ": tz} if tz else None).invoke(cli, list(args))


def _times(*args: str, tz: str | None = None) -> list[str]:
    out = run("ingest", str(V64), "--format", "jsonl", *args, tz=tz)
    assert out.exit_code == 0, out.output
    events = [json.loads(line) for line in out.stdout.splitlines()]
    return [e["time"] for e in events if e.get("time")]


def test_stamps_without_a_zone_are_utc_under_any_machine_zone() -> None:
    first, second = (_times(tz=zone) for zone in ZONES)
    assert first == second and first
    assert first[0].startswith("2026-07-28T17:06:27")  # the log's own clock, read as UTC


def test_tz_names_the_zone_and_shifts_every_time() -> None:
    utc = [dt.datetime.fromisoformat(t) for t in _times()]
    tokyo = [dt.datetime.fromisoformat(t) for t in _times("--tz", "Asia/Tokyo", tz="UTC")]
    assert {a - b for a, b in zip(utc, tokyo, strict=True)} == {dt.timedelta(hours=9)}


@pytest.mark.slow
def test_export_openmetrics_is_the_same_under_two_machine_zones(tmp_path: Path) -> None:
    files = []
    for zone in ZONES:
        target = tmp_path / f"{zone.replace('/', '_')}.om"
        assert run("export", "openmetrics", str(V64), "-o", str(target), tz=zone).exit_code == 0
        files.append(target.read_text())
    assert files[0] == files[1]
    shifted = tmp_path / "tokyo.om"
    assert run("export", "openmetrics", str(V64), "-o", str(shifted), "--tz", "Asia/Tokyo").exit_code == 0
    stamps = [int(m) for m in re.findall(r" (\d{10}\.\d+|\d{10})\n", files[0])][:5]
    later = [int(m) for m in re.findall(r" (\d{10}\.\d+|\d{10})\n", shifted.read_text())][:5]
    assert stamps and [a - b for a, b in zip(stamps, later, strict=True)] == [9 * 3600] * len(stamps)


def test_every_text_states_the_one_contract() -> None:
    schema = run("schema").stdout
    assert "read as UTC unless `--tz` names its zone" in " ".join(schema.split())
    readme = (ROOT / "README.md").read_text()
    assert "read as UTC unless `--tz` names its zone" in readme
    assert "is read\nas UTC unless `--tz ZONE`" in readme or "read as UTC unless `--tz ZONE`" in " ".join(readme.split())
    for command in (["ingest"], ["summary"], ["compare"], ["gate"], ["export", "openmetrics"], ["export", "prometheus"]):
        shown = " ".join(run(*command, "--help").stdout.split())
        assert "[default: UTC, whatever this machine's zone;" in shown, command
        assert "this machine's zone]" not in shown and "default: this machine's zone" not in shown
    explained = " ".join(run("explain", "time").stdout.split())
    assert "read as UTC unless --tz ZONE names its zone" in explained
    assert "whatever its TZ" in explained
    assert "machine's zone" not in " ".join(schema.split())


def _docker_log_in(tmp_path: Path, hours: int) -> Path:
    """The docker-wrapped fixture with docker's stamps moved by `hours`: its engine then logs in a
    zone `hours` behind the wrapper's UTC clock (the vLLM image's America/Los_Angeles, before
    vllm-project/vllm#12888)."""

    def shift(m: re.Match[str]) -> str:
        return (dt.datetime.fromisoformat(m.group(1)) + dt.timedelta(hours=hours)).isoformat() + m.group(2)

    path = tmp_path / "docker.log"
    text = DOCKER.read_text()
    path.write_text(re.sub(r"(?m)^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+Z)", shift, text))
    return path


def test_a_wrapper_clock_hours_off_the_engine_is_warned_about(tmp_path: Path) -> None:
    path = _docker_log_in(tmp_path, 7)
    headline = json.loads(run("ingest", str(path), "--json").stdout)
    assert headline["clock"]["offset_s"] == pytest.approx(-7 * 3600, abs=1.0)
    assert "warning: the engine's own stamps run -25,200 s (-7.0 h)" in run("ingest", str(path)).stdout
    codes = {d["code"]: d for d in json.loads(run("summary", str(path), "--json").stdout)["diagnostics"]}
    assert codes["clock_disagreement"]["severity"] == "warning"
    named = json.loads(run("ingest", str(path), "--json", "--tz", "America/Los_Angeles").stdout)
    assert named["clock"] is None  # read in the engine's own zone, the two clocks agree


def test_agreeing_clocks_and_logs_without_a_wrapper_are_quiet(tmp_path: Path) -> None:
    assert json.loads(run("ingest", str(DOCKER), "--json").stdout)["clock"] is None
    assert json.loads(run("ingest", str(V64), "--json").stdout)["clock"] is None


def test_dates_from_the_files_mtime_are_marked_in_tables(tmp_path: Path) -> None:
    vllm, sglang = REAL_LOGS / "vllm" / "001.log", REAL_LOGS / "sglang" / "026.log"
    if not (vllm.exists() and sglang.exists()):
        pytest.skip("the shared real excerpts are not here")
    span = next(line for line in run("ingest", str(vllm)).stdout.splitlines() if line.startswith("time span"))
    assert re.search(r"\?\d{4}-\d\d-\d\d .* \.\. \?\d{4}-", span), span  # the year is the mtime's
    windows = run("windows", str(sglang)).stdout  # old SGLang prints hh:mm:ss only: the date is the mtime's
    row = windows.splitlines()[2]
    assert re.match(r"1\s+\?\d\d-\d\d \d\d:\d\d:\d\d \+", row), row
    assert "start ?: the log prints no date; it is taken from the file's modification time" in windows
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy2(sglang, logs / "old-sglang.log")
    dataset = tmp_path / "ds"
    assert run("ingest", str(logs / "old-sglang.log"), str(V64), "--out", str(dataset)).exit_code == 0
    fleet = {r["run"]: r for r in json.loads(run("summary", str(dataset), "--json").stdout)["fleet"]}
    assert fleet["old-sglang"]["start_date_guessed"] is True
    assert fleet["gpustack-64k"]["start_date_guessed"] is False
    printed = run("windows", str(V64)).stdout  # the fixture prints full dates: nothing is marked
    assert "?07-" not in printed and "start ?" not in printed
