"""Streaming: many small blocks, Parquet written row group by row group, the same tables as the log
read whole; the log's year found late (a restart), stdin replayed from its spool, parsing threads,
cancelling."""
from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from logparse.cli import cli
from logparse.grammar import load_grammar
from logparse.ingest.run import Cancelled, stream_log

from ingest_helpers import FIXTURES, assert_same_tables, streamed, whole

STATS = ("(APIServer pid=719) INFO 12-31 23:59:{s:02d} [loggers.py:271] Engine 000: Avg prompt throughput: "
         "2870.5 tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, GPU KV "
         "cache usage: 20.8%, Prefix cache hit rate: 0.0%")
FLASHINFER = ("(Worker_TP7 pid=308) 2019-07-28 17:18:31,838 - WARNING - autotuner.py:1315 - flashinfer.jit: "
              "[Autotuner]: OOM detected, falling back to default tactic")


def _modest_log(tmp_path: Path, engine: str) -> Path:
    """The engine's fixtures one after the other: a few thousand lines of every shape."""
    path = tmp_path / f"{engine}-all.log"
    with path.open("wb") as out:
        for p in sorted((FIXTURES / engine).glob("*.log")):
            out.write(p.read_bytes())
    return path


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_many_small_blocks_into_parquet_give_the_tables_of_one_block(tmp_path: Path, engine: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import logparse.store.tables as tables

    monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 100)  # many row groups, written as they fill
    path = _modest_log(tmp_path, engine)
    out = tmp_path / "out"
    out.mkdir()
    outcome = stream_log(path, load_grammar(), folder=out, engine=engine, block_bytes=4096)
    assert outcome.stats.lines > 500 and path.stat().st_size // 4096 > 20  # many blocks
    written = {p.stem: pl.read_parquet(p) for p in out.glob("*.parquet")}
    big = max(written, key=lambda k: written[k].height)
    assert pl.read_parquet_metadata(out / f"{big}.parquet") is not None
    import pyarrow.parquet as pq

    assert pq.ParquetFile(out / f"{big}.parquet").num_row_groups > 1
    want = whole(path, engine)
    assert_same_tables(want.tables, written, engine)
    assert outcome.counts == want.counts and outcome.stats == want.stats


def test_cli_output_does_not_depend_on_blocks_or_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _modest_log(tmp_path, "sglang")
    outputs = {}
    for name, block, jobs in (("small", "8192", "2"), ("whole", str(1 << 30), "1")):
        monkeypatch.setenv("LOGPARSE_BLOCK_BYTES", block)
        result = CliRunner().invoke(cli, ["ingest", str(path), "--out", str(tmp_path / name), "--format", "json",
                                          "--jobs", jobs])
        assert result.exit_code == 0, result.output
        outputs[name] = json.loads(result.stdout)  # the headline, computed from the files
    assert outputs["small"] == outputs["whole"]
    names = sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == names
    for name in names:
        if name.endswith(".parquet"):
            assert pl.read_parquet(tmp_path / "small" / name).equals(pl.read_parquet(tmp_path / "whole" / name)), name


def _late_year_log(tmp_path: Path) -> Path:
    """Year-less stamps (that roll over into a new year) for many blocks, then the first full date."""
    lines = [STATS.format(s=i % 60) for i in range(400)]
    lines += [STATS.replace("12-31 23:59", "01-01 00:00").format(s=1), FLASHINFER, "junk"]
    path = tmp_path / "late-year.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_year_found_late_reads_the_log_again(tmp_path: Path) -> None:
    path = _late_year_log(tmp_path)
    want = whole(path, "vllm")
    assert want.tables["engine_stats"]["time"][0].year == 2019  # from the FlashInfer line at the end
    outcome, tables = streamed(path, "vllm", block_bytes=4096)
    assert outcome.restarts == 1
    assert_same_tables(want.tables, tables, "late year")


def test_stdin_is_replayed_from_its_spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _late_year_log(tmp_path)
    data = path.read_bytes()

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin())
    want = whole("-", "vllm")
    Stdin.buffer = io.BytesIO(data)
    outcome, tables = streamed("-", "vllm", block_bytes=4096)
    assert outcome.restarts == 1 and outcome.source == "standard input"
    assert_same_tables(want.tables, tables, "stdin")
    assert outcome.stats == want.stats


@pytest.mark.parametrize("workers", [2, 3])
def test_parsing_threads_give_the_same_tables(tmp_path: Path, workers: int) -> None:
    path = _modest_log(tmp_path, "vllm")
    want = whole(path, "vllm")
    outcome, tables = streamed(path, "vllm", block_bytes=16384, workers=workers)
    assert_same_tables(want.tables, tables, "workers")
    assert outcome.counts == want.counts and outcome.stats == want.stats


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cancelled_run_stops_at_the_next_block_and_writes_nothing(tmp_path: Path, workers: int) -> None:
    path = _modest_log(tmp_path, "vllm")
    cancel = threading.Event()
    seen: list[int] = []

    def progress(position: int, size: int | None) -> None:
        seen.append(position)
        cancel.set()  # as `run_jobs` does when the user presses Ctrl-C while another log runs

    out = tmp_path / "tables"
    out.mkdir()
    with pytest.raises(Cancelled):
        stream_log(path, load_grammar(), folder=out, engine="vllm", block_bytes=16384,
                   workers=workers, progress=progress, cancel=cancel)
    assert 1 <= len(seen) <= workers + 1 and seen[-1] < path.stat().st_size
    assert not list(out.glob("*.parquet"))  # the sink was aborted: no half-written table


def test_a_log_that_grows_while_read_ends_at_its_size_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "live.log"
    path.write_text((STATS.format(s=1) + "\n") * 50, encoding="utf-8")
    size = path.stat().st_size
    outcome, _ = streamed(path, "vllm", block_bytes=1024)
    assert outcome.stats.bytes_read == size and outcome.counts == {"engine_stats": 50}
    assert not os.environ.get("LOGPARSE_WORKERS")


def test_a_large_table_in_the_hive_layout_is_several_files_that_read_back_as_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.store import table_paths
    from logparse.store import tables

    monkeypatch.setattr(tables, "PART_ROW_GROUPS", 2)
    monkeypatch.setattr(tables, "ROW_GROUP_ROWS", 8)  # small row groups
    path = _modest_log(tmp_path, "vllm")
    flat, hive = tmp_path / "flat", tmp_path / "hive"
    flat.mkdir(), hive.mkdir()
    for folder, layout in ((flat, "flat"), (hive, "hive")):
        stream_log(path, load_grammar(), folder=folder, layout=layout, engine="vllm", block_bytes=4096)
    parts = table_paths(hive)
    assert max(len(files) for files in parts.values()) >= 3, parts
    for kind, files in parts.items():
        assert [f.name for f in files] == [f"part-{i:05d}.parquet" for i in range(len(files))]
        assert pl.read_parquet(files).equals(pl.read_parquet(flat / f"{kind}.parquet")), kind


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_jobs_sets_the_parsing_threads_of_one_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    import logparse.ingest as ingest_module

    seen: list[int | None] = []
    real = ingest_module.stream_log

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs.get("workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ingest_module, "stream_log", spy)
    path = _modest_log(tmp_path, "vllm")
    outputs = []
    for jobs in ("1", "3"):
        result = CliRunner().invoke(cli, ["ingest", str(path), "--jobs", jobs, "--format", fmt])
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
    assert seen == [1, 3]
    assert outputs[0] == outputs[1]
