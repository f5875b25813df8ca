"""`logparse explain [TOPIC]`: what the columns and marks of `summary` and `windows` mean."""

from __future__ import annotations

import click

from logparse.analysis.explain import explain


@click.command("explain")
@click.argument("topic", required=False, metavar="[TOPIC|all]")
def explain_command(topic: str | None) -> None:
    """Explain a column or rule of `summary` / `windows` (cv, ctx/req, ~, +90s, trusted, the
    stable-window rule, ...): without TOPIC, the list of topics; `all` prints every one."""
    click.echo(explain(topic), nl=False)
