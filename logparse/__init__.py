"""logparse: turn vLLM and SGLang server logs into typed tables and post-mortems.

>>> import logparse
>>> result = logparse.ingest("server.log")        # doctest: +SKIP
>>> result["engine_stats"].select("time", "gen_tps", "running")  # doctest: +SKIP
"""
from __future__ import annotations

from logparse.pipeline import IngestResult, ingest

__all__ = ["IngestResult", "ingest", "__version__"]
__version__ = "0.1.0"
