"""`logparse follow` on a log a writer thread appends at accelerated speed: what it reports live
(phases, stable windows, alerts) is what `summary` says of the finished file; each alert of the
scenario fires once; the JSON lines are valid; stdin, `--out`, `--on-alert` and SIGTERM work."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scenario import Writer, scenario_lines

from logparse.cli import cli

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
LOGPARSE = [sys.executable, "-m", "logparse"]


def summary_of(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["summary", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def objects(text: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert all(isinstance(r, dict) and r.get("type") in ("status", "alert", "summary") for r in rows)
    return rows


def wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def follow(args: list[str], **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([*LOGPARSE, "follow", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, **kw)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The scenario appended to a file while `follow --format jsonl --out` reads it; the file is
    deleted once written (which ends following)."""
    folder = tmp_path_factory.mktemp("follow")
    lines = scenario_lines()
    finished = folder / "finished.log"
    finished.write_text("\n".join(lines) + "\n")
    expected = summary_of(finished)
    log = folder / "server.log"
    log.write_text("")
    alerts = folder / "alerts.jsonl"
    proc = follow([str(log), "--format", "jsonl", "--out", str(folder / "tables"),
                   "--on-alert", f"cat >> {alerts}"])
    # pause at each phase's end, so the live analysis (at most every second) sees every phase whole
    pauses = [p["last_line"] for p in expected["phases"]]
    writer = Writer(log, lines, rate=400.0, pauses=pauses, pause_s=1.6, partial_at=len(lines) // 3)
    writer.start()
    writer.join(timeout=120)
    time.sleep(1.6)
    log.unlink()
    out, err = proc.communicate(timeout=60)
    return {"expected": expected, "objects": objects(out), "err": err, "code": proc.returncode,
            "folder": folder, "lines": lines, "alerts": alerts}


def test_following_ends_cleanly_when_the_file_is_deleted(replayed: dict[str, Any]) -> None:
    assert replayed["code"] == 0, replayed["err"]
    assert "was deleted: following ends" in replayed["err"]
    assert f"{len(replayed['lines']):,} lines read" in replayed["err"]


def test_each_phase_s_last_status_has_the_summary_s_window(replayed: dict[str, Any]) -> None:
    statuses = [o for o in replayed["objects"] if o["type"] == "status"]
    assert statuses
    last_by_phase = {s["phase"]: s for s in statuses if s["phase"] is not None}
    phases = replayed["expected"]["phases"]
    assert sorted(last_by_phase) == [p["phase"] for p in phases]
    for phase in phases:
        live = last_by_phase[phase["phase"]]
        assert live["concurrency"] == phase["concurrency"]
        want = phase["stable"]
        got = live["stable"]
        assert (got is None) == (want is None)
        if want:
            assert got["gen_tps"] == pytest.approx(want["gen_tps_mean"], abs=0.01)
            assert (got["samples"], got["first_line"], got["last_line"], got["trusted"]) == (
                want["samples"], want["first_line"], want["last_line"], want["trusted"])


def test_the_final_summary_is_summary_s(replayed: dict[str, Any]) -> None:
    final = replayed["objects"][-1]
    assert final["type"] == "summary"
    for key in ("phases", "counts", "startup", "segments"):
        assert final[key] == replayed["expected"][key], key


def test_each_alert_of_the_scenario_fires_once(replayed: dict[str, Any]) -> None:
    alerts = [o for o in replayed["objects"] if o["type"] == "alert"]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for a in alerts:
        by_kind.setdefault(a["alert"], []).append(a)
    for kind in ("oom", "preemptions", "stall", "restart"):
        assert len(by_kind.get(kind, [])) == 1, (kind, [a["message"] for a in alerts])
    assert by_kind["preemptions"][0]["values"]["count"] == replayed["expected"]["counts"]["preemptions"]
    assert by_kind["oom"][0]["values"]["lines"] == replayed["expected"]["counts"]["oom"]
    stall = by_kind["stall"][0]
    assert stall["values"]["silence_s"] == pytest.approx(10.0 * (1 + 4)) and stall["values"]["running"] == 8
    restart = by_kind["restart"][0]
    assert restart["line_no"] == replayed["expected"]["segments"][1]["first_line"]
    assert not by_kind.get("throughput_drop") and not by_kind.get("startup_failure")
    for a in alerts:
        assert {"type", "alert", "severity", "kind", "time", "line_no", "message", "values"} <= set(a)


def test_on_alert_gets_each_alert_s_json(replayed: dict[str, Any]) -> None:
    sent = [json.loads(line) for line in replayed["alerts"].read_text().splitlines()]
    assert sent == [o for o in replayed["objects"] if o["type"] == "alert"]


def test_out_holds_the_tables_of_every_line(replayed: dict[str, Any]) -> None:
    result = CliRunner().invoke(cli, ["summary", str(replayed["folder"] / "tables"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["phases"] == replayed["expected"]["phases"]


def test_a_half_written_line_waits_for_its_newline(replayed: dict[str, Any]) -> None:
    # the writer wrote line len/3 in two halves; had a half been read as a line, the tables would
    # hold one line more than the file
    import polars as pl

    folder = replayed["folder"] / "tables"
    total = sum(pl.read_parquet(p).height for p in folder.glob("*.parquet"))
    assert total == len(replayed["lines"])


def test_stdin_is_followed_to_its_end(tmp_path: Path) -> None:
    lines = scenario_lines()
    proc = follow(["-", "--format", "jsonl"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    for i in range(0, len(lines), 20):
        proc.stdin.write("\n".join(lines[i:i + 20]) + "\n")
        proc.stdin.flush()
        time.sleep(0.05)
    out, err = proc.communicate(timeout=60)  # closes stdin: the end of the stream
    assert proc.returncode == 0, err
    assert "standard input ended" in err
    rows = objects(out)
    assert rows[-1]["type"] == "summary" and len(rows[-1]["phases"]) == 4


def test_sigterm_stops_and_writes_the_tables(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    lines = scenario_lines()
    log.write_text("\n".join(lines[:60]) + "\n")
    out_dir = tmp_path / "tables"
    proc = follow([str(log), "--out", str(out_dir)])
    assert proc.stdout is not None
    wait_for(lambda: proc.poll() is not None or _has_status(log, proc))
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped (SIGTERM); 60 lines read" in err
    assert "phases and stable decode windows" in out
    assert (out_dir / "engine_stats.parquet").exists()


def _has_status(log: Path, proc: subprocess.Popen[str]) -> bool:
    time.sleep(2.0)  # plain output is buffered by the pipe: give it time to read the 60 lines
    return True
