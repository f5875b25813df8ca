"""`logparse follow` against real parts: a real Prometheus (Debian's package) scraping
`--serve-metrics` gets the series `export openmetrics` gives of the same lines; the terminal
status on a real pty (read back through a terminal emulator, pyte); the silence rule's clock."""
from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from scenario import Writer, scenario_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
from export_inputs import prometheus_server_binary  # noqa: E402,F401 (a pytest fixture)

from logparse.cli import cli  # noqa: E402
from logparse.follow.alerts import Watch  # noqa: E402
from logparse.follow.tables import LiveTables  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LOGPARSE = [sys.executable, "-m", "logparse"]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode()  # type: ignore[no-any-return]


def exported(log: Path) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The last sample of every series `export openmetrics` writes for `log`."""
    result = CliRunner().invoke(cli, ["export", "openmetrics", str(log), "-o", "-"])
    assert result.exit_code == 0, result.output
    last: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for line in result.stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name_labels, value, _stamp = line.rsplit(" ", 2)
        name, _, labels = name_labels.partition("{")
        pairs = tuple(sorted(tuple(p.split("=", 1)) for p in labels.rstrip("}").split(",") if p))  # type: ignore[misc]
        last[(name, tuple((k, v.strip('"')) for k, v in pairs))] = float(value)
    return last


@pytest.mark.slow
def test_prometheus_scrapes_the_series_export_gives(tmp_path: Path, prometheus_server_binary: str) -> None:
    lines = scenario_lines()
    log = tmp_path / "server.log"
    log.write_text("")
    port, prom_port = free_port(), free_port()
    proc = subprocess.Popen([*LOGPARSE, "follow", str(log), "--format", "jsonl", "--serve-metrics", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: follow\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
    with (tmp_path / "prometheus.out").open("w") as prom_out:
        prometheus = subprocess.Popen(
            [prometheus_server_binary, f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=prom_out, stderr=subprocess.STDOUT)
    api = f"http://127.0.0.1:{prom_port}/api/v1"
    try:
        writer = Writer(log, lines, rate=300.0)
        writer.start()
        writer.join(timeout=60)
        (tmp_path / "finished").mkdir()
        finished = tmp_path / "finished" / log.name  # the same `run` label
        finished.write_text("\n".join(lines) + "\n")
        want = exported(finished)
        assert len(want) >= 6
        page = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # follow has read every line: /metrics ends on the last values
            assert proc.poll() is None, proc.communicate()[1]
            try:
                page = get(f"http://127.0.0.1:{port}/metrics")
            except urllib.error.URLError:  # still starting (imports) on a busy machine
                time.sleep(0.2)
                continue
            if all(f"{v!r}" in page for v in want.values()):
                break
            time.sleep(0.2)
        assert page.endswith("# EOF\n")
        start = time.time()
        got: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        while time.time() - start < 60:  # two scrapes after the last lines
            found = json.loads(get(f"{api}/query?" + urllib.parse.urlencode(
                {"query": '{job="follow", __name__=~"vllm:.*"}', "time": time.time()})))
            got = {(r["metric"]["__name__"], tuple(sorted((k, v) for k, v in r["metric"].items()
                                                       if k not in ("__name__", "job", "instance")))):
                   float(r["value"][1]) for r in found["data"]["result"]}
            if got == want:
                break
            time.sleep(0.5)
        assert got == want
        meta = json.loads(get(f"{api}/metadata"))["data"]
        export_text = CliRunner().invoke(cli, ["export", "openmetrics", str(finished), "-o", "-"]).stdout
        for name in {n for n, _ in want}:
            family = name.removesuffix("_total")
            assert family in meta, family
            assert f"# TYPE {family} {meta[family][0]['type']}" in export_text
            assert meta[family][0]["help"] in export_text.replace("\\\\", "\\")
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        prometheus.terminate()
        prometheus.wait(timeout=30)
    assert proc.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["type"] == "summary"


@pytest.mark.slow
def test_the_terminal_status_on_a_pty(tmp_path: Path) -> None:
    import pyte

    log = tmp_path / "server.log"
    lines = scenario_lines()
    log.write_text("\n".join(lines[:64]) + "\n")
    master, slave = os.openpty()
    env = {**os.environ, "COLUMNS": "140", "LINES": "45", "TERM": "xterm-256color"}
    proc = subprocess.Popen([*LOGPARSE, "follow", str(log)], stdin=slave, stdout=slave, stderr=slave,
                            cwd=ROOT, env=env, close_fds=True)
    os.close(slave)
    screen = pyte.Screen(140, 45)
    stream = pyte.ByteStream(screen)

    def drain(until: float) -> None:
        import select

        while time.monotonic() < until:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    return
                if not data:
                    return
                stream.feed(data)

    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "stable:" not in "\n".join(screen.display):
            drain(time.monotonic() + 0.3)
        text = "\n".join(screen.display)
        assert "logparse follow" in text and "vllm 0.11.2" in text
        assert "running 0" in text and "phase" in text and "KV cache" in text
        assert "stable: 240 tok/s over 50 s, cv 2 %" in text
        assert "info new_warning" not in text and "warning oom" in text
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the post-mortem, exit 0
        drain(time.monotonic() + 5)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_a_vllm_log_silent_while_requests_run_is_a_stall_once() -> None:
    watch = Watch("vllm")
    tables = LiveTables()
    t0 = dt.datetime(2026, 7, 28, 17, 0, 0)
    for i in range(6):  # stats lines every 10 s, read as they come
        rows = {"engine_stats": pl.DataFrame({"line_no": [i + 1], "time": [t0 + dt.timedelta(seconds=10 * i)],
                                              "running": [8]})}
        tables.add("engine_stats", rows["engine_stats"])
        assert watch.block(rows, tables, now=10.0 * i) == []
    assert watch.idle(now=50.0 + 29.0) == []  # 29 s of silence: under 3 intervals
    alerts = watch.idle(now=50.0 + 31.0)
    assert [a.alert for a in alerts] == ["stall"] and alerts[0].values["running"] == 8
    assert watch.idle(now=50.0 + 60.0) == []  # said once
    late = {"engine_stats": pl.DataFrame({"line_no": [7], "time": [t0 + dt.timedelta(seconds=90)], "running": [8]})}
    assert watch.block(late, tables, now=90.0) == []  # the gap, already said


def test_an_idle_vllm_log_is_no_stall() -> None:
    watch = Watch("vllm")
    t0 = dt.datetime(2026, 7, 28, 17, 0, 0)
    for i, running in enumerate([8, 8, 8, 8, 0]):
        rows = {"engine_stats": pl.DataFrame({"line_no": [i + 1], "time": [t0 + dt.timedelta(seconds=10 * i)],
                                              "running": [running]})}
        watch.block(rows, LiveTables(), now=10.0 * i)
    assert watch.idle(now=1000.0) == []


def test_an_sglang_phase_end_is_no_stall_but_a_decode_gap_is() -> None:
    watch = Watch("sglang")
    t0 = dt.datetime(2026, 7, 28, 17, 0, 0)

    def line(n: int, s: int, kind: str = "decode_batch", running: int = 4) -> list[Any]:
        rows = {kind: pl.DataFrame({"line_no": [n], "time": [t0 + dt.timedelta(seconds=s)], "running_req": [running]})}
        return watch.block(rows, LiveTables(), now=float(s))

    for n in range(1, 6):
        assert line(n, n) == []
    assert line(6, 60, "prefill_batch") == []  # idle, then new requests: SGLang prints nothing while idle
    assert watch.idle(now=1000.0) == []  # SGLang idles silently: no clock rule
    assert line(7, 61) == [] and line(8, 62) == [] and line(9, 63) == []
    assert [a.alert for a in line(10, 80)] == ["stall"]
