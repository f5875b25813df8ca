"""Write the tables of a `BenchAnalysis` to a directory as Parquet and CSV."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from logparse.bench.analyze import BenchAnalysis
from logparse.store import output_dir, write_csv, write_parquet


def spec_table(analysis: BenchAnalysis) -> pl.DataFrame:
    """One row per spec/direct pair: break-even concurrency (interpolated between its bracketing
    levels, which follow it), whether it was interpolated, and a note."""
    return pl.DataFrame(
        [
            {
                "engine": s["engine"],
                "label": s["label"],
                "direct_config": s["direct_config"],
                "spec_config": s["spec_config"],
                "break_even_concurrency": s["break_even_concurrency"],
                "break_even_interpolated": s["break_even_interpolated"],
                "break_even_lower": (s["break_even_between"] or [None])[0],
                "break_even_upper": (s["break_even_between"] or [None, None])[1],
                "note": s["note"],
            }
            for s in analysis.spec
        ],
        schema={
            "engine": pl.String,
            "label": pl.String,
            "direct_config": pl.String,
            "spec_config": pl.String,
            "break_even_concurrency": pl.Float64,
            "break_even_interpolated": pl.Boolean,
            "break_even_lower": pl.Int64,
            "break_even_upper": pl.Int64,
            "note": pl.String,
        },
    )


def write_tables(analysis: BenchAnalysis, out_dir: Path) -> list[Path]:
    """Write every table as `<name>.parquet` and `<name>.csv` under `out_dir`, which appears with
    all of them or not at all (see `logparse.store.output_dir`); return the paths."""
    names = list({**analysis.tables(), "spec": None})
    with output_dir(out_dir) as tmp:
        for name, frame in {**analysis.tables(), "spec": spec_table(analysis)}.items():
            write_parquet(frame, tmp / f"{name}.parquet")
            write_csv(frame, tmp / f"{name}.csv")
    return [out_dir / f"{name}.{ext}" for name in names for ext in ("parquet", "csv")]
