"""`logparse unknown`: the templates of the lines no rule understood, and rules to start from."""

from __future__ import annotations

import json
from pathlib import Path

import click

from logparse.cli.options import chosen_tz, engine_option, grammar_options
from logparse.escape import for_terminal
from logparse.mining import mine_unparsed
from logparse.mining.rules import render_rules, suggest

EXAMPLE_WIDTH = 200


@click.command("unknown")
@click.argument("log", metavar="LOG")
@engine_option
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Show the N most frequent templates (0: all).",
)
@click.option(
    "--rule",
    "as_rules",
    is_flag=True,
    help="Print a ready-to-edit grammar file with one [[rule]] per template.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: readable list; json: the templates as JSON.",
)
@grammar_options
def unknown_command(
    log: str, engine: str, top: int, as_rules: bool, fmt: str, patterns: tuple[Path, ...], year: int | None
) -> None:
    """Cluster the lines of LOG that no rule understood into templates.

    Numbers, hex, paths, ids, addresses and times are masked, tokens that differ between lines
    become <*>. Each template is shown with its count, first line number and an example; the
    counts add up to the number of unparsed lines. With --rule, print a grammar file with one
    rule per template (sample and expected values filled in) that `logparse patterns check`
    accepts; edit it and pass it to `logparse ingest --patterns FILE`.
    """
    found = mine_unparsed(log, engine=engine, patterns=patterns, year=year, tz=chosen_tz())
    shown = found.templates if top == 0 else found.templates[:top]
    rest = found.templates[len(shown) :]
    for note in found.stats.notes:
        click.echo(f"note: {for_terminal(note)}", err=True)
    if as_rules:
        suggestions = suggest(shown, found.grammar, found.engine)
        click.echo(render_rules(suggestions, found.engine, found.source), nl=False)
        made = sum(not s.problem for s in suggestions)
        click.echo(
            f"{for_terminal(found.source)}: {made} rule(s) suggested for {len(shown)} template(s) "
            f"covering {sum(c.count for c in shown):,} of {found.unparsed:,} unparsed lines",
            err=True,
        )
        return
    if fmt == "json":
        payload = {
            "source": found.source,
            "engine": found.engine,
            "lines": found.lines,
            "unparsed": found.unparsed,
            "templates": [
                {"count": c.count, "first_line": c.first_line, "template": c.text(), "example": c.example.raw}
                for c in shown
            ],
            "more_templates": len(rest),
            "more_lines": sum(c.count for c in rest),
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(
        f"{for_terminal(found.source)}: {found.unparsed:,} of {found.lines:,} lines unparsed "
        f"({found.engine}); {len(found.templates):,} template(s)"
    )
    if not shown:
        return
    width = max(5, len(f"{shown[0].count:,}"))
    click.echo(f"{'count':>{width}}  {'line':>7}  template / example")
    for c in shown:
        click.echo(f"{c.count:>{width},}  {c.first_line:>7}  {_clip(for_terminal(c.text()))}")
        click.echo(f"{'':>{width}}  {'':>7}  e.g. {_clip(for_terminal(c.example.raw))}")
    if rest:
        click.echo(
            f"… and {len(rest):,} more template(s) with {sum(c.count for c in rest):,} line(s) "
            "(--top 0 shows all)"
        )


def _clip(text: str) -> str:
    return text if len(text) <= EXAMPLE_WIDTH else text[: EXAMPLE_WIDTH - 1] + "…"
