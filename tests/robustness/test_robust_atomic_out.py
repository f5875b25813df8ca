"""`--out` is replaced as a whole or not at all; foreign folders are refused unless --force."""
from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.errors import OutputError
from logparse.store import MARKER_FILE, STATS_FILE, write_tables

STATS = ("(APIServer pid=719) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: 2870.5 "
         "tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV cache "
         "usage: 20.8%, Prefix cache hit rate: 0.0%")


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".logparse-" in p.name)


@pytest.fixture()
def first_output(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "server.log"
    log.write_text(f"{STATS}\nsomething else\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run("ingest", str(log), "--out", str(out)).exit_code == 0
    assert sorted(os.listdir(out)) == [MARKER_FILE, STATS_FILE, "engine_stats.parquet", "unparsed.parquet"]
    return log, out


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_an_interrupted_write_leaves_the_previous_output_intact(
        first_output: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    log, out = first_output
    before = snapshot(out)
    log.write_text(f"{STATS}\n{STATS}\nnew line\n", encoding="utf-8")
    calls: list[str] = []
    import logparse.ingest as ingest_module

    real_stream = ingest_module.stream_log

    def stream_then_fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        folder = kwargs["folder"]

        def progress(done: int, total: int | None) -> None:
            calls.append(str(folder))  # the core has written the block's tables: now the disk fails
            (folder / "half.parquet").write_bytes(b"PAR1 half a table")
            raise error

        return real_stream(*args, **{**kwargs, "progress": progress})

    monkeypatch.setattr(ingest_module, "stream_log", stream_then_fail)
    result = run("ingest", str(log), "--out", str(out))
    assert result.exit_code != 0 and len(calls) == 1
    assert snapshot(out) == before  # old tables, byte for byte, and nothing else
    assert leftovers(out.parent) == []
    monkeypatch.undo()
    assert run("ingest", str(log), "--out", str(out)).exit_code == 0
    assert pl.read_parquet(out / "engine_stats.parquet").height == 2


def test_a_rewrite_drops_stale_tables_and_keeps_the_users_files(first_output: tuple[Path, Path]) -> None:
    log, out = first_output
    (out / "notes.txt").write_text("keep me")
    log.write_text(f"{STATS}\n", encoding="utf-8")  # no unparsed line any more
    assert run("ingest", str(log), "--out", str(out)).exit_code == 0
    assert sorted(os.listdir(out)) == [MARKER_FILE, STATS_FILE, "engine_stats.parquet", "notes.txt"]
    assert (out / "notes.txt").read_text() == "keep me"
    assert leftovers(out.parent) == []


def test_foreign_folder_is_refused_unless_forced_and_keeps_its_files(first_output: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    log, _ = first_output
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    (foreign / "data.parquet").write_bytes(b"not ours")
    refused = run("ingest", str(log), "--out", str(foreign))
    assert refused.exit_code == 1 and "--force" in refused.output
    assert sorted(os.listdir(foreign)) == ["data.parquet", "notes.txt"]
    assert run("ingest", str(log), "--out", str(foreign), "--force").exit_code == 0
    assert sorted(os.listdir(foreign)) == [MARKER_FILE, STATS_FILE, "data.parquet", "engine_stats.parquet",
                                           "notes.txt", "unparsed.parquet"]
    assert (foreign / "data.parquet").read_bytes() == b"not ours"


def test_out_inside_a_missing_folder_and_a_file_in_the_way(tmp_path: Path) -> None:
    frame = pl.DataFrame({"line_no": [1]})
    written = write_tables({"x": frame}, tmp_path / "a" / "b")
    assert written == [tmp_path / "a" / "b" / "x.parquet"] and written[0].exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match=r"cannot write .*file: a file is in the way"):
        write_tables({"x": frame}, tmp_path / "file")


def _write(out: Path, sources: list[str], *, force: bool = False) -> None:
    from logparse.store import output_folder as table_folder

    with table_folder(out, force=force, sources=sources) as tmp:
        pl.DataFrame({"x": [len(sources)]}).write_parquet(tmp / "engine_stats.parquet")


def test_out_of_other_logs_is_refused_and_kept(tmp_path: Path) -> None:
    from logparse.errors import InputError
    from logparse.store import marker_sources, source_id

    out = tmp_path / "out"
    _write(out, ["a.log", "b.log"])
    before = snapshot(out)
    assert marker_sources(out) == sorted([source_id("a.log"), source_id("b.log")])
    with pytest.raises(InputError, match=r"holds the tables of other logs \(.*b\.log\)"):
        _write(out, ["a.log"])  # would lose b.log's tables
    assert snapshot(out) == before and leftovers(tmp_path) == []
    _write(out, ["b.log", "a.log", "c.log"])  # the same logs and more: nothing is lost
    assert marker_sources(out) == sorted(source_id(s) for s in ("a.log", "b.log", "c.log"))
    _write(out, ["d.log"], force=True)
    assert marker_sources(out) == [source_id("d.log")]


def test_an_older_marker_without_sources_is_replaced_as_before(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER_FILE).write_text("written by logparse\n", encoding="utf-8")
    _write(out, ["a.log"])
    assert pl.read_parquet(out / "engine_stats.parquet")["x"].to_list() == [1]


def test_ingest_keeps_a_dataset_of_other_logs_unless_forced(tmp_path: Path) -> None:
    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b", "c")}
    for path in logs.values():
        path.write_text(f"{STATS}\n", encoding="utf-8")
    out = tmp_path / "ds"
    assert run("ingest", str(logs["a"]), str(logs["b"]), "--out", str(out)).exit_code == 0
    before = tree(out)
    refused = run("ingest", str(logs["c"]), "--out", str(out))
    assert refused.exit_code == 1 and "holds the tables of other logs" in refused.output
    assert "--force" in refused.output and "Traceback" not in refused.output
    assert tree(out) == before and sorted(p.name for p in out.glob("run=*")) == ["run=a", "run=b"]
    again = run("ingest", str(logs["a"]), str(logs["b"]), "--out", str(out))  # the same logs: a re-run
    assert again.exit_code == 0, again.output
    assert run("ingest", str(logs["c"]), "--out", str(out), "--force").exit_code == 0
    assert not list(out.glob("run=*")) and (out / "engine_stats.parquet").exists()


@pytest.mark.parametrize("extra", [(), ("--jobs", "2"), ("--format", "jsonl")])
def test_one_log_over_another_logs_tables_is_refused(tmp_path: Path, extra: tuple[str, ...]) -> None:
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    for path in (first, second):
        path.write_text(f"{STATS}\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run("ingest", str(first), "--out", str(out), *extra).exit_code == 0
    assert run("ingest", str(first), "--out", str(out), *extra).exit_code == 0
    refused = run("ingest", str(second), "--out", str(out), *extra)
    assert refused.exit_code == 1 and "first.log" in refused.output


@pytest.mark.parametrize("command", ["summary", "windows", "compare"])
def test_analysis_out_keeps_another_logs_tables(command: str, tmp_path: Path) -> None:
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    for path in (first, second):
        path.write_text(f"{STATS}\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run("ingest", str(first), "--out", str(out)).exit_code == 0
    refused = run(command, str(second), "--out", str(out))
    assert refused.exit_code == 1 and "holds the tables of other logs" in refused.output
    assert (out / "engine_stats.parquet").exists()
    assert run(command, str(first), "--out", str(out)).exit_code == 0  # the same log: its own folder
