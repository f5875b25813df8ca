"""Client benchmark results: one tidy schema for every tool, SLOs, capacity, spec break-even,
consistency checks, and the client half of reconciliation with the server log.

Modules: `schema` (the table and its definitions), `readers` (auto-detected per tool),
`derive`, `slo`, `capacity`, `spec`, `checks`, `reconcile`, `analyze`, `render`, `export`, `cli`.
"""

from __future__ import annotations

from logparse.bench.analyze import BenchAnalysis, analyze_bench
from logparse.bench.checks import run_checks
from logparse.bench.readers import load_bench, read_bench_file
from logparse.bench.reconcile import reconcile

__all__ = ["BenchAnalysis", "analyze_bench", "load_bench", "read_bench_file", "reconcile", "run_checks"]
