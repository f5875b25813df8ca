"""What the data-parallel emulation tests of both engines share: the hypothesis settings, the
start-up, and rendering a run and analysing it as a user would (from the written log)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, settings

from logparse.analysis import Analysis, analyze_log
from logparse.emulate import RunParams, StartupParams, emulate

FAST = settings(max_examples=int(os.environ.get("LOGPARSE_DP_EXAMPLES", "10")), deadline=None,
                derandomize=not os.environ.get("LOGPARSE_ANALYSIS_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
STARTUP = StartupParams(pre_load_s=9.0, weight_load_s=6.5, shards=4, init_s=30.0, cuda_graph_s=9.0)


def analyse(params: RunParams) -> tuple[dict[str, Any], list[str], Analysis]:
    """The run's truth, its lines, and the analysis of the log file it renders."""
    run = emulate(params)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        run.write(path)
        return run.truth, run.lines, analyze_log(path, engine=params.engine, year=int(params.start[:4]))


def stable_lines(a: Analysis, phase: int) -> list[int]:
    """The line numbers of the stable samples of `phase`."""
    rows = a.samples.filter(pl.col("stable") & (pl.col("phase") == phase)).sort("line_no")
    return rows.get_column("line_no").to_list()


def window(a: Analysis, phase: int) -> dict[str, Any] | None:
    """The stable window of `phase`, or None."""
    rows = a.windows.filter(pl.col("phase") == phase)
    return rows.row(0, named=True) if rows.height else None
