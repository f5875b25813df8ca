"""`logparse detect`: which engine wrote each log, with the score of every engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from logparse.cli.options import patterns_option
from logparse.errors import EngineNotDetected
from logparse.escape import for_terminal
from logparse.grammar import Grammar, load_grammar
from logparse.headline import BLANK_LINES_ONLY, EMPTY_FILE
from logparse.ingest.detect import HEAD_LINES, detect_engine, scores
from logparse.ingest.reader import ReadStats, read_lines


def head_lines(log: str, limit: int = HEAD_LINES) -> tuple[list[str], str | None]:
    """The lines `ingest` detects the engine from (its first `limit` that are not blank; the
    blank ones are left out, scoring skips them), and why there is nothing to detect from:
    `EMPTY_FILE`, `BLANK_LINES_ONLY` or None.

    A log of blank lines is read to its end: whether a line with text follows decides.
    """
    head: list[str] = []
    seen = 0
    lines = read_lines(log, ReadStats())
    try:
        for _, text in lines:
            seen += 1
            if text.strip():
                head.append(text)
                if len(head) >= limit:
                    break
    finally:
        lines.close()  # type: ignore[attr-defined]
    if head:
        return head, None
    return head, BLANK_LINES_ONLY if seen else EMPTY_FILE


def detection(grammar: Grammar, log: str) -> dict[str, Any]:
    """`log`, the engine `ingest --engine auto` would pick (None: it would ask for --engine, or the
    log holds no text), every engine's score, and `no_content` (see `head_lines`)."""
    head, why = head_lines(log)
    try:
        engine: str | None = None if why else detect_engine(grammar, head, name=for_terminal(log))[0]
    except EngineNotDetected:
        engine = None
    return {"log": log, "engine": engine, "scores": scores(grammar, head), "no_content": why}


@click.command("detect")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print a JSON list, one {"log", "engine", "scores", "no_content"} per LOG; "engine" is '
    "null when ingest would ask for --engine.",
)
@patterns_option
def detect_command(logs: tuple[str, ...], as_json: bool, patterns: tuple[Path, ...]) -> None:
    """Print each engine's score in [0, 1] for every LOG, best first.

    The scores come from the lines ingest detects the engine from: the first few hundred that are
    not blank. An empty log, or one of blank lines only, is said to be so, and claims no engine.
    """
    grammar = load_grammar(patterns)
    found = [detection(grammar, log) for log in logs]
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    for item in found:
        ranked = sorted(item["scores"].items(), key=lambda kv: (-kv[1], kv[0]))
        shown = "  ".join(f"{name} {value:.2f}" for name, value in ranked)
        if item["no_content"]:
            shown = f"{item['no_content']}, no engine"
        click.echo(f"{for_terminal(item['log'])}: {shown}")
