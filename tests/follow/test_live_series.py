"""`export.live.LiveSeries` fed block by block gives, for every series, the last sample
`run_series` gives of the same lines: the same names, labels and values, whatever the blocks."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from conftest import REAL_LOGS
from hypothesis import given, settings
from hypothesis import strategies as st

import logparse
from logparse.emulate.core import emulate
from logparse.emulate.presets import preset
from logparse.export.live import LiveSeries
from logparse.export.series import run_series

pytestmark = pytest.mark.slow  # seven emulated runs and seven real excerpts ingested first

PRESETS = [("vllm", "emulated-0.6-spec-two-phases"), ("vllm", "emulated-0.11-preemptions-compose"),
           ("vllm", "emulated-0.10-multirank-docker"), ("sglang", "emulated-0.5.6-hybrid-spec"),
           ("sglang", "emulated-0.4-docker-retract"), ("vllm", "gpustack-64k"), ("sglang", "gpustack-200k")]
REAL = ["vllm/001.log", "vllm/013.log", "vllm/046.log", "vllm/086.log", "sglang/005.log", "sglang/023.log",
        "sglang/062.log"]


def naive(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The tables with `time` as naive UTC, as the follow sink keeps them."""
    return {k: f.with_columns(pl.col("time").dt.convert_time_zone("UTC").dt.replace_time_zone(None))
            if isinstance(f.schema.get("time"), pl.Datetime) else f for k, f in tables.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict[str, pl.DataFrame]]]:
    folder = tmp_path_factory.mktemp("live-series")
    out = {}
    for engine, name in PRESETS:
        path = folder / f"{engine}-{name}.log"
        path.write_text(emulate(preset(name, engine)).text)
        result = logparse.ingest(path)
        out[path.name] = (result.engine, dict(result.tables))
    for name in REAL:
        path = REAL_LOGS / name
        if path.exists():
            result = logparse.ingest(path)
            out[name] = (result.engine, dict(result.tables))
    return out


def last_samples(series: list) -> dict[tuple[str, tuple], tuple[int, float]]:  # type: ignore[type-arg]
    return {(s.name, s.labels): s.samples[-1] for s in series}


def fed(engine: str, tables: dict[str, pl.DataFrame], cuts: list[int]) -> LiveSeries:
    live = LiveSeries(engine, "run")
    last = max(int(f["line_no"].max()) for f in tables.values() if f.height)
    edges = [0, *sorted(c for c in set(cuts) if 0 < c < last), last]
    for lo, hi in zip(edges, edges[1:]):
        block = {k: f.filter(pl.col("line_no").is_between(lo + 1, hi)) for k, f in tables.items()}
        live.add({k: f for k, f in block.items() if f.height})
    return live


def test_every_series_of_every_run_ends_on_run_series_last_sample(runs: dict) -> None:  # type: ignore[type-arg]
    checked = 0
    for name, (engine, tables) in runs.items():
        expected = last_samples(run_series(tables, engine=engine, run="run").series)
        for step in (1, 7, 50):
            cuts = list(range(step, 100_000, step))
            got = last_samples(fed(engine, naive(tables), cuts).series())
            assert got == expected, (name, step)
        checked += len(expected)
    assert checked > 50


@settings(max_examples=25)
@given(data=st.data())
def test_any_blocks_give_the_same_last_samples(runs: dict, data: st.DataObject) -> None:  # type: ignore[type-arg]
    name = data.draw(st.sampled_from(sorted(runs)))
    engine, tables = runs[name]
    last = max(int(f["line_no"].max()) for f in tables.values() if f.height)
    cuts = data.draw(st.lists(st.integers(1, last), max_size=40))
    expected = last_samples(run_series(tables, engine=engine, run="run").series)
    assert last_samples(fed(engine, naive(tables), cuts).series()) == expected


def test_a_run_without_stats_lines_has_no_series(tmp_path: Path) -> None:
    log = tmp_path / "start.log"
    log.write_text("INFO 07-28 17:06:30 [__init__.py:1] vLLM API server version 0.11.2\n")
    result = logparse.ingest(log)
    live = fed(result.engine, naive(dict(result.tables)), [])
    assert live.series() == [] == run_series(result.tables, engine=result.engine, run="run").series


def test_queued_blocks_folded_when_read_give_the_same_series(runs: dict) -> None:  # type: ignore[type-arg]
    from logparse.follow.live_metrics import QueuedSeries

    for name, (engine, tables) in runs.items():
        expected = last_samples(run_series(tables, engine=engine, run="run").series)
        queued = QueuedSeries(LiveSeries(engine, "run"))
        frames = naive(tables)
        last = max(int(f["line_no"].max()) for f in frames.values() if f.height)
        for lo in range(0, last, 25):
            block = {kind: f.filter(pl.col("line_no").is_between(lo + 1, lo + 25)) for kind, f in frames.items()}
            queued.add({kind: f for kind, f in block.items() if f.height}, now=0.0)  # one fold: the first
        assert queued.queued or last <= 25, name  # the rows wait for the next read
        assert last_samples(queued.series()) == expected, name
        assert not queued.queued
