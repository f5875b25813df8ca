"""`logparse bench` and `logparse reconcile`: thin click commands over the benchmark library."""
from __future__ import annotations

import json
from pathlib import Path

import click

from logparse.commands.options import slo_options

from logparse.bench.analyze import analyze_bench
from logparse.bench.export import write_tables
from logparse.bench.readers import load_bench
from logparse.bench.render import render_text


@click.command("bench", short_help="Analyse client benchmark result files.")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@slo_options
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


@click.command("reconcile", short_help="Check a client result against the server log.")
@click.argument("server_log", metavar="SERVER_LOG")
@click.argument("bench_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--engine", "-e", default="auto", show_default=True, metavar="auto|vllm|sglang",
              help="Engine that wrote SERVER_LOG.")
@click.option("--concurrency", "-n", type=click.IntRange(min=1),
              help="The client's concurrency, when the result file does not say it.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def reconcile_command(server_log: str, bench_file: Path, engine: str, concurrency: int | None,
                      as_json: bool) -> None:
    """Line a client benchmark result up with the server log's phase of the same N and compare
    the client's output throughput with the engine's stable decode throughput and with the
    physical bound (requests x output tokens / duration). Says which source to trust and why.
    """
    from logparse.analysis.analyze import analyze_log
    from logparse.bench.serverlog import reconcile_with_log

    analysis = analyze_log(server_log, engine=engine)
    result = reconcile_with_log(load_bench([bench_file]), analysis, concurrency=concurrency)
    click.echo(json.dumps(result, indent=2, default=str) if as_json else render_reconcile(result))


def render_reconcile(result: dict[str, object]) -> str:
    """The reconcile verdict as readable text."""
    lines = []
    phase = result.get("server_phase") or {}
    if isinstance(phase, dict) and phase:
        stable = phase.get("stable_gen_tps")
        shown = f"{stable:.1f} tok/s over {phase.get('stable_samples')} samples" if stable else "no stable window"
        lines.append(f"server log  {result.get('server_log')} ({result.get('engine')}): phase {phase.get('phase')}, "
                     f"N={phase.get('concurrency')}, stable decode {shown}")
    else:
        lines.append(f"server log  {result.get('server_log')}: no load phase found")
    for run in result.get("runs", []):  # type: ignore[union-attr]
        bound = run.get("physical_bound_tps")
        lines.append(f"client      {run['config']} c={run['concurrency']}: {run['client_output_tps']:g} output tok/s"
                     + (f"; physical bound {bound:.2f} tok/s ({run['bound_ratio']:.1f}x)" if bound else ""))
        lines.extend(f"  problem   {p}" for p in run["problems"])
        lines.extend(f"  note      {n}" for n in run["notes"])
    lines.append(f"trust       {result['trust']}: {result['reason']}")
    return "\n".join(lines)
