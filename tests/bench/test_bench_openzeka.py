"""`logparse bench --json` on the Openzeka CSV reproduces the report's capacity figures.

Expectations are computed here from the CSV values with the report's formulas (read with the
csv module, independently of logparse); the report's printed figures are asserted only as a
cross-check of those computations.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.cli import cli

CSV_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "bench" / "openzeka_b300_kimi_k3_128x128.csv"
CONFIGS = [("vllm", "direct"), ("vllm", "spec"), ("sglang", "direct"), ("sglang", "spec")]
TTFT_SLO_MS, TPS_SLO, THINK_S, OUTPUT_LEN = 1000.0, 15.0, 45.0, 128


def _table() -> dict[tuple[str, str], list[dict[str, float]]]:
    out: dict[tuple[str, str], list[dict[str, float]]] = {}
    with CSV_PATH.open(newline="") as handle:
        for row in csv.DictReader(handle):
            values = {k: float(v) for k, v in row.items() if k not in ("engine", "mode")}
            out.setdefault((row["engine"], row["mode"]), []).append(values)
    return out


TABLE = _table()


def _c_max(rows: list[dict[str, float]], ttft_key: str, tps_key: str) -> int:
    passing = [r["concurrency"] for r in rows if r[ttft_key] <= TTFT_SLO_MS and r[tps_key] >= TPS_SLO]
    return int(max(passing))


def _users(rows: list[dict[str, float]], c: int) -> int:
    latency = next(r["latency_mean_s"] for r in rows if r["concurrency"] == c)
    return math.floor(c * (1 + THINK_S / latency) + 0.5)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["bench", str(CSV_PATH), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _config(report: dict[str, Any], engine: str, mode: str) -> dict[str, Any]:
    (found,) = [c for c in report["configs"] if (c["engine"], c["mode"]) == (engine, mode)]
    return found


def test_bench_openzeka_c_max_and_users(report: dict[str, Any]) -> None:
    expected_p90, expected_mean = [], []
    for engine, mode in CONFIGS:
        rows = TABLE[(engine, mode)]
        got = _config(report, engine, mode)
        c90 = _c_max(rows, "ttft_p90_ms", "tps_p90")
        cmean = _c_max(rows, "ttft_mean_ms", "tps_mean")
        assert got["c_max_p90"] == c90
        assert got["c_max_mean"] == cmean
        assert got["users_p90"] == _users(rows, c90)
        assert got["users_mean"] == _users(rows, cmean)
        assert got["tps_optimistic_p90"] is True  # the file has P90 but no P10 of TPS
        expected_p90.append((c90, _users(rows, c90)))
        expected_mean.append(_users(rows, cmean))
    # cross-check of the computation against the report's printed figures
    assert expected_p90 == [(32, 427), (32, 266), (16, 261), (2, 59)]
    assert expected_mean == [682, 266, 717, 187]


def test_bench_openzeka_peak_aggregate(report: dict[str, Any]) -> None:
    figures = []
    for engine, mode in CONFIGS:
        rows = TABLE[(engine, mode)]
        best = max(rows, key=lambda r: r["tps_mean"] * r["concurrency"])
        peak = best["tps_mean"] * best["concurrency"]
        got = _config(report, engine, mode)
        assert got["peak_aggregate_tps"] == pytest.approx(peak)
        assert got["peak_aggregate_concurrency"] == best["concurrency"]
        figures.append((round(peak), int(best["concurrency"])))
    assert figures == [(1759, 64), (740, 32), (1863, 64), (931, 64)]
    # the report's "most efficient point" names c=16 for vLLM spec and c=32 for SGLang spec
    assert figures[1][1] != 16 and figures[3][1] != 32


def _break_even(direct: list[dict[str, float]], spec: list[dict[str, float]]) -> tuple[float, int, int]:
    levels = sorted(r["concurrency"] for r in direct)
    d = {r["concurrency"]: r["tps_mean"] for r in direct}
    s = {r["concurrency"]: r["tps_mean"] for r in spec}
    ratios = [s[c] / d[c] for c in levels]
    for c1, c2, r1, r2 in zip(levels, levels[1:], ratios, ratios[1:], strict=False):
        if r1 >= 1 > r2:
            x = math.log2(c1) + (r1 - 1) / (r1 - r2) * (math.log2(c2) - math.log2(c1))
            return 2**x, int(c1), int(c2)
    raise AssertionError("no break-even in the data")


def test_bench_openzeka_spec_break_even(report: dict[str, Any]) -> None:
    brackets = []
    for engine in ("vllm", "sglang"):
        expected, low, high = _break_even(TABLE[(engine, "direct")], TABLE[(engine, "spec")])
        (got,) = [s for s in report["spec"] if s["engine"] == engine]
        assert got["break_even_between"] == [low, high]
        assert got["break_even_concurrency"] == pytest.approx(expected)
        assert low < got["break_even_concurrency"] < high
        direct = {r["concurrency"]: r["tps_mean"] for r in TABLE[(engine, "direct")]}
        spec = {r["concurrency"]: r["tps_mean"] for r in TABLE[(engine, "spec")]}
        assert [(p["concurrency"], p["ratio"]) for p in got["speedup"]] == [
            (int(c), pytest.approx(spec[c] / direct[c])) for c in sorted(direct)
        ]
        brackets.append((low, high))
    assert brackets == [(8, 16), (2, 4)]


def test_bench_openzeka_sglang_spec_c64_is_consistent(report: dict[str, Any]) -> None:
    row = next(r for r in TABLE[("sglang", "spec")] if r["concurrency"] == 64)
    predicted = row["ttft_mean_ms"] / 1000 + (OUTPUT_LEN - 1) * row["itl_mean_ms"] / 1000
    assert abs(row["latency_mean_s"] / predicted - 1) < 0.05  # 9.13 s vs 4.75 s + 127 x 34.4 ms
    (index,) = [
        r["row"]
        for r in report["rows"]
        if (r["engine"], r["mode"], r["concurrency"]) == ("sglang", "spec", 64)
    ]
    (check,) = [c for c in report["checks"] if c["row"] == index and c["code"] == "latency_decomposition"]
    assert check["severity"] == "ok"
    assert check["message"].startswith("consistent")
    assert "9.13" in check["message"] and "9.12" in check["message"]


def test_bench_openzeka_no_errors_and_every_latency_row_checked(report: dict[str, Any]) -> None:
    assert not [c for c in report["checks"] if c["severity"] == "error"]
    decomposed = {c["row"] for c in report["checks"] if c["code"] == "latency_decomposition"}
    assert decomposed == set(range(28))
    # SGLang direct c=1: P90 TTFT 397.2 below its mean 399.5 is flagged, not hidden
    flagged = [c for c in report["checks"] if c["code"] == "percentile_order" and c["severity"] == "warning"]
    assert [(c["config"], c["concurrency"]) for c in flagged] == [("sglang direct", 1)]


def test_bench_openzeka_rps_is_one_over_mean_latency(report: dict[str, Any]) -> None:
    for engine, mode in CONFIGS:
        for row in TABLE[(engine, mode)]:
            inverse = 1 / row["latency_mean_s"]
            assert abs(row["rps"] - inverse) <= 0.005 + 0.02 * inverse  # 2-decimal rounding
    flagged = {c["config"]: c for c in report["checks"] if c["code"] == "rps_definition"}
    assert set(flagged) == {f"{engine} {mode}" for engine, mode in CONFIGS}
    assert {c["severity"] for c in flagged.values()} == {"info"}
    assert "c / L = 13.73 req/s" in flagged["vllm direct"]["message"]  # 64 / 4.66 s
