"""The `logparse` command line: thin click commands that call library functions.

Subcommands live next to the code they drive and are imported only when invoked, so
`logparse ingest` never pays for altair or the benchmark readers.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import click

from logparse import __version__
from logparse.errors import EngineNotDetected, LogparseError, PartialFailure

# The status of a process killed by SIGPIPE (128 + 13), what `| head` users and shells expect.
BROKEN_PIPE_EXIT = 141

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# command name -> (module, attribute, one-line help). Modules are imported on first use.
LAZY_COMMANDS: dict[str, tuple[str, str, str]] = {
    "ingest": (
        "logparse.cli.ingest",
        "ingest_command",
        "Parse logs into typed Parquet tables; print each headline.",
    ),
    "patterns": ("logparse.cli.patterns", "patterns_group", "Check the grammar files."),
    "detect": ("logparse.cli.detect", "detect_command", "Score which engine wrote a log."),
    "summary": (
        "logparse.cli.analysis",
        "summary_command",
        "Post-mortem of one log, or of each run of a dataset.",
    ),
    "windows": ("logparse.cli.analysis", "windows_command", "Phases and stable decode windows."),
    "compare": ("logparse.cli.analysis", "compare_command", "Side-by-side table of several logs."),
    "emulate": ("logparse.cli.emulate", "emulate_command", "Render a synthetic engine log with its truth."),
    "bench": (
        "logparse.cli.bench",
        "bench_command",
        "SLO matrix, capacity, spec break-even of client results.",
    ),
    "gate": ("logparse.cli.gate", "gate_command", "Fail when a run regressed against its baselines."),
    "reconcile": ("logparse.cli.bench", "reconcile_command", "Check a client result against a log."),
    "report": ("logparse.cli.report", "report_command", "Write charts and an offline HTML report."),
    "unknown": ("logparse.cli.unknown", "unknown_command", "Cluster the lines no rule understood."),
    "export": (
        "logparse.cli.export",
        "export_group",
        "Export runs as the engines' Prometheus metrics, grammars as lnav formats.",
    ),
    "schema": (
        "logparse.cli.schema",
        "schema_command",
        "The event kinds and columns: types, units, meanings.",
    ),
    "explain": ("logparse.cli.explain", "explain_command", "What the summary's and windows' columns mean."),
    "follow": (
        "logparse.cli.follow",
        "follow_command",
        "Watch a log as the engine writes it: status, alerts, metrics.",
    ),
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

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        # `logparse --help | head -1`: the group's own help and version are printed while parsing.
        with _quiet_broken_pipe():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        # The one place where library errors become CLI errors (also under CliRunner).
        try:
            with _quiet_broken_pipe():
                return super().invoke(ctx)
        except EngineNotDetected as exc:
            raise click.UsageError(str(exc)) from None
        except PartialFailure as exc:
            click.echo(f"Error: {exc}", err=True)
            raise click.exceptions.Exit(1) from None
        except LogparseError as exc:
            raise click.ClickException(str(exc)) from None


@contextlib.contextmanager
def _quiet_broken_pipe() -> Iterator[None]:
    """Turn a closed stdout (`| head -1`) into a quiet exit with status 141.

    Click would catch the EPIPE itself and exit 1, which reads as a failure; `Exit` is the one
    way to give click the status to exit with.
    """
    try:
        yield
    except BrokenPipeError:
        _stdout_to_devnull()
        raise click.exceptions.Exit(BROKEN_PIPE_EXIT) from None


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so the flush at exit has nowhere to fail (no 'Exception ignored')."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (CliRunner): nothing will be flushed to a closed pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _importable(name: str) -> bool:
    return importlib.util.find_spec(LAZY_COMMANDS[name][0]) is not None


EXIT_CODES = f"""\b
Exit status:
  0    done
  1    an error (no such file, a broken grammar...), or some of several inputs could not be read
  2    a usage error, or a log whose engine could not be detected: pass --engine
  {BROKEN_PIPE_EXIT}  stdout was closed before the output ended (e.g. | head)
"""


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS, epilog=EXIT_CODES)
# The version given, not looked up: importlib.metadata would be most of `--version`'s time.
@click.version_option(version=__version__, prog_name="logparse")
def cli() -> None:
    """Mine vLLM and SGLang server logs: typed events, post-mortems, charts.

    \b
    Start with:
      logparse ingest server.log            parse; print the headline (engine, coverage, start-up)
      logparse summary server.log           the post-mortem: phases, stable windows, diagnostics
      logparse patterns check               validate the grammars
    """


def main(argv: list[str] | None = None) -> None:
    """Run the CLI (the `logparse` console script)."""
    pipe_closed = _watch_sigpipe()
    try:
        try:
            cli.main(args=argv, prog_name="logparse")
        finally:
            sys.stdout.flush()  # text still buffered meets the closed pipe here, not at exit
    except BrokenPipeError:
        _stdout_to_devnull()
        sys.exit(BROKEN_PIPE_EXIT)
    except SystemExit as exc:
        if exc.code in (None, 0) and pipe_closed.is_set() and _stdout_reader_gone():
            sys.exit(BROKEN_PIPE_EXIT)
        raise


def _watch_sigpipe() -> threading.Event:
    """An event set when a write meets a closed pipe.

    A single write larger than the pipe that the reader closes midway returns a short count, which
    `print` and `click.echo` drop without an error: the output was cut, yet nothing raised. The
    kernel still sends SIGPIPE, which Python otherwise ignores; a handler that only records it keeps
    writes returning EPIPE as before.
    """
    closed = threading.Event()
    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, lambda signum, frame: closed.set())
    return closed


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (so SIGPIPE was about stdout, not some socket)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return True  # no poll() here: trust the signal
