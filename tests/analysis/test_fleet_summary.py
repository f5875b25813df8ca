"""`logparse summary DATASET/`: every run of a multi-run Parquet dataset, a fleet table first.

The dataset is built with the real `logparse ingest DIR --out DATASET`, and every figure is
checked against what `logparse summary LOG` says of the same log.
"""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner, Result

from logparse.analysis import fleet
from logparse.cli import cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LOGS = {"vllm-64k": FIXTURES / "vllm" / "gpustack-64k.log", "sglang-200k": FIXTURES / "sglang" / "gpustack-200k.log",
        "vllm-2phase": FIXTURES / "vllm" / "emulated-0.6-spec-two-phases.log"}  # two phases, preemptions
HEADER = "run  "  # the fleet table's first header cell


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def ingest(logs: dict[str, Path], folder: Path, dataset: Path) -> None:
    folder.mkdir(parents=True)
    for name, log in logs.items():
        shutil.copy2(log, folder / f"{name}.log")
    result = invoke("ingest", str(folder), "--out", str(dataset), "--jobs", "1")
    assert result.exit_code == 0, result.output


def summary_json(*args: str, exit_code: int = 0) -> dict[str, Any]:
    result = invoke("summary", *args, "--json")
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout)


def fleet_section(text: str) -> list[str]:
    """The fleet table's data rows (between the rule line and the first blank line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(HEADER)) + 2
    end = lines.index("", start)
    return lines[start:end]


def best_of(summary: dict[str, Any]) -> dict[str, Any]:
    """The phase with the fastest stable window, trusted windows first."""
    return max((ph for ph in summary["phases"] if ph["stable"]),
               key=lambda ph: (ph["stable"]["trusted"], ph["stable"]["gen_tps_mean"]))


def without_source(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in ("source", "run")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(folder of the copied logs, the dataset ingested from it)."""
    root = tmp_path_factory.mktemp("fleet")
    ingest(LOGS, root / "logs", root / "ds")
    return root / "logs", root / "ds"


@pytest.fixture(scope="module")
def single(built: tuple[Path, Path]) -> dict[str, dict[str, Any]]:
    """`summary LOG --json` of each log the dataset was made from."""
    logs, _ = built
    return {name: summary_json(str(logs / f"{name}.log")) for name in LOGS}


@pytest.fixture
def dataset(built: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the dataset that a test may break."""
    copy = tmp_path / "ds"
    shutil.copytree(built[1], copy)
    return copy


def test_the_dataset_has_one_run_per_log(built: tuple[Path, Path]) -> None:
    assert sorted(p.name for p in built[1].glob("run=*")) == sorted(f"run={name}" for name in LOGS)
    assert fleet.dataset_runs(built[1]) and not fleet.dataset_runs(built[1] / "run=vllm-64k")


def test_fleet_table_has_one_row_per_run(built: tuple[Path, Path], single: dict[str, dict[str, Any]]) -> None:
    result = invoke("summary", str(built[1]))
    assert result.exit_code == 0, result.output
    rows = fleet_section(result.stdout)
    assert sorted(row.split()[0] for row in rows) == sorted(LOGS)
    for row in rows:
        name = row.split()[0]
        stable = best_of(single[name])["stable"]
        assert f"{stable['gen_tps_mean']:,.1f}" in row and f"{stable['per_request_tps']:,.2f}" in row
        assert single[name]["engine"] in row
    assert max(len(line) for line in result.stdout.split("\n\n\n")[0].splitlines()) <= 100
    # then each run's whole summary, under a heading with its name, in the fleet's order
    order = [row.split()[0] for row in rows]
    headings = [line.split()[2] for line in result.stdout.splitlines() if line.startswith("== run ")]
    assert headings == order
    assert result.stdout.count("phases and stable decode windows") == len(LOGS)


def test_each_run_is_summarised_as_its_own_log(built: tuple[Path, Path],
                                                single: dict[str, dict[str, Any]]) -> None:
    data = summary_json(str(built[1]))
    runs = {r["run"]: r for r in data["runs"]}
    assert set(runs) == set(LOGS)
    for name, alone in single.items():
        assert without_source(runs[name]) == without_source(alone)
        assert runs[name]["source"] == str(built[1] / f"run={name}")
    rows = {r["run"]: r for r in data["fleet"]}
    for name, alone in single.items():
        best = best_of(alone)
        row = rows[name]
        assert row["error"] is None
        assert row["engine"] == alone["engine"] and row["version"] == alone["version"]
        assert row["phases"] == len(alone["phases"]) and row["best_phase"] == best["phase"]
        assert row["concurrency"] == best["concurrency"] and row["input_tokens"] == best["input_tokens"]
        for key in ("gen_tps_mean", "per_request_tps", "ms_per_token", "samples", "trusted"):
            assert row[key] == best["stable"][key], key
        assert row["prefill_tps_mean"] == best["prefill"]["input_tps_mean"]
        assert row["kv_pool_tokens"] == alone["startup"]["kv_pool_tokens"]
        assert row["diagnostics"] == len(alone["diagnostics"])
        assert row["oom"] == alone["counts"]["oom"] and row["preemptions"] == alone["counts"]["preemptions"]
        assert row["start"] == alone["phases"][0]["start"] and row["end"] == alone["phases"][-1]["end"]


def test_json_structure(built: tuple[Path, Path]) -> None:
    data = summary_json(str(built[1]))
    assert set(data) == {"runs", "fleet"}
    assert [r["run"] for r in data["runs"]] == [r["run"] for r in data["fleet"]]
    assert [f"run={r['run']}" for r in data["fleet"]] == sorted(p.name for p in built[1].glob("run=*"))
    for run in data["runs"]:
        assert {"run", "source", "engine", "version", "startup", "phases", "counts", "diagnostics"} <= set(run)
    for row in data["fleet"]:
        assert list(row) == list(fleet.FLEET_SCHEMA)
    assert data == summary_json(str(built[1]), "--brief")  # --brief shortens the text only


def test_brief_prints_the_fleet_table_only(built: tuple[Path, Path]) -> None:
    result = invoke("summary", str(built[1]), "--brief")
    assert result.exit_code == 0, result.output
    assert len(fleet_section(result.stdout)) == len(LOGS)
    assert "== run" not in result.stdout and "startup" not in result.stdout
    assert "phases and stable decode windows" not in result.stdout


def test_a_run_without_tables_leaves_the_others_intact(dataset: Path, single: dict[str, dict[str, Any]]) -> None:
    shutil.rmtree(dataset / "run=vllm-64k")
    (dataset / "run=vllm-64k").mkdir()
    result = invoke("summary", str(dataset))
    assert result.exit_code == 1, result.output  # printed whole, yet not a success (as `ingest`)
    assert "1 of 3 runs could not be analysed" in result.stderr
    rows = {row.split()[0]: row for row in fleet_section(result.stdout)}
    assert rows["vllm-64k"].split()[1] == "error"
    assert "vllm-64k: not analysed:" in result.stdout and "holds no tables" in result.stdout
    assert result.stdout.count("== run ") == len(LOGS) - 1 and "== run vllm-64k" not in result.stdout
    data = summary_json(str(dataset), exit_code=1)
    broken = next(r for r in data["fleet"] if r["run"] == "vllm-64k")
    assert "holds no tables" in broken["error"] and "internal error" not in broken["error"]
    assert broken["gen_tps_mean"] is None
    good = next(r for r in data["runs"] if r["run"] == "sglang-200k")
    assert without_source(good) == without_source(single["sglang-200k"])
    assert next(r for r in data["runs"] if r["run"] == "vllm-64k")["error"] == broken["error"]


def test_a_dataset_of_one_run_has_the_dataset_shape(tmp_path: Path, single: dict[str, dict[str, Any]]) -> None:
    ingest({"vllm-64k": LOGS["vllm-64k"]}, tmp_path / "logs", tmp_path / "ds")
    data = summary_json(str(tmp_path / "ds"))
    assert set(data) == {"runs", "fleet"} and [r["run"] for r in data["fleet"]] == ["vllm-64k"]
    assert without_source(data["runs"][0]) == without_source(single["vllm-64k"])
    assert summary_json(str(tmp_path / "ds" / "run=vllm-64k")).keys() == single["vllm-64k"].keys()


def test_a_log_without_stats_lines_is_a_row_without_window(tmp_path: Path) -> None:
    head = tmp_path / "startup-only.log"
    head.write_text("".join(LOGS["vllm-64k"].read_text(encoding="utf-8").splitlines(keepends=True)[:130]),
                    encoding="utf-8")
    ingest({"startup-only": head, "sglang-200k": LOGS["sglang-200k"]}, tmp_path / "logs", tmp_path / "ds")
    result = invoke("summary", str(tmp_path / "ds"), "--brief")
    assert result.exit_code == 0, result.output
    rows = {row.split()[0]: row for row in fleet_section(result.stdout)}
    assert set(rows) == {"startup-only", "sglang-200k"}
    assert "startup-only: no phases" in result.stdout
    row = next(r for r in summary_json(str(tmp_path / "ds"))["fleet"] if r["run"] == "startup-only")
    assert row["error"] is None and row["phases"] == 0 and row["gen_tps_mean"] is None
    assert row["kv_pool_tokens"] is not None  # the start-up part is still read


def test_an_internal_error_in_one_run_is_its_row(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fleet.analyze_log

    def analyze_log(path: Path, **kwargs: Any) -> Any:
        if Path(path).name == "run=sglang-200k":
            raise ZeroDivisionError("boom")
        return real(path, **kwargs)

    monkeypatch.setattr(fleet, "analyze_log", analyze_log)
    monkeypatch.delenv("LOGPARSE_DEBUG", raising=False)
    result = invoke("summary", str(dataset), "--brief")
    assert result.exit_code == 1, result.output
    assert "sglang-200k: not analysed: internal error while analysing (ZeroDivisionError: boom)" in result.stdout
    assert {row.split()[0]: row.split()[1] for row in fleet_section(result.stdout)} == \
        {"sglang-200k": "error", "vllm-64k": "vllm", "vllm-2phase": "vllm"}


def test_every_run_failing_is_an_error(dataset: Path, tmp_path: Path) -> None:
    for run in dataset.glob("run=*"):
        for kind in run.glob("kind=*"):
            shutil.rmtree(kind)
    out = tmp_path / "out"
    result = invoke("summary", str(dataset), "--out", str(out))
    assert result.exit_code == 1
    assert f"none of the {len(LOGS)} runs" in result.output and "holds no tables" in result.output
    assert "Traceback" not in result.output and not out.exists()


def test_out_writes_the_fleet_and_each_run(built: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke("summary", str(built[1]), "--json", "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert pl.read_csv(out / "fleet.csv").get_column("run").to_list() == [r["run"] for r in data["fleet"]]
    table = pl.read_parquet(out / "fleet.parquet")
    assert table.schema == pl.Schema(fleet.FLEET_SCHEMA)
    assert table.get_column("gen_tps_mean").to_list() == [r["gen_tps_mean"] for r in data["fleet"]]
    for run in data["runs"]:
        written = json.loads((out / run["run"] / "summary.json").read_text(encoding="utf-8"))
        assert {"run": run["run"], **written} == run
        windows = pl.read_parquet(out / run["run"] / "windows.parquet")
        assert windows.height == sum(ph["stable"] is not None for ph in run["phases"])
    # written again over itself: no --force needed
    assert invoke("summary", str(built[1]), "--brief", "--out", str(out)).exit_code == 0


def test_out_again_drops_the_runs_that_are_gone(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("summary", str(dataset), "--brief", "--out", str(out)).exit_code == 0
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("kept")
    shutil.rmtree(dataset / "run=vllm-2phase")
    assert invoke("summary", str(dataset), "--brief", "--out", str(out)).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [".logparse", "fleet.csv", "fleet.parquet", "notes",
                                                     "sglang-200k", "vllm-64k"]
    assert (out / "notes" / "mine.txt").read_text() == "kept"


def test_run_names_are_escaped_and_folders_safe(dataset: Path, tmp_path: Path) -> None:
    (dataset / "run=vllm-64k").rename(dataset / "run=evil\x1bc\x07..")  # ESC c resets a terminal
    result = invoke("summary", str(dataset), "--brief", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    rows = {row.split()[0]: row.split()[1] for row in fleet_section(result.stdout)}
    assert rows == {"evil\\x1bc\\x07..": "vllm", "sglang-200k": "sglang", "vllm-2phase": "vllm"}
    assert (tmp_path / "out" / "evil_c" / "summary.json").exists()
    assert sorted(pl.read_csv(tmp_path / "out" / "fleet.csv").get_column("run")) == \
        ["evil\x1bc\x07..", "sglang-200k", "vllm-2phase"]


def test_progress_only_for_many_runs_on_a_terminal(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("LOGPARSE_NO_PROGRESS", raising=False)
    assert fleet.progress_wanted(fleet.PROGRESS_MIN_RUNS, Tty())
    assert not fleet.progress_wanted(fleet.PROGRESS_MIN_RUNS - 1, Tty())
    assert not fleet.progress_wanted(100, io.StringIO())
    monkeypatch.setenv("LOGPARSE_NO_PROGRESS", "1")
    assert not fleet.progress_wanted(100, Tty())
    monkeypatch.delenv("LOGPARSE_NO_PROGRESS")
    for k in range(fleet.PROGRESS_MIN_RUNS):  # many runs, but stderr is a pipe: not a word on it
        shutil.copytree(dataset / "run=vllm-64k", dataset / f"run=copy{k}")
    result = invoke("summary", str(dataset), "--brief")
    assert result.exit_code == 0 and result.stderr == ""
    seen: list[tuple[int, int, str]] = []
    runs = list(fleet.analyze_runs(dataset, on_start=lambda k, n, name: seen.append((k, n, name))))
    assert [s[0] for s in seen] == list(range(1, len(runs) + 1)) and {s[1] for s in seen} == {len(runs)}
    assert [s[2] for s in seen] == [r.run for r in runs]


def test_one_log_and_one_run_are_summarised_as_before(built: tuple[Path, Path],
                                                     single: dict[str, dict[str, Any]]) -> None:
    logs, ds = built
    for target in (logs / "vllm-64k.log", ds / "run=vllm-64k"):
        result = invoke("summary", str(target))
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"{target}: vllm") and "== run" not in result.stdout
        assert without_source(summary_json(str(target))) == without_source(single["vllm-64k"])
        assert invoke("summary", str(target), "--brief").stdout == result.stdout


def test_help_says_log_may_be_a_dataset() -> None:
    result = invoke("summary", "--help")
    assert result.exit_code == 0 and "dataset" in result.output and "--brief" in result.output


def test_fleet_row_prefers_a_trusted_window(single: dict[str, dict[str, Any]]) -> None:
    summary = json.loads(json.dumps(single["vllm-2phase"]))
    assert len(summary["phases"]) == 2
    slow, fast = sorted(summary["phases"], key=lambda ph: ph["stable"]["gen_tps_mean"])
    assert fleet.fleet_row("r", summary)["best_phase"] == fast["phase"]
    fast["stable"]["trusted"] = False
    fast["prefill"]["input_tps_mean"] = None
    row = fleet.fleet_row("r", summary)
    assert row["best_phase"] == slow["phase"] and row["gen_tps_mean"] == slow["stable"]["gen_tps_mean"]
    slow["prefill"]["input_tps_mean"] = None
    assert fleet.fleet_row("r", summary)["prefill_tps_mean"] is None
    slow["stable"]["trusted"] = False  # no trusted window: the fastest, flagged in the notes
    row = fleet.fleet_row("r", summary)
    assert row["best_phase"] == fast["phase"] and row["trusted"] is False
    text = fleet.render_fleet(pl.DataFrame([row], schema=fleet.FLEET_SCHEMA, orient="row"))
    assert f"r: its best stable window (phase {fast['phase']}) is not trusted" in text


def test_the_fleet_table_fits_100_columns_with_long_names(single: dict[str, dict[str, Any]]) -> None:
    names = [f"{'gpu-node-%02d' % i}-{engine}-kimi-k3-long-context-benchmark-{i}"
             for i, engine in enumerate(["vllm", "sglang"] * 4)]
    rows = pl.DataFrame([fleet.fleet_row(name, single["vllm-2phase" if i % 2 else "sglang-200k"])
                         for i, name in enumerate(names)], schema=fleet.FLEET_SCHEMA, orient="row")
    text = fleet.render_fleet(rows)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    shown = [line.split()[0] for line in lines[2:2 + len(names)]]
    assert len(set(shown)) == len(names) and all(s.endswith(n[-8:]) for s, n in zip(shown, names))
    assert "long run names are shortened" in text and "tok/s/req" in lines[0]
    wide = fleet.render_fleet(rows, width=400)
    assert "start" in wide.splitlines()[0] and "shortened" not in wide and names[0] in wide
