"""`logparse bench`: thin click command over the benchmark-result library.

`logparse reconcile` needs the server-log analysis and is wired where that lives; its client
half is `logparse.bench.reconcile.reconcile`.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from logparse.bench.analyze import analyze_bench
from logparse.bench.export import write_tables
from logparse.bench.readers import load_bench
from logparse.bench.render import render_text


@click.command("bench", short_help="Analyse client benchmark result files.")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--slo-ttft-ms",
    type=click.FloatRange(min=0, min_open=True),
    default=1000.0,
    show_default=True,
    help="TTFT SLO in ms (lower is better).",
)
@click.option(
    "--slo-tps",
    type=click.FloatRange(min=0, min_open=True),
    default=15.0,
    show_default=True,
    help="Per-user output rate SLO in tok/s (higher is better).",
)
@click.option(
    "--think-s",
    type=click.FloatRange(min=0),
    default=45.0,
    show_default=True,
    help="User think time Z in s for N = C_max x (1 + Z / L).",
)
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON document.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write the tables as Parquet and CSV into this directory.",
)
def bench_command(
    files: tuple[Path, ...],
    slo_ttft_ms: float,
    slo_tps: float,
    think_s: float,
    as_json: bool,
    out: Path | None,
) -> None:
    """Read benchmark results (vLLM / SGLang / Cordatus / AIPerf, detected by content) and print
    the SLO matrix, C_max and user capacity, aggregate output, spec speedup and consistency checks.
    """
    analysis = analyze_bench(load_bench(files), slo_ttft_ms=slo_ttft_ms, slo_tps=slo_tps, think_s=think_s)
    if out is not None:
        written = write_tables(analysis, out)
        click.echo(f"wrote {len(written)} files to {out}", err=True)
    click.echo(json.dumps(analysis.to_dict(), indent=2) if as_json else render_text(analysis))
