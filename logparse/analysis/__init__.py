"""Post-mortem analysis of ingested vLLM / SGLang logs.

Phases of load, the stable decode window of each, degradation with context length, prefill
chunk curves, speculative-decoding acceptance, cold start and diagnostics. Every step takes and
returns polars DataFrames; `analyze` runs them all on one log's event tables.

>>> from logparse.analysis import analyze_log, summary_dict   # doctest: +SKIP
>>> summary_dict(analyze_log("server.log"))["phases"][0]["stable"]["gen_tps_mean"]  # doctest: +SKIP
"""

from __future__ import annotations

from logparse.analysis.analyze import Analysis, analyze, analyze_log
from logparse.analysis.summary import render_summary, render_windows, summary_dict

__all__ = ["Analysis", "analyze", "analyze_log", "render_summary", "render_windows", "summary_dict"]
