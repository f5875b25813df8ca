"""logparse: turn vLLM and SGLang server logs into typed tables and post-mortems.

>>> import logparse
>>> result = logparse.ingest("server.log")        # doctest: +SKIP
>>> result["engine_stats"].select("time", "gen_tps", "running")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logparse.ingest import IngestResult, ingest

__all__ = ["IngestResult", "__version__", "ingest"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Imported on first use: `logparse --help` does not pay for polars and pyarrow.
    if name in ("ingest", "IngestResult"):
        # the package `logparse.ingest` is itself callable as the `ingest` function
        module = importlib.import_module("logparse.ingest")
        return module if name == "ingest" else module.IngestResult
    raise AttributeError(name)
