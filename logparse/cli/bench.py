"""`logparse bench` and `logparse reconcile`: thin click commands over the benchmark library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from logparse.bench.analyze import analyze_bench
from logparse.bench.export import write_tables
from logparse.bench.readers import load_bench
from logparse.bench.render import render_reconcile, render_text
from logparse.cli.options import (
    OutTarget,
    PathOrUri,
    chosen_tz,
    engine_option,
    grammar_options,
    local_inputs,
    output_target,
    slo_options,
)


@click.command("bench", short_help="Analyse client benchmark result files.")
@click.argument("files", nargs=-1, required=True, type=PathOrUri(allow_dash=True, path_type=Path))
@click.option(
    "--engine",
    "server_engine",
    metavar="NAME",
    help="The serving engine the results were measured against, for files that do not say it"
    " (a client backend such as vllm or openai names the protocol, not the server).",
)
@slo_options
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON document.")
@click.option(
    "--out",
    "-o",
    type=OutTarget(),
    help="Also write the tables as Parquet and CSV into this directory (or a URI of object storage).",
)
def bench_command(
    files: tuple[Path, ...],
    server_engine: str | None,
    slo_ttft_ms: float,
    slo_tps: float,
    think_s: float,
    as_json: bool,
    out: Path | str | None,
) -> None:
    """Read benchmark results (vLLM / SGLang / Cordatus / AIPerf, detected by content) and print
    the SLO matrix, C_max and user capacity, aggregate output, spec speedup and consistency checks.
    A FILE of `-` is read from standard input (once). A run's engine is what its file says the
    server was, else --engine, else unknown; runs of unknown engine are never merged across files.

    At the P90 basis TTFT is judged at its P90 and per-user TPS at its P10: the file's own, else
    computed from its per-request arrays (vLLM --save-detailed, SGLang --output-details), else
    at a stricter percentile the file prints (P99), never at the mean; the marks under the
    matrix say which, and --json gives the statistic and source of every judgement.
    """
    rows = _named(load_bench([Path(p) for p in local_inputs(files)], engine=server_engine))
    analysis = analyze_bench(rows, slo_ttft_ms=slo_ttft_ms, slo_tps=slo_tps, think_s=think_s)
    if out is not None:
        local, publish = output_target(out)
        assert local is not None
        written = write_tables(analysis, local)
        publish()
        click.echo(f"wrote {len(written)} files to {out}", err=True)
    click.echo(json.dumps(analysis.to_dict(), indent=2) if as_json else render_text(analysis))


@click.command("reconcile", short_help="Check a client result against the server log.")
@click.argument("server_log", metavar="SERVER_LOG")
@click.argument("bench_file", type=PathOrUri(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@engine_option
@click.option(
    "--concurrency",
    "-n",
    type=click.IntRange(min=1),
    help="The client's concurrency, when the result file does not say it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@grammar_options
def reconcile_command(
    server_log: str,
    bench_file: Path,
    engine: str,
    concurrency: int | None,
    as_json: bool,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Line a client benchmark result up with the server log's phase of the same N and compare
    the client's output throughput with the engine's stable decode throughput and with the
    physical bound (requests x output tokens / duration). Says which source to trust and why;
    a log of another engine, input length, concurrency or output length is reported as a
    mismatch, and a stable window too short to trust is not compared. Either input may be `-`
    (standard input), not both. Exit status 1 when a problem was found (the client's figure
    cannot be trusted, the log is not of the client's run, or it holds no load phase at all).
    """
    from logparse.analysis.analyze import analyze_log
    from logparse.bench.serverlog import reconcile_with_log

    if server_log == "-" and str(bench_file) == "-":
        raise click.UsageError("only one of SERVER_LOG and BENCH_FILE can be read from standard input ('-')")
    (server_log,) = local_inputs([server_log], stream_files=True)
    (bench,) = local_inputs([bench_file])
    analysis = analyze_log(server_log, engine=engine, year=year, tz=chosen_tz(), patterns=patterns)
    result = reconcile_with_log(_named(load_bench([Path(bench)])), analysis, concurrency=concurrency)
    click.echo(json.dumps(result, indent=2, default=str) if as_json else render_reconcile(result))
    if result.get("problems") or any(run["problems"] for run in result["runs"]):
        click.get_current_context().exit(1)


def _named(rows: Any) -> Any:
    """The rows' `source_file` as the user named it: a file fetched from object storage by its URI."""
    import polars as pl

    from logparse.store.copies import shown_name

    if "source_file" not in rows.columns:
        return rows
    return rows.with_columns(pl.col("source_file").map_elements(shown_name, return_dtype=pl.String()))
