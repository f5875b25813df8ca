"""The `logparse` command line: thin click commands that call library functions.

Subcommands live next to the code they drive and are imported only when invoked, so
`logparse ingest` never pays for altair or the benchmark readers.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from logparse.errors import EngineNotDetected, LogparseError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# command name -> (module, attribute, one-line help). Modules are imported on first use.
LAZY_COMMANDS: dict[str, tuple[str, str, str]] = {
    "ingest": ("logparse.commands.ingest", "ingest_command", "Parse logs into typed Parquet tables; print a summary."),
    "patterns": ("logparse.commands.patterns", "patterns_group", "Check the grammar files."),
    "detect": ("logparse.commands.detect", "detect_command", "Score which engine wrote a log."),
    "summary": ("logparse.analysis.cli", "summary_command", "Post-mortem of one log, or of each run of a dataset."),
    "windows": ("logparse.analysis.cli", "windows_command", "Phases and stable decode windows."),
    "compare": ("logparse.analysis.cli", "compare_command", "Side-by-side table of several logs."),
    "emulate": ("logparse.emulate.cli", "emulate_command", "Render a synthetic engine log with its truth."),
    "bench": ("logparse.bench.cli", "bench_command", "SLO matrix, capacity, spec break-even of client results."),
    "reconcile": ("logparse.bench.cli", "reconcile_command", "Check a client result against a log."),
    "report": ("logparse.report.cli", "report_command", "Write charts and an offline HTML report."),
    "unknown": ("logparse.mining.cli", "unknown_command", "Cluster the lines no rule understood."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when listed or run."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in LAZY_COMMANDS if self._load(name) is not None)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The one-line help kept here: listing commands imports none of them.
        rows = [(name, LAZY_COMMANDS[name][2]) for name in sorted(LAZY_COMMANDS) if _importable(name)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._load(cmd_name)

    def _load(self, name: str) -> click.Command | None:
        target = LAZY_COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr, _ = target
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                return None  # that part of logparse is not built yet
            raise
        command = getattr(module, attr, None)
        return command if isinstance(command, click.Command) else None

    def invoke(self, ctx: click.Context) -> Any:
        # The one place where library errors become CLI errors (also under CliRunner).
        try:
            return super().invoke(ctx)
        except EngineNotDetected as exc:
            raise click.UsageError(str(exc)) from None
        except LogparseError as exc:
            raise click.ClickException(str(exc)) from None


def _importable(name: str) -> bool:
    return importlib.util.find_spec(LAZY_COMMANDS[name][0]) is not None


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="logparse")
def cli() -> None:
    """Mine vLLM and SGLang server logs: typed events, post-mortems, charts.

    \b
    Start with:
      logparse ingest server.log            parse and print the post-mortem summary
      logparse summary server.log           phases, stable windows, diagnostics
      logparse patterns check               validate the grammars
    """


def main(argv: list[str] | None = None) -> None:
    """Run the CLI (the `logparse` console script)."""
    try:
        cli.main(args=argv, prog_name="logparse")
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(141)
