"""`logparse report`: thin click command over `logparse.report.build_report`."""

from __future__ import annotations

from pathlib import Path

import click

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
from logparse.escape import for_terminal


@click.command("report", short_help="Write charts and an offline HTML report.")
@click.argument("logs", nargs=-1, type=PathOrUri(exists=True, allow_dash=True))
@click.option(
    "--bench",
    "bench_files",
    multiple=True,
    type=PathOrUri(exists=True, dir_okay=False, path_type=Path),
    help="Client benchmark result file (repeatable): vllm bench serve, SGLang bench_serving, "
    "Cordatus CSV, AIPerf/genai-perf.",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    type=OutTarget(),
    help="Directory to write index.html, charts/, tables/ and summary.md into (or a URI of object "
    "storage: s3://...).",
)
@click.option("--title", help="Page title (default: from the inputs).")
@engine_option
@slo_options
@click.option(
    "--no-images", is_flag=True, help="Skip the PNG and SVG files (the HTML page does not need them)."
)
@grammar_options
def report_command(
    logs: tuple[str, ...],
    bench_files: tuple[Path, ...],
    out_dir: Path | str,
    title: str | None,
    engine: str,
    slo_ttft_ms: float,
    slo_tps: float,
    think_s: float,
    no_images: bool,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Write an offline HTML report (charts, findings, diagnostics, tables) for server LOGs
    and/or client benchmark files.

    A LOG is a log file, `-` (standard input, once), a folder of one log's tables
    (`logparse ingest LOG --out DIR`) or a dataset (`logparse ingest DIR --out DATASET`), each of
    whose runs is a log of the report; a LOG or FILE may be a URI of object storage (s3://...).

    \b
    Examples:
      logparse report vllm.log sglang.log -o report/
      logparse report DATASET -o report/
      cat server.log | logparse report - -o report/
      logparse report --bench results.csv -o report/
      logparse report server.log --bench client.json -o report/
    """
    from logparse.report.build import build_report

    if not logs and not bench_files:
        raise click.UsageError("give at least one LOG or one --bench FILE")
    local, publish = output_target(out_dir)
    assert local is not None
    report = build_report(
        local_inputs(logs),
        [Path(p) for p in local_inputs(bench_files)],
        local,
        title=title,
        slo_ttft_ms=slo_ttft_ms,
        slo_tps=slo_tps,
        think_s=think_s,
        images=not no_images,
        engine=engine,
        patterns=patterns,
        year=year,
        tz=chosen_tz(),
    )
    publish()
    skipped = [n for n in report.notes if "skipped" in n.message or "not analysed" in n.message]
    index = report.index if local == out_dir else f"{out_dir}/{Path(report.index).relative_to(local)}"
    click.echo(
        f"{for_terminal(str(index))}: {len(report.charts)} chart(s), {len(report.tables)} table(s)"
        + (f", {len(skipped)} note(s) about skipped charts" if skipped else "")
    )
