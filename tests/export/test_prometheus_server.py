"""A real Prometheus over the backfilled TSDB answers with the values the logs printed.

Gauges must come back equal to the printed values; rebuilt counters' `rate()` over each stats
interval within 1 % of the printed throughput (their per-interval counts likewise).
"""
from __future__ import annotations

import json
import math
import re
import socket
import statistics
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from export_inputs import emulated_logs, prometheus_server_binary, promtool, real_logs  # noqa: F401 (pytest fixtures)

import logparse
from logparse.cli import cli
from logparse.export.catalog import CATALOG, Metric
from logparse.cli.export import run_labels

pytestmark = pytest.mark.slow
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
READY_WITHIN_S = 60


@dataclass
class Server:
    url: str
    logs: dict[str, Path]  # run label -> log

    def query_range(self, expr: str, start: float, end: float, step: float = 1.0) -> list[dict[str, Any]]:
        return self._get("query_range", {"query": expr, "start": start, "end": end, "step": step})

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        """An instant query; a range selector (`x[5m]`) answers with the raw samples and their stamps."""
        return self._get("query", {"query": expr, "time": at})

    def _get(self, endpoint: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{endpoint}?{query}", timeout=30) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return body["data"]["result"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, promtool: str, prometheus_server_binary: str,
           emulated_logs: dict[str, Path], real_logs: dict[str, Path]) -> Iterator[Server]:
    prometheus = prometheus_server_binary
    folder = tmp_path_factory.mktemp("prometheus")
    logs = [*emulated_logs.values(), *real_logs.values()]
    result = CliRunner().invoke(cli, ["export", "prometheus", *map(str, logs), "--tsdb", str(folder / "tsdb"),
                                      "--promtool", promtool])
    assert result.exit_code == 0, result.output
    (folder / "prometheus.yml").write_text("scrape_configs: []\n")
    port = free_port()
    with (folder / "prometheus.out").open("w") as out:
        process = subprocess.Popen(
            [prometheus, f"--config.file={folder / 'prometheus.yml'}", f"--storage.tsdb.path={folder / 'tsdb'}",
             "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, process, folder / "prometheus.out")
        yield Server(url, dict(zip(run_labels([str(p) for p in logs]), logs)))
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def wait_ready(url: str, process: subprocess.Popen[bytes], output: Path) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"prometheus exited: {output.read_text()[-2000:]}"
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    pytest.fail(f"prometheus not ready within {READY_WITHIN_S} s: {output.read_text()[-2000:]}")


# -- what each log printed, read straight from its event tables --------------------------------------
def unix_ms(t: datetime) -> int:
    """A naive time is UTC (what `export` assumes); samples are stamped in whole milliseconds."""
    return ((t if t.tzinfo else t.replace(tzinfo=UTC)) - EPOCH) // timedelta(milliseconds=1)


def printed_rows(tables: dict[str, pl.DataFrame], metric: Metric, labels: dict[str, str]) -> pl.DataFrame:
    """The lines behind one series: its kind and era, its engine or rank, with a time and the field."""
    frame = tables.get(metric.table)
    if frame is None or metric.column not in frame.columns:
        return pl.DataFrame()
    if metric.absent_is_zero:  # `Preemptions: N` is printed only when N > 0
        frame = frame.with_columns(pl.col(metric.column).fill_null(0))
    frame = frame.filter(pl.col("time").is_not_null() & pl.col(metric.column).is_not_null())
    v0 = "swapped" if metric.table == "engine_stats" else "system_efficiency"
    if metric.era.startswith("vllm") and metric.table != "prefix_cache" and v0 in frame.columns:
        frame = frame.filter(pl.col(v0).is_not_null() == (metric.era == "vllm-v0"))
    if "engine" in labels and metric.table == "engine_stats":
        frame = frame.filter(pl.col("engine_idx") == int(labels["engine"]))
    for label, part in (("dp_rank", "DP"), ("tp_rank", "TP"), ("pp_rank", "PP"), ("moe_ep_rank", "EP")):
        if label in labels:
            frame = frame.filter(pl.col("rank").str.contains(rf"\b{part}{labels[label]}\b"))
    return frame.sort("line_no")


def printed_values(tables: dict[str, pl.DataFrame], metric: Metric, labels: dict[str, str]) -> list[tuple[int, float]]:
    """(Unix ms, value) of each line behind one series, as the log printed it."""
    rows = printed_rows(tables, metric, labels)
    if rows.is_empty():
        return []
    value = {"percent": pl.col(metric.column) / 100,
             "hit_ratio": pl.col("cached_token") / (pl.col("new_token") + pl.col("cached_token"))}.get(
        metric.how, pl.col(metric.column))
    if metric.how == "hit_ratio":
        rows = rows.filter(pl.col("new_token") + pl.col("cached_token") > 0)
    return [(unix_ms(t), float(v)) for t, v in rows.select("time", value).iter_rows()]


def entries(name: str) -> list[Metric]:
    """The catalog rows of a served series name (a counter's is its family name + `_total`)."""
    return [m for m in CATALOG if name in (m.name, f"{m.name}_total" if m.type == "counter" else None)]


def run_series(server: Server) -> Iterator[tuple[str, dict[str, pl.DataFrame], dict[str, Any]]]:
    """(run, its tables, one Prometheus series of it: its raw samples over the run's whole span)."""
    for run, log in server.logs.items():
        tables = logparse.ingest(log).tables
        times = [unix_ms(t) for k in ("engine_stats", "spec_decode", "prefix_cache", "decode_batch", "prefill_batch")
                 if k in tables for t in tables[k]["time"].drop_nulls()]
        if not times:
            continue
        span_ms = max(times) - min(times) + 1
        for series in server.query(f'{{run="{run}"}}[{span_ms}ms]', max(times) / 1000):
            yield run, tables, series


def test_every_exported_series_is_served(server: Server) -> None:
    text = CliRunner().invoke(cli, ["export", "openmetrics", *map(str, server.logs.values()), "-o", "-"]).stdout
    exported = {line.split(" ")[0] for line in text.splitlines() if not line.startswith("#")}
    served = set()
    for run, _, series in run_series(server):
        labels = {k: v for k, v in series["metric"].items() if k != "__name__"}
        served.add(series["metric"]["__name__"] + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}")
    assert served == {re.sub(r"\{(.*)\}", lambda m: "{" + ",".join(sorted(m.group(1).split(","))) + "}", s)
                      for s in exported}


def test_gauges_are_the_printed_values(server: Server) -> None:
    checked = 0
    for run, tables, series in run_series(server):
        name = series["metric"]["__name__"]
        if entries(name)[0].type != "gauge" or entries(name)[0].how == "carried":
            continue
        served = {round(float(t) * 1000): float(v) for t, v in series["values"]}
        for t, value in last_line_per_stamp(tables, name, series["metric"]).items():
            assert served[t] == value or (math.isnan(value) and math.isnan(served[t])), (run, name, t)
            checked += 1
    assert checked > 500


def test_kv_pool_size_is_the_printed_one(server: Server) -> None:
    checked = 0
    for run, tables, series in run_series(server):
        if series["metric"]["__name__"] == "sglang:max_total_num_tokens":
            pool = set(tables["kv_pool"]["tokens"].drop_nulls().to_list())
            assert {float(v) for _, v in series["values"]} <= {float(p) for p in pool}, run
            checked += 1
    assert checked >= 3


def last_line_per_stamp(tables: dict[str, pl.DataFrame], name: str, labels: dict[str, str]) -> dict[int, float]:
    """A gauge printed by several lines with one timestamp shows the last of them."""
    lines: list[tuple[int, int, float]] = []
    for entry in entries(name):
        rows = printed_rows(tables, entry, labels)
        if rows.is_empty():
            continue
        values = printed_values(tables, entry, labels)
        numbers = rows["line_no"].to_list() if entry.how != "hit_ratio" else rows.filter(
            pl.col("new_token") + pl.col("cached_token") > 0)["line_no"].to_list()
        lines.extend((line, t, v) for line, (t, v) in zip(numbers, values))
    return {t: v for _, t, v in sorted(lines)}


def test_rebuilt_counters_rate_is_the_printed_throughput(server: Server) -> None:
    checked = 0
    for run, tables, series in run_series(server):
        name = series["metric"]["__name__"]
        metric = next((m for m in entries(name) if m.type == "counter"), None)
        if metric is None:
            continue
        for t, window, expected in interval_expectations(tables, metric, series["metric"]):
            matcher = ",".join(f'{k}="{v}"' for k, v in series["metric"].items())
            answers = server.query_range(f"rate({{{matcher}}}[{window + 1}ms])", t / 1000, t / 1000)
            assert len(answers) == 1, (run, name, t, window, answers)
            [answer] = answers
            got = float(answer["values"][0][1])
            assert got == pytest.approx(expected, rel=0.01, abs=1e-9), (run, name, t, window)
            checked += 1
    assert checked > 200


def interval_expectations(tables: dict[str, pl.DataFrame], metric: Metric,
                          labels: dict[str, str]) -> list[tuple[int, int, float]]:
    """(Unix ms, milliseconds the line covers, per-second value the log printed for them) per interval.

    A rate is the mean of the lines printed with that stamp; a count, over the seconds it covers.
    vLLM's first line after a silence longer than 1.5 usual intervals covers one usual interval.
    """
    by_stamp: dict[int, list[float]] = {}
    for t, v in printed_values(tables, metric, labels):
        by_stamp.setdefault(t, []).append(v)
    times = sorted(by_stamp)
    gaps = [b - a for a, b in pairwise(times)]
    held = metric.how == "rate_integral" and metric.era != "sglang"
    usual = statistics.median(gaps) if len(gaps) >= 3 and held else None
    out = []
    for before, t in pairwise(times):
        window = int(usual) if usual is not None and t - before > 1.5 * usual else t - before
        values = by_stamp[t]
        if metric.how == "rate_integral":
            per_second = sum(values) / len(values)
        elif metric.how == "interval_sum":
            per_second = sum(values) / (window / 1000)
        else:  # a running total printed by the line
            per_second = (values[-1] - by_stamp[before][-1]) / (window / 1000)
        out.append((t, window, per_second))
    return out
