"""`logparse ingest`: parse logs into Parquet tables and print the post-mortem headline."""
from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from logparse.commands.options import engine_option, grammar_options
from logparse.escape import for_terminal, json_line
from logparse.headline import headline, render_headline
from logparse.pipeline import ingest
from logparse.tables import write_tables


def _json_default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _jsonl_sink(event: Mapping[str, Any]) -> None:
    sys.stdout.write(json_line(event, ensure_ascii=False, default=_json_default) + "\n")


@click.command("ingest")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@engine_option
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path),
              help="Write DIR/<kind>.parquet (one folder per log, DIR/<name>/, when given several).")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl", "json"]), default="table",
              show_default=True,
              help="table: readable summary; json: the summary as JSON; jsonl: every event as a JSON line.")
@click.option("--force", is_flag=True, help="Write into a non-empty --out folder logparse did not create.")
@grammar_options
def ingest_command(logs: tuple[str, ...], engine: str, out: Path | None, fmt: str, force: bool,
                   patterns: tuple[Path, ...], year: int | None) -> None:
    """Parse LOG (a file, a .gz, or - for stdin) into typed events and summarise it.

    Every line becomes exactly one event; lines no rule understands are kept as `unparsed`.
    With --out, each event kind is written as a Parquet table DIR/<kind>.parquet.
    """
    summaries = []
    for log in logs:
        sink = _jsonl_sink if fmt == "jsonl" else None
        result = ingest(log, engine=engine, year=year, patterns=patterns, on_event=sink)
        if out is not None:
            target = out if len(logs) == 1 else out / _folder_name(log)
            write_tables(result.tables, target, force=force)
        facts = headline(result)
        summaries.append(facts)
        if fmt == "table":
            if len(summaries) > 1:
                click.echo("")
            click.echo(render_headline(facts))
        elif fmt == "jsonl":
            click.echo(f"{for_terminal(result.source)}: {result.lines:,} events ({result.engine}, coverage "
                       f"{result.coverage:.1%})", err=True)
    if fmt == "json":
        payload = summaries[0] if len(summaries) == 1 else summaries
        click.echo(json.dumps(payload, indent=2, default=_json_default))


def _folder_name(log: str) -> str:
    name = "stdin" if log == "-" else Path(log).name
    for suffix in (".gz", ".log", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or "log"
