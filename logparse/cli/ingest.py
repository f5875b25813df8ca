"""`logparse ingest`: parse logs into Parquet tables and print each log's headline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from logparse.cli.options import chosen_tz, engine_option, grammar_options


@click.command("ingest")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@engine_option
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write DIR/<kind>.parquet. With several logs (a folder, a glob, several paths): a Parquet "
    "dataset DIR/run=<name>/kind=<kind>/part-NNNNN.parquet. DIR is replaced as a whole (your own "
    "files in it are kept) and appears whole or not at all; it is refused if it holds the tables "
    "of other logs. [default: none; the tables go to a scratch folder that is removed]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "jsonl", "json"]),
    default="table",
    show_default=True,
    help="table: the headline as text; json: the headline as JSON (several logs: a list); jsonl: every "
    "event as a JSON line on stdout, in line order, with `time` as ISO-8601 UTC (with --out the "
    "tables are written too).",
)
@click.option("--json", "as_json", is_flag=True, help="The headline as JSON (the same as --format json).")
@click.option(
    "--force",
    is_flag=True,
    help="Write into a non-empty --out folder logparse did not create, or replace "
    "the tables of other logs in it. [default: refuse]",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Threads [default: the number of cores]: a large log's blocks, or small logs side by side.",
)
@click.option(
    "--reference",
    is_flag=True,
    help="Read every line with the reference Python parser (slow; to "
    "cross-check the compiled core, which gives the same tables). [default: the core]",
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
    reference: bool,
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
    from logparse.headline import ingest_headlines, render_event_count, render_headline

    if as_json and fmt not in ("table", "json"):
        raise click.UsageError(f"--json is --format json; it cannot go with --format {fmt}")
    fmt = "json" if as_json else fmt
    printed: list[dict[str, Any]] = []

    def show(facts: dict[str, Any]) -> None:
        if fmt == "table":
            click.echo(("\n" if printed else "") + render_headline(facts))
        elif fmt == "jsonl":
            click.echo(render_event_count(facts), err=True)
        printed.append(facts)

    ingest_headlines(
        logs,
        out=out,
        force=force,
        engine=engine,
        year=year,
        tz=chosen_tz(),
        patterns=patterns,
        reference=reference,
        jobs=jobs,
        jsonl=sys.stdout if fmt == "jsonl" else None,
        on_headline=show,
        on_error=lambda message: click.echo(f"error: {message}", err=True),
    )
    if fmt == "json":
        click.echo(
            json.dumps(printed[0] if len(printed) == 1 and len(logs) == 1 else printed, indent=2, default=str)
        )
