"""Options shared by several commands."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def engine_option(func: F) -> F:
    """`--engine auto|vllm|sglang|…`: which grammar to use."""
    return click.option(
        "--engine", "-e", default="auto", show_default=True, metavar="auto|vllm|sglang",
        help="Engine that wrote the log; auto detects it from the first lines.",
    )(func)


def grammar_options(func: F) -> F:
    """`--patterns FILE.toml` (repeatable) and `--year`."""
    func = click.option(
        "--patterns", "patterns", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Extra grammar file with your own rules, on top of the built-in ones (repeatable; also "
             "$LOGPARSE_PATTERNS). [default: none]",
    )(func)
    return click.option(
        "--year", type=click.IntRange(1970, 2200), default=None,
        help="Year for year-less vLLM timestamps when the log shows none. [default: the year of the "
             "file's modification time]",
    )(func)


def slo_options(func: F) -> F:
    """`--slo-ttft-ms`, `--slo-tps`, `--think-s`: the client-side SLOs and think time."""
    func = click.option(
        "--think-s", type=click.FloatRange(min=0), default=45.0, show_default=True,
        help="User think time Z in s for N = C_max x (1 + Z / L).",
    )(func)
    func = click.option(
        "--slo-tps", type=click.FloatRange(min=0, min_open=True), default=15.0, show_default=True,
        help="Per-user output rate SLO in tok/s (higher is better).",
    )(func)
    return click.option(
        "--slo-ttft-ms", type=click.FloatRange(min=0, min_open=True), default=1000.0, show_default=True,
        help="TTFT SLO in ms (lower is better).",
    )(func)
