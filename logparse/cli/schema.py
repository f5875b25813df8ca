"""`logparse schema [KIND]`: the event tables' kinds, columns, types, units and meanings."""

from __future__ import annotations

from pathlib import Path

import click

from logparse.grammar import load_grammar
from logparse.store.describe import FORMATS, describe, render


@click.command("schema")
@click.argument("kind", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for a terminal, json for scripts, markdown for documents (the README appendix).",
)
@click.option(
    "--patterns",
    "patterns",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Extra grammar file whose kinds and columns are shown too (repeatable; also $LOGPARSE_PATTERNS).",
)
def schema_command(kind: str | None, fmt: str, patterns: tuple[Path, ...]) -> None:
    """Print the event kinds and their columns: type, unit, meaning (KIND: that kind only).

    The same text is in each Parquet column's metadata (`description`, `unit`) that `ingest --out`
    writes, and in the README appendix (`logparse schema --format markdown`).
    """
    click.echo(render(describe(load_grammar(patterns), kind), fmt), nl=False)
