"""`logparse gate`: fail CI when a run regressed against its baselines."""

from __future__ import annotations

import json
from pathlib import Path

import click

from logparse.cli.options import chosen_tz, engine_option, grammar_options, slo_limit_options

EPILOG = """\b
Exit status:
  0    every metric holds (or improved, or changed within the runs' own noise)
  1    a metric regressed beyond its bound; or an input could not be read (no
       such file, a broken grammar...), as for every command
  2    the runs are not comparable (named), a metric is missing on one side
       (named), or a usage error

\b
Metrics (--threshold KEY=PCT):
  logs     decode_tps, per_request_tps, prefill_tps (per phase); cold_start_s,
           oom, preemptions, kv_pool_tokens
  clients  ttft_p50_ms, ttft_p90_ms, tpot_p50_ms, tpot_p90_ms, itl_p50_ms,
           itl_p90_ms, output_tps (per concurrency level); c_max
"""


@click.command("gate", short_help="Fail when a run regressed against its baselines.", epilog=EPILOG)
@click.argument("runs", nargs=-1, required=True, metavar="BASELINE... CANDIDATE")
@click.option(
    "--threshold",
    "threshold_options",
    multiple=True,
    metavar="METRIC=PCT",
    help="How much worse METRIC may get, in percent (repeatable; `default=PCT` for every metric). "
    "[default: 5]",
)
@click.option(
    "--thresholds",
    "thresholds_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A TOML file with a [thresholds] table of METRIC = PCT (and `default`); --threshold wins.",
)
@click.option(
    "--allow-engine-change",
    is_flag=True,
    help="Compare runs of different engines or models (an engine upgrade across vLLM and SGLang).",
)
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path), help="Also write Markdown here.")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), help="Also write JUnit XML here.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON instead of the table.")
@engine_option
@slo_limit_options
@grammar_options
def gate_command(
    runs: tuple[str, ...],
    threshold_options: tuple[str, ...],
    thresholds_file: Path | None,
    allow_engine_change: bool,
    markdown: Path | None,
    junit: Path | None,
    as_json: bool,
    engine: str,
    slo_ttft_ms: float,
    slo_tps: float,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Judge the last run, CANDIDATE, against the BASELINE runs before it (their median).

    Each run is a server log (a file, a .gz, its tables from `logparse ingest --out`, one run of a
    dataset; a dataset of several runs gives a baseline per run) or a client result file (vLLM
    bench serve, SGLang bench_serving, AIPerf, CSV). From logs: stable decode and per-request
    tok/s and prefill tok/s per phase, cold start, OOM and preemption counts, KV pool; from client
    files: TTFT, TPOT and ITL P50 and P90 and output tok/s per concurrency level, C_max under the
    SLOs. A metric regressed when it got worse by more than its bound: its threshold, or the
    runs' own noise when that is larger (a stable window's cv, the spread of several baselines),
    in which case the change is "within noise". Runs of another engine or model, input length,
    concurrency, output length or GPU count are not comparable, and nothing is judged.
    """
    from logparse.gate import run_gate
    from logparse.gate.render import render_junit, render_markdown, render_text
    from logparse.gate.thresholds import thresholds
    from logparse.store.folder import write_file

    if len(runs) < 2:
        raise click.UsageError("give at least one BASELINE and the CANDIDATE")
    result = run_gate(
        runs[:-1],
        runs[-1],
        thresholds=thresholds(threshold_options, thresholds_file),
        allow_engine_change=allow_engine_change,
        engine=engine,
        year=year,
        tz=chosen_tz(),
        patterns=patterns,
        slo_ttft_ms=slo_ttft_ms,
        slo_tps=slo_tps,
    )
    if markdown is not None:
        write_file(markdown, render_markdown(result))
    if junit is not None:
        write_file(junit, render_junit(result))
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else render_text(result))
    click.get_current_context().exit(result.exit_status)
