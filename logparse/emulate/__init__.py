"""Log emulator: render a parameterised vLLM or SGLang run into exact log lines plus ground truth.

>>> from logparse.emulate import RunParams, PhaseParams, emulate
>>> run = emulate(RunParams(engine="sglang", phases=(PhaseParams(concurrency=4),)))
>>> run.truth["phases"][0]["concurrency"]
4
"""

from __future__ import annotations

from logparse.emulate.core import EmulatedRun, emulate
from logparse.emulate.eras import SGLANG_ERAS, VLLM_ERAS, resolve_era
from logparse.emulate.params import LogStyle, PhaseParams, RunParams, StartupParams

__all__ = [
    "SGLANG_ERAS",
    "VLLM_ERAS",
    "EmulatedRun",
    "LogStyle",
    "PhaseParams",
    "RunParams",
    "StartupParams",
    "emulate",
    "resolve_era",
]
