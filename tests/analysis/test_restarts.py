"""A log of several engine starts (docker logs of a restarted container) is split into segments,
one start-up and its phases each (issue 14, "A restart merged into one start-up"): no figure is
added up across starts, no phase is cut across them, even when their clocks overlap."""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.analysis.analyze import analyze_log
from logparse.analysis.segments import find_segments
from logparse.cli import cli
from logparse.emulate.fixtures import fixture_params
from logparse.ingest import ingest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
YEAR = "2026"


@pytest.fixture(scope="module")
def restarted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two emulated starts of each engine in one file (the 64K run, then the 200K run: same
    start time, so the second start's clock overlaps the first's)."""
    out = {}
    for engine in ("vllm", "sglang"):
        path = tmp_path_factory.mktemp(engine) / "restarted.log"
        path.write_bytes((FIXTURES / engine / "gpustack-64k.log").read_bytes()
                         + (FIXTURES / engine / "gpustack-200k.log").read_bytes())
        out[engine] = path
    return out


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")   # lines as logparse numbers them (tqdm's \r is no line break)


# The first typed line of a start that says so: its version line (vLLM), its torch-distributed init (SGLang).
FIRST_START_LINE = {"vllm": "version 0.26.0", "sglang": "Init torch distributed ends."}


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_two_starts_are_two_segments(restarted: dict[str, Path], engine: str) -> None:
    first = _lines(FIXTURES / engine / "gpustack-64k.log")
    second = (FIXTURES / engine / "gpustack-200k.log").read_bytes().decode().split("\n")
    preamble = next(i for i, line in enumerate(second) if FIRST_START_LINE[engine] in line)
    segments = find_segments(ingest(restarted[engine], engine=engine, year=int(YEAR)).tables)
    boundary = first + preamble + 1   # the preamble before that line (a logo, a warning) stays behind
    assert segments.get_column("first_line").to_list() == [1, boundary]
    assert segments.get_column("last_line").to_list() == [boundary - 1, _lines(restarted[engine])]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_each_start_is_analysed_as_if_alone(restarted: dict[str, Path], engine: str) -> None:
    both = analyze_log(restarted[engine], engine=engine, year=int(YEAR))
    alone = [analyze_log(FIXTURES / engine / f"gpustack-{c}.log", engine=engine, year=int(YEAR)) for c in ("64k", "200k")]
    assert both.phases.get_column("segment").to_list() == [1, 2]
    assert both.phases.get_column("input_tokens").to_list() == [a.phases.row(0, named=True)["input_tokens"] for a in alone]
    keep = ["samples", "duration_s", "gen_tps_mean", "gen_tps_min", "gen_tps_max"]
    assert both.windows.select(keep).rows() == [a.windows.select(keep).row(0) for a in alone]
    # the figures of a start are its own: one capture of each start, never their sum
    assert [s["cuda_graph_s"] for s in both.startups] == [a.startup["cuda_graph_s"] for a in alone]
    assert both.startup["cuda_graph_s"] == alone[0].startup["cuda_graph_s"]
    assert "restarts" in both.diagnostics.get_column("code").to_list()


def test_summary_shows_the_starts_and_segment_k_picks_one(restarted: dict[str, Path]) -> None:
    log = str(restarted["vllm"])
    text = CliRunner().invoke(cli, ["summary", log, "--year", YEAR])
    assert text.exit_code == 0, text.output
    assert "engine starts: 2" in text.output and "startup of start 2" in text.output
    assert "170.0 s" not in text.output   # 2 x 85 s never shown as one capture
    data = json.loads(CliRunner().invoke(cli, ["summary", log, "--year", YEAR, "--json"]).output)
    assert [g["segment"] for g in data["segments"]] == [1, 2]
    assert [g["startup"]["cuda_graph_s"] for g in data["segments"]] == [85.0, 85.0]
    second = json.loads(CliRunner().invoke(cli, ["summary", log, "--year", YEAR, "--json", "--segment", "2"]).output)
    alone = json.loads(CliRunner().invoke(cli, ["summary", str(FIXTURES / "vllm" / "gpustack-200k.log"),
                                                "--year", YEAR, "--json"]).output)
    assert [p["stable"]["gen_tps_mean"] for p in second["phases"]] == [p["stable"]["gen_tps_mean"] for p in alone["phases"]]
    assert second["startup"]["segment"] == 2
    windows = CliRunner().invoke(cli, ["windows", log, "--year", YEAR])
    assert windows.exit_code == 0 and windows.output.splitlines()[0].split()[0] == "seg"
    missing = CliRunner().invoke(cli, ["summary", log, "--segment", "3"])
    assert missing.exit_code == 1 and "no engine start 3" in missing.output and "Traceback" not in missing.output


def test_the_fleet_notes_a_restarted_run(restarted: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "restarted.log").write_bytes(restarted["vllm"].read_bytes())
    dataset = tmp_path / "ds"
    assert CliRunner().invoke(cli, ["ingest", str(folder), "--out", str(dataset), "--year", YEAR]).exit_code == 0
    result = CliRunner().invoke(cli, ["summary", str(dataset), "--brief"])
    assert result.exit_code == 0, result.output
    assert "2 engine starts" in result.output
    data = json.loads(CliRunner().invoke(cli, ["summary", str(dataset), "--json"]).output)
    assert data["fleet"][0]["segments"] == 2


@pytest.mark.parametrize("name,params", list(fixture_params()), ids=[n for n, _ in fixture_params()])
def test_one_start_is_one_segment(name: str, params: object) -> None:
    """A draft model loaded after the target, a warm-up request before ready: no restart."""
    engine = name.split("/")[0]
    segments = find_segments(ingest(FIXTURES / f"{name}.log", engine=engine, year=int(YEAR)).tables)
    assert segments.height == 1


def test_real_excerpts_are_one_start_each() -> None:
    real = FIXTURES.parents[1] / "shared" / "real-logs"
    for engine in ("vllm", "sglang"):
        for path in sorted((real / engine).glob("*.log")):
            assert find_segments(ingest(path, engine=engine).tables).height == 1, path.name


def test_a_table_without_start_lines_is_one_segment() -> None:
    stats = pl.DataFrame({"line_no": [1, 2, 3]})
    assert find_segments({"engine_stats": stats}).rows() == [(1, 1, 3)]


def _at(*seconds: int | None) -> list[datetime | None]:
    return [None if s is None else datetime(2025, 9, 30, 18, 0) + timedelta(seconds=s) for s in seconds]


def test_arguments_printed_again_later_are_a_relaunch() -> None:
    """A start that failed before any later stage, relaunched into the same file (constructed
    rows, the shape of fixtures/fulllength/server/imageworks-nohup.out): its version line, printed
    with the new arguments, opens the new start; the failed start's engine config stays behind."""
    config = pl.DataFrame({
        "line_no": [6, 7, 23, 159, 160],
        "time": _at(0, 0, 9, 468, 468),
        "version": ["0.10.2", None, "0.10.2", "0.10.2", None],
        "args": [None, "{'port': 24001}", None, None, "{'port': 24001}"],
    })
    stats = pl.DataFrame({"line_no": [257, 260]})
    assert find_segments({"config": config, "engine_stats": stats}).rows() == [(1, 1, 158), (2, 159, 260)]


def test_arguments_after_a_failed_load_open_the_relaunch() -> None:
    """SGLang: `server_args=`, torch-distributed init, a crash, `server_args=` again (no version line)."""
    config = pl.DataFrame({"line_no": [3, 90], "time": _at(0, 30), "args": ["ServerArgs(tp_size=2)"] * 2})
    memory = pl.DataFrame({"line_no": [20, 100], "phase": ["torch_distributed_begin"] * 2})
    segments = find_segments({"config": config, "memory": memory})
    assert segments.get_column("first_line").to_list() == [1, 90]


def test_the_same_arguments_logged_twice_at_once_are_one_start() -> None:
    """Two handlers writing every line twice: the twin has its original's time, no new start."""
    config = pl.DataFrame({"line_no": [7, 8], "time": _at(0, 0), "args": ["{'port': 8000}"] * 2})
    assert find_segments({"config": config}).height == 1
