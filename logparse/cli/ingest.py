"""`logparse ingest`: parse logs into Parquet tables and print each log's headline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from logparse.cli.options import chosen_tz, engine_option, grammar_options, ingest_options


@click.command("ingest")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@engine_option
@ingest_options
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when a log was damaged: a truncated or corrupt .gz, a cut last line, invalid UTF-8, "
    "NUL bytes (a warning on stderr either way; its tables are still written).",
)
@click.option(
    "--executor",
    type=click.Choice(["threads", "ray"]),
    default="threads",
    show_default=True,
    help="threads: this machine (--jobs); ray: one Ray task per log on the cluster at --ray-address or "
    "$RAY_ADDRESS, else on a local Ray started for the call (pip install 'logparse[ray]'). Ray, or an "
    "--out URI, writes the dataset run by run: a run appears whole (its _ingest.json last), a rerun "
    "skips the complete runs (--force redoes them), a log that fails is a row of the run table.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="The Ray cluster to run on (ray://host:10001, host:6379, auto). [default: $RAY_ADDRESS, else "
    "a local Ray]",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="--executor ray: at most N runs at a time. [default: as many as the cluster schedules]",
)
@grammar_options
def ingest_command(
    logs: tuple[str, ...],
    engine: str,
    out: Path | str | None,
    fmt: str,
    as_json: bool,
    force: bool,
    jobs: int | None,
    strict: bool,
    executor: str,
    ray_address: str | None,
    concurrency: int | None,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Parse LOG (a file, a .gz, - for stdin, a folder or a glob of logs, or a URI of object storage:
    s3://bucket/key, a prefix or a glob of keys, gs://, hdfs://, file://) into typed events and print
    its headline: engine, version, span, how its times were read, ranks, coverage, start-up figures
    (as `logparse summary` gives them), OOM, preemption and JIT counts, warnings, unknown fields.

    Several logs print one row each (engine, lines, coverage, span, problems) and each problem
    in full below; --format json gives every headline. Every line becomes exactly one event; lines
    no rule understands are kept as `unparsed`. A progress bar is drawn on stderr for large inputs
    when it is a terminal. Problems reading a log (a truncated .gz, ...) are warnings on stderr.
    Exit status 1 when some of several logs could not be read or their engine not detected (the
    others are still written), or with --strict when a log was damaged.

    --executor ray (or an --out URI) writes the dataset run by run and prints the run table (--format
    json: as JSON): each run's status (done, skipped: already complete, failed, not run), engine,
    lines, coverage, MB read, seconds and problems; a progress line (runs done, failed, remaining,
    MB/s) on a terminal.
    """
    from logparse.errors import PartialFailure
    from logparse.headline import HeadlinePrinter, ingest_headlines  # polars: only when run
    from logparse.store.uri import is_uri

    if as_json and fmt not in ("table", "json"):
        raise click.UsageError(f"--json is --format json; it cannot go with --format {fmt}")
    if executor == "ray" or is_uri(str(out or "")):
        _fleet(
            logs,
            out,
            fmt="json" if as_json else fmt,
            executor=executor,
            address=ray_address,
            concurrency=concurrency or jobs,
            force=force,
            strict=strict,
            engine=engine,
            year=year,
            patterns=patterns,
        )
        return
    if ray_address or concurrency:
        raise click.UsageError("--ray-address and --concurrency go with --executor ray")
    assert not isinstance(out, str)
    printer = HeadlinePrinter("json" if as_json else fmt, several=len(logs) > 1, echo=click.echo)
    try:
        ingest_headlines(
            logs,
            out=out,
            force=force,
            engine=engine,
            year=year,
            tz=chosen_tz(),
            patterns=patterns,
            jobs=jobs,
            jsonl=sys.stdout if printer.fmt == "jsonl" else None,
            on_headline=printer.show,
            on_error=printer.skip,
        )
    except PartialFailure:
        printer.finish()  # the logs that were read still get their rows
        raise
    printer.finish()
    if strict and printer.damaged:
        raise click.ClickException(
            f"{printer.damaged} of {len(printer.printed)} log(s) had problems reading the input (--strict)"
        )


def _fleet(
    logs: tuple[str, ...],
    out: Path | str | None,
    *,
    fmt: str,
    executor: str,
    address: str | None,
    concurrency: int | None,
    force: bool,
    strict: bool,
    engine: str,
    year: int | None,
    patterns: tuple[Path, ...],
) -> None:
    """`ingest --executor ray` or `--out URI`: the runs written one by one, then their table."""
    import contextlib
    import json

    from logparse.fleet import DONE, SKIPPED, fleet_failure, plan_runs, run_tasks
    from logparse.fleet.progress import FleetProgress, progress_wanted
    from logparse.fleet.render import render_results, results_json

    if out is None:
        raise click.UsageError("a fleet ingest writes a dataset: give --out DIR or --out URI")
    if fmt == "jsonl":
        raise click.UsageError(
            "--format jsonl streams one log's events; a fleet gives --format table or json"
        )
    tasks = plan_runs(
        logs, str(out), engine=engine, year=year, tz=chosen_tz(), patterns=patterns, force=force
    )
    bar = FleetProgress(len(tasks)) if progress_wanted() else None
    try:
        # Ray prints its own notes (a worker died, ...) on stdout, which is the run table's here.
        with contextlib.redirect_stdout(sys.stderr):
            results = run_tasks(
                tasks, executor=executor, address=address, concurrency=concurrency, on_done=bar
            )
    finally:
        if bar is not None:
            bar.close()
    click.echo(
        json.dumps(results_json(results), indent=2) if fmt == "json" else render_results(results, str(out))
    )
    problem = fleet_failure(results)
    if problem is not None:
        raise problem
    damaged = sum(bool(r.problems) for r in results if r.status in (DONE, SKIPPED))
    if strict and damaged:
        raise click.ClickException(
            f"{damaged} of {len(results)} log(s) had problems reading the input (--strict)"
        )
