"""`logparse detect`: which engine wrote each log, with the score of every engine."""
from __future__ import annotations

import itertools

import click

from logparse.detect import HEAD_LINES, scores
from logparse.grammar import load_grammar
from logparse.reader import read_lines


@click.command("detect")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
def detect_command(logs: tuple[str, ...]) -> None:
    """Print each engine's score in [0, 1] for every LOG, best first."""
    grammar = load_grammar()
    for log in logs:
        head = [text for _, text in itertools.islice(read_lines(log), HEAD_LINES * 2)]
        ranked = sorted(scores(grammar, head).items(), key=lambda kv: (-kv[1], kv[0]))
        shown = "  ".join(f"{name} {value:.2f}" for name, value in ranked)
        click.echo(f"{log}: {shown}")
