"""Offline HTML report: charts (Altair, rendered with vl-convert) and tables of logs and benchmarks.

`build_report(logs, bench_files, out_dir)` writes `index.html` (one self-contained page),
`charts/*.png|svg`, `tables/<chart>.csv` and `summary.md`. Altair and vl-convert are imported
only inside this package and `logparse.charts`.
"""

from __future__ import annotations

from logparse.report.build import Report, build_report

__all__ = ["Report", "build_report"]
