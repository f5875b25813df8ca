"""Which statistic each SLO is judged at, what `bench` says about it, and the output defects of
issue 15: a P90 that was the mean, the file's measured throughput, the asterisk legend and the
interpolated break-even concurrency."""
from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.cli import cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
P99_ONLY = FIXTURES / "vllm_bench_serve_summary_p99_only.txt"
OPENZEKA = FIXTURES / "openzeka_b300_kimi_k3_128x128.csv"
ERAS = [
    "vllm_era1_benchmark_serving_c10.json",
    "vllm_era2_benchmark_serving.json",
    "vllm_era3_bench_serve_first.json",
    "vllm_era4_bench_serve_save_detailed.json",
]


def _bench(*args: str) -> str:
    result = CliRunner().invoke(cli, ["bench", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _report(*paths: Path) -> dict[str, Any]:
    return json.loads(_bench(*map(str, paths), "--json"))


def _judged(report: dict[str, Any], basis: str) -> list[dict[str, Any]]:
    return [j for j in report["slo_matrix"] if j["basis"] == basis]


def _section(text: str, heading: str) -> list[str]:
    start = text.index(heading)
    end = text.find("\n\n", start)
    return text[start : None if end < 0 else end].splitlines()


def test_bench_summary_without_p90_is_not_judged_at_the_mean() -> None:
    """Mean TTFT 800 ms, P99 2,500 ms: the old 'c=16 ok' at 'P90' was the mean."""
    report = _report(P99_ONLY)
    (judged,) = _judged(report, "p90")
    assert (judged["ttft_stat"], judged["ttft_ms"], judged["ttft_source"]) == ("p99", 2500.0, "printed")
    assert judged["ttft_ok"] is False and judged["stricter"] is True
    assert judged["ttft_note"] == "judged at TTFT P99: the file has no TTFT P90"
    assert judged["ok"] is False
    (config,) = report["configs"]
    assert config["c_max_p90"] is None and config["c_max_mean"] == 16
    (mean,) = _judged(report, "mean")
    assert (mean["ttft_stat"], mean["ttft_ok"]) == ("mean", True)


def test_bench_summary_without_p90_says_so_in_the_cell_and_the_checks() -> None:
    text = _bench(str(P99_ONLY))
    matrix = _section(text, "SLO matrix at P90")
    assert matrix[-1].split(None, 1)[1] == "TTFT fails^, no TPS P10 in the file"
    assert "(all consistent)" not in text
    (fallback,) = [c for c in _report(P99_ONLY)["checks"] if c["code"] == "percentile_fallback"]
    assert fallback["severity"] == "warning"
    assert "judged at TTFT P99: the file has no TTFT P90 (c=16)" in fallback["message"]


@pytest.mark.parametrize("name", ERAS)
def test_bench_detailed_file_of_each_era_judges_p90_from_ttfts(name: str) -> None:
    """Mean TTFT 602 ms passes a 1,000 ms SLO; the P90 of the ttfts (1,579 ms) does not."""
    obj = json.loads((FIXTURES / name).read_text())
    ttfts = [t * 1000 for t, error in zip(obj["ttfts"], obj["errors"], strict=True) if not error]
    true_p90 = statistics.quantiles(ttfts, n=10, method="inclusive")[8]
    report = _report(FIXTURES / name)
    (judged,) = _judged(report, "p90")
    assert (judged["ttft_stat"], judged["ttft_source"]) == ("p90", "per_request")
    assert judged["ttft_ms"] == pytest.approx(true_p90)
    assert round(judged["ttft_ms"]) == 1579 and round(obj["mean_ttft_ms"]) == 602
    assert judged["ttft_ok"] is False and judged["ok"] is False
    assert judged["tps_stat"] == "p10" and judged["tps_source"] in {"per_request", "derived"}
    (mean,) = _judged(report, "mean")
    assert mean["ttft_ok"] is True


def test_bench_detailed_cell_and_basis_table_show_computed_beside_printed() -> None:
    text = _bench(str(FIXTURES / "vllm_era4_bench_serve_save_detailed.json"))
    assert _section(text, "SLO matrix at P90")[-1].split()[-1] == "TTFT#"  # a computed P90 is marked
    legend = "  # statistic computed from the file's per-request arrays"
    assert any(line.startswith(legend) for line in text.splitlines())
    basis = " ".join(_section(text, "P90 basis:"))
    assert "P90 1,579.00#" in basis  # the computed P90 ...
    assert "mean 602.00" in basis and "P99 1,789.60" in basis  # ... beside the file's own figures


def test_bench_shows_the_measured_throughput_beside_the_derived_aggregate() -> None:
    aggregate = _section(_bench(str(P99_ONLY)), "Aggregate output")
    table = aggregate[next(i for i, line in enumerate(aggregate) if line.startswith("---")) + 1 :]
    derived = next(line for line in table if " derived " in line)
    measured = next(line for line in table if " measured " in line)
    assert derived.split()[-1] == "528.2"  # mean TPS x c: 16 x 128 / 3.877 s
    assert measured.split()[-1] == "524.4"  # the file's 'Output token throughput (tok/s): 524.37'
    report = _report(P99_ONLY)
    (row,) = report["aggregate"]
    assert row["output_throughput_tps"] == 524.37 and round(row["aggregate_tps"], 1) == 528.2


def test_bench_asterisk_legend_only_when_a_cell_has_an_asterisk() -> None:
    without = _bench(str(FIXTURES / "vllm_bench_serve_c16.json"))
    assert "*" not in "".join(_section(without, "SLO matrix at P90")[3:])
    assert "* TPS judged at its optimistic P90" not in without
    with_star = _bench(str(OPENZEKA))
    assert "* TPS judged at its optimistic P90" in with_star


def test_bench_break_even_is_said_to_be_interpolated() -> None:
    text = _bench(str(OPENZEKA))
    spec = _section(text, "Spec speedup")
    assert "break-even c (interpolated)" in spec[1]
    vllm = next(line for line in spec if line.startswith("vllm "))
    assert "~15.4" in vllm.split()
    assert any("interpolated, not measured" in line for line in spec)
    (pair, *_) = _report(OPENZEKA)["spec"]
    assert pair["break_even_interpolated"] is True and "interpolated" in pair["break_even_method"]
