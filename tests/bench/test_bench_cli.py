"""`logparse bench` through the real CLI entry point."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
OPENZEKA = FIXTURES / "openzeka_b300_kimi_k3_128x128.csv"
ALL_VALID = sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.suffix != ".md")


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.output


def test_bench_help_lists_options() -> None:
    code, out, _ = _invoke("bench", "--help")
    assert code == 0
    for option in ("--slo-ttft-ms", "--slo-tps", "--think-s", "--json", "--out"):
        assert option in out


def test_bench_is_listed_by_the_main_cli() -> None:
    code, out, _ = _invoke("--help")
    assert code == 0 and "bench" in out


def test_bench_text_output_has_every_table() -> None:
    code, out, _ = _invoke("bench", str(OPENZEKA))
    assert code == 0
    for heading in ("SLO matrix at P90", "SLO matrix at mean", "Capacity:", "Aggregate output"):
        assert heading in out
    for heading in ("Spec speedup", "Checks:"):
        assert heading in out
    capacity = out.split("Capacity:")[1].splitlines()
    vllm_direct = next(line for line in capacity if line.startswith("vllm direct"))
    assert vllm_direct.split()[2:6] == ["32", "427", "64", "682"]


def test_bench_all_fixtures_together() -> None:
    code, out, _ = _invoke("bench", *map(str, ALL_VALID), "--json")
    assert code == 0
    report = json.loads(out)
    assert {"rows", "configs", "spec", "checks"} <= set(report)
    assert len(report["rows"]) == 53
    for config in report["configs"]:
        assert {"engine", "mode", "c_max_p90", "users_p90", "c_max_mean", "users_mean",
                "peak_aggregate_tps", "peak_aggregate_concurrency"} <= set(config)
    for check in report["checks"]:
        assert set(check) >= {"code", "severity", "row", "message"}
    engines = {s["engine"] for s in report["spec"]}
    assert engines == {"vllm", "sglang"}
    errors = {(c["code"], c["config"]) for c in report["checks"] if c["severity"] == "error"}
    assert ("throughput_bound", "vllm spec gpustack-200k") in errors


def test_bench_think_time_changes_users_by_the_formula() -> None:
    code, out, _ = _invoke("bench", str(OPENZEKA), "--json", "--think-s", "10")
    assert code == 0
    configs = {c["config"]: c for c in json.loads(out)["configs"]}
    assert configs["vllm direct"]["users_p90"] == round(32 * (1 + 10 / 3.65))


def test_bench_stricter_ttft_slo_lowers_c_max() -> None:
    code, out, _ = _invoke("bench", str(OPENZEKA), "--json", "--slo-ttft-ms", "500")
    assert code == 0
    configs = {c["config"]: c for c in json.loads(out)["configs"]}
    assert configs["vllm direct"]["c_max_p90"] == 4  # P90 TTFT 197.6 ms at c=4, 520.9 ms at c=8


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "malformed").iterdir()))
def test_bench_malformed_files_give_one_clean_line(name: str) -> None:
    path = FIXTURES / "malformed" / name
    result = CliRunner().invoke(cli, ["bench", str(path)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: ")


def test_bench_missing_file_and_bad_option() -> None:
    code, _, output = _invoke("bench", "does-not-exist.json")
    assert code == 1 and "does-not-exist.json: no such file" in output
    code, _, output = _invoke("bench", str(OPENZEKA), "--slo-tps", "0")
    assert code == 2 and "--slo-tps" in output


def test_bench_out_writes_parquet_and_csv(tmp_path: Path) -> None:
    out_dir = tmp_path / "tables"
    result = CliRunner().invoke(cli, ["bench", str(OPENZEKA), "--out", str(out_dir), "--json"])
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # stdout stays pure JSON; the note goes to stderr
    for name in ("rows", "slo", "configs", "aggregate", "speedup", "spec", "checks"):
        assert (out_dir / f"{name}.parquet").exists() and (out_dir / f"{name}.csv").exists()
    rows = pl.read_parquet(out_dir / "rows.parquet")
    assert rows.height == 28
    configs = pl.read_csv(out_dir / "configs.csv")
    assert configs["users_p90"].to_list() == [427, 266, 261, 59]
    spec = pl.read_parquet(out_dir / "spec.parquet")
    assert spec.select("break_even_lower", "break_even_upper").rows() == [(8, 16), (2, 4)]


def test_bench_out_onto_a_file_is_a_clean_error(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("x")
    code, _, output = _invoke("bench", str(OPENZEKA), "--out", str(target))
    assert code != 0 and "Traceback" not in output


def test_bench_all_fixtures_keep_the_openzeka_figures() -> None:
    code, out, _ = _invoke("bench", *map(str, ALL_VALID), "--json")
    assert code == 0
    report = json.loads(out)
    configs = {c["config"]: c for c in report["configs"]}
    assert configs["sglang spec"]["c_max_p90"] == 2
    assert configs["sglang spec"]["users_p90"] == round(2 * (1 + 45 / 1.58))
    assert not [c for c in report["checks"] if c["code"] == "duplicate_level"]
    pairs = {(s["engine"], s["spec_config"]) for s in report["spec"]}
    assert ("sglang", "sglang spec") in pairs and ("sglang", "sglang spec qwen3-32b") in pairs


def test_bench_out_has_the_short_form_o(tmp_path: Path) -> None:
    code, _, output = _invoke("bench", str(OPENZEKA), "-o", str(tmp_path / "tables"))
    assert code == 0, output
    assert list((tmp_path / "tables").glob("*.csv"))


def test_bench_reads_a_result_from_stdin() -> None:
    piped = (FIXTURES / "vllm_bench_serve_c16.json").read_text()
    result = CliRunner().invoke(cli, ["bench", "-", "--json"], input=piped)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [r["source_file"] for r in rows] == ["standard input"]
    assert rows[0]["output_throughput_tps"] == 510.47


def test_bench_stdin_once_only() -> None:
    result = CliRunner().invoke(cli, ["bench", "-", "-"], input="{}")
    assert result.exit_code == 1
    assert "once" in result.output and "Traceback" not in result.output


def test_bench_checks_table_fits_100_columns() -> None:
    code, out, _ = _invoke("bench", *map(str, ALL_VALID))
    assert code == 0
    checks = out[out.index("Checks:"):].splitlines()
    assert len(checks) > 5
    assert max(len(line) for line in checks) <= 100
    # a wrapped message continues under its own column, a number stays with its unit
    assert not any(line.split("  ")[-1].strip().startswith(("tok/s", "req/s", "ms ")) for line in checks)
    assert "105.4 tok/s" in " ".join(line.strip() for line in checks)
