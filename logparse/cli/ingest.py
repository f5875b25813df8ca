"""`logparse ingest`: parse logs into Parquet tables and print each log's headline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from logparse.cli.options import chosen_tz, engine_option, grammar_options, ingest_options


@click.command("ingest")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@engine_option
@ingest_options
@grammar_options
def ingest_command(
    logs: tuple[str, ...],
    engine: str,
    out: Path | None,
    fmt: str,
    as_json: bool,
    force: bool,
    jobs: int | None,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Parse LOG (a file, a .gz, - for stdin, a folder or a glob of logs) into typed events and print
    its headline: engine, version, span, how its times were read, ranks, coverage, start-up figures
    (as `logparse summary` gives them), OOM, preemption and JIT counts, warnings, unknown fields.

    Every line becomes exactly one event; lines no rule understands are kept as `unparsed`. A
    progress bar is drawn on stderr for large inputs when it is a terminal. Exit status 1 when
    some of several logs could not be read (the others are still written).
    """
    from logparse.headline import HeadlinePrinter, ingest_headlines  # polars: only when run

    if as_json and fmt not in ("table", "json"):
        raise click.UsageError(f"--json is --format json; it cannot go with --format {fmt}")
    printer = HeadlinePrinter("json" if as_json else fmt, several=len(logs) > 1, echo=click.echo)
    ingest_headlines(
        logs,
        out=out,
        force=force,
        engine=engine,
        year=year,
        tz=chosen_tz(),
        patterns=patterns,
        jobs=jobs,
        jsonl=sys.stdout if printer.fmt == "jsonl" else None,
        on_headline=printer.show,
        on_error=lambda message: click.echo(f"error: {message}", err=True),
    )
    printer.finish()
