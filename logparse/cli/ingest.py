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
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when a log was damaged: a truncated or corrupt .gz, a cut last line, invalid UTF-8, "
    "NUL bytes (a warning on stderr either way; its tables are still written).",
)
@grammar_options
def ingest_command(
    logs: tuple[str, ...],
    engine: str,
    out: Path | None,
    fmt: str,
    as_json: bool,
    force: bool,
    jobs: int | None,
    strict: bool,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Parse LOG (a file, a .gz, - for stdin, a folder or a glob of logs) into typed events and print
    its headline: engine, version, span, how its times were read, ranks, coverage, start-up figures
    (as `logparse summary` gives them), OOM, preemption and JIT counts, warnings, unknown fields.

    Several logs print one row each (engine, lines, coverage, span, problems) and each problem
    in full below; --format json gives every headline. Every line becomes exactly one event; lines
    no rule understands are kept as `unparsed`. A progress bar is drawn on stderr for large inputs
    when it is a terminal. Problems reading a log (a truncated .gz, ...) are warnings on stderr.
    Exit status 1 when some of several logs could not be read or their engine not detected (the
    others are still written), or with --strict when a log was damaged.
    """
    from logparse.errors import PartialFailure
    from logparse.headline import HeadlinePrinter, ingest_headlines  # polars: only when run

    if as_json and fmt not in ("table", "json"):
        raise click.UsageError(f"--json is --format json; it cannot go with --format {fmt}")
    printer = HeadlinePrinter("json" if as_json else fmt, several=len(logs) > 1, echo=click.echo)
    try:
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
            on_error=printer.skip,
        )
    except PartialFailure:
        printer.finish()  # the logs that were read still get their rows
        raise
    printer.finish()
    if strict and printer.damaged:
        raise click.ClickException(
            f"{printer.damaged} of {len(printer.printed)} log(s) had problems reading the input (--strict)"
        )
