"""Shared by the property tests over emulated runs: their hypothesis settings, a small start-up,
and one run rendered to a log, parsed and analysed like a real one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from logparse.analysis import Analysis, analyze_log
from logparse.emulate import RunParams, StartupParams, emulate

# Each example renders and parses one or two logs; 12 derandomized examples keep a file ~10 s.
# LOGPARSE_ANALYSIS_EXAMPLES=200 LOGPARSE_ANALYSIS_RANDOM=1 runs a longer random search.
FAST = settings(max_examples=int(os.environ.get("LOGPARSE_ANALYSIS_EXAMPLES", "12")), deadline=None,
                derandomize=not os.environ.get("LOGPARSE_ANALYSIS_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
STARTUP = StartupParams(pre_load_s=9.0, weight_load_s=6.5, shards=4, init_s=30.0, cuda_graph_s=9.0)


def analyse(params: RunParams) -> tuple[dict[str, Any], Analysis]:
    """The emulated run's truth, and the analysis of its log."""
    run = emulate(params)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        run.write(path)
        return run.truth, analyze_log(path, engine=params.engine, year=int(params.start[:4]))
