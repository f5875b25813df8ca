"""`logparse follow`: watch a log as the engine writes it."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from logparse.cli.analysis import analysis_options
from logparse.cli.options import chosen_tz, engine_option, grammar_options

if TYPE_CHECKING:
    from logparse.follow.outputs import Reporter


@click.command("follow", short_help="Watch a log as the engine writes it: status, alerts, metrics.")
@click.argument("log", metavar="LOG")
@engine_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "jsonl"]),
    default="text",
    show_default=True,
    help="text: a live status on a terminal, one plain line per update when piped; jsonl: one "
    'JSON object per status update and per alert ("type": "status" | "alert"), then the summary.',
)
@click.option(
    "--on-alert",
    "on_alert",
    metavar="CMD",
    help="Run CMD (by the shell) for each alert, its JSON object on stdin.",
)
@click.option(
    "--serve-metrics",
    "serve",
    metavar="[HOST:]PORT",
    help="Serve /metrics (the engine's own metric names, types and labels, as `export "
    "openmetrics` gives them) on PORT, bound to 127.0.0.1 unless HOST is given.",
)
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the typed tables of every line read to DIR when following stops (as `ingest --out`).",
)
@click.option("--force", is_flag=True, help="Write into a non-empty --out folder logparse did not create.")
@click.option(
    "--drop",
    type=click.FloatRange(min=0, max=100, min_open=True),
    default=20.0,
    show_default=True,
    metavar="PCT",
    help="Alert when decode throughput falls more than PCT % below the phase's stable window.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0.01, max=10),
    default=0.2,
    show_default=True,
    metavar="S",
    help="How often (s) to look for appended lines when there are none.",
)
@click.option("--model-name", metavar="NAME", help="The metrics' `model_name` label (as for `export`).")
@analysis_options
@grammar_options
def follow_command(
    log: str,
    engine: str,
    fmt: str,
    on_alert: str | None,
    serve: str | None,
    out: Path | None,
    force: bool,
    drop: float,
    poll: float,
    model_name: str | None,
    concurrency: int | None,
    idle_gap: float | None,
    min_samples: int,
    min_duration: float,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Follow LOG as the engine writes it (as `tail -F`: rotation and truncation followed; `-` reads
    stdin, e.g. `docker logs -f NAME | logparse follow -`), with a live status, alerts (OOM,
    preemption bursts, stalls, throughput drops, restarts, start-up failures, new warnings) and,
    with --serve-metrics, a /metrics page for Prometheus.

    \b
    Following ends when the file is deleted, stdin ends, on SIGTERM or Ctrl-C; then the post-mortem
    of every line read is printed (what `summary` says of them) and the exit status is 0.
    """
    from logparse.follow.run import follow_log, open_followed
    from logparse.store import check_writable

    if out is not None:
        check_writable(out)
    stop = threading.Event()
    with _stopped_by_signals(stop) as why:
        stream = open_followed(log, stop=stop, poll_s=poll)
        reporter = _reporter(fmt, log, on_alert, serve)
        try:
            result = follow_log(
                stream,
                reporter,
                engine=engine,
                year=year,
                tz=chosen_tz(),
                patterns=patterns,
                out=out,
                force=force,
                drop=drop / 100,
                model_name=model_name,
                metrics=serve is not None,
                analysis_options={
                    "concurrency": concurrency,
                    "idle_gap_s": idle_gap,
                    "min_samples": min_samples,
                    "min_duration_s": min_duration,
                },
            )
        finally:
            reporter.close()
            if reporter.server is not None:
                reporter.server.close()
    _print_end(result, fmt, why, out)


def _reporter(fmt: str, log: str, on_alert: str | None, serve: str | None) -> Reporter:
    from logparse.follow.outputs import AlertCommand, JsonlView, PlainView, Reporter, TerminalView

    view: PlainView | TerminalView
    if fmt == "jsonl":
        view = JsonlView(sys.stdout, sys.stderr)
    elif sys.stdout.isatty():
        from rich.console import Console

        view = TerminalView(Console(file=sys.stdout), log)
    else:
        view = PlainView(sys.stdout, sys.stderr)
    server = None
    if serve is not None:
        from logparse.follow.metrics_server import MetricsServer, parse_address

        server = MetricsServer(*parse_address(serve))
        click.echo(f"logparse follow: serving http://{server.address}/metrics", err=True)
    command = AlertCommand(on_alert, sys.stderr) if on_alert else None
    return Reporter(view, command, server)


@contextmanager
def _stopped_by_signals(stop: threading.Event) -> Iterator[list[str]]:
    """SIGTERM and Ctrl-C stop following (a second Ctrl-C interrupts at once); the list yielded
    names the signal that did."""
    why: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield why
        return

    def handler(signum: int, frame: object) -> None:
        why.append(signal.Signals(signum).name)
        stop.set()
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    before = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield why
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


def _print_end(result: object, fmt: str, why: list[str], out: Path | None) -> None:
    from logparse.analysis.summary import render_summary, summary_dict
    from logparse.escape import for_terminal, json_default, json_line

    ended = {"SIGINT": "stopped (Ctrl-C)", "SIGTERM": "stopped (SIGTERM)"}.get(why[0] if why else "", "")
    notes = getattr(result, "notes", [])
    reason = ended or (notes[-1] if notes else "ended")
    source = for_terminal(getattr(result, "source", ""))
    analysis = getattr(result, "analysis", None)
    lines, alerts = getattr(result, "lines", 0), getattr(result, "alerts", 0)
    click.echo(f"logparse follow: {source}: {reason}; {lines:,} lines read, {alerts} alert(s)", err=True)
    cpu_s, wall_s = getattr(result, "cpu_s", 0.0), getattr(result, "wall_s", 0.0)
    if wall_s > 0:
        click.echo(
            f"logparse follow: used {cpu_s:,.1f} CPU-s in {wall_s:,.1f} s ({cpu_s / wall_s:.0%} of a core), "
            f"{getattr(result, 'analysis_cpu_s', 0.0):,.1f} CPU-s of it in "
            f"{getattr(result, 'analyses', 0):,} live analyses",
            err=True,
        )
    if out is not None and analysis is not None:
        click.echo(f"logparse follow: wrote the tables to {for_terminal(str(out))}", err=True)
    if analysis is None:
        return
    summary = summary_dict(analysis)
    if fmt == "jsonl":
        click.echo(json_line({"type": "summary", **summary}, ensure_ascii=False, default=json_default))
    else:
        click.echo(render_summary(summary))
