"""`logparse summary`, `logparse windows`, `logparse compare`: the post-mortem commands."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from logparse.cli.options import (
    OutTarget,
    chosen_tz,
    engine_option,
    grammar_options,
    local_inputs,
    output_target,
)

F = TypeVar("F", bound=Callable[..., Any])
# Kept free of imports: `--help` must not load the analysis to print it.
EXPLAIN_EPILOG = (
    "What the columns and marks mean (cv, ctx/req, ~ estimated, ? guessed, +90s, trusted) and the "
    "stable-window rule: logparse explain [TOPIC], e.g. logparse explain window."
)


def analysis_options(func: F) -> F:
    """`--concurrency`, `--idle-gap`, `--min-samples`, `--min-duration`."""
    func = click.option(
        "--min-duration",
        type=click.FloatRange(min=0),
        default=20.0,
        show_default=True,
        help="A stable window shorter than this (s) is reported as not trusted.",
    )(func)
    func = click.option(
        "--min-samples",
        type=click.IntRange(min=1),
        default=5,
        show_default=True,
        help="A stable window with fewer samples is reported as not trusted.",
    )(func)
    func = click.option(
        "--idle-gap",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="Silence (s) read as idle between phases [default: a few stats intervals].",
    )(func)
    return click.option(
        "--concurrency",
        "-n",
        type=click.IntRange(min=1),
        default=None,
        help="N, the requests of every phase [default: the plateau of running requests].",
    )(func)


def out_option(func: F) -> F:
    """`--out DIR` and `--force`."""
    func = click.option(
        "--force", is_flag=True, help="Write into a non-empty --out folder logparse did not create."
    )(func)
    return click.option(
        "--out",
        "-o",
        type=OutTarget(),
        default=None,
        help="Also write the tables as DIR/<table>.parquet (DIR may be a URI of object storage: s3://...).",
    )(func)


def _analyze(
    log: str, engine: str, patterns: tuple[Path, ...], year: int | None, opts: dict[str, Any]
) -> tuple[Any, str | None]:
    """The `Analysis` of `log`, and why it names no engine (`headline.EMPTY_FILE` or
    `BLANK_LINES_ONLY`, as the ingest headline says) or None when it has content."""
    from logparse.analysis.analyze import analyze
    from logparse.errors import LogparseError
    from logparse.headline import no_content_of
    from logparse.ingest import ingest

    try:
        result = ingest(log, engine=engine, year=year, tz=chosen_tz(), patterns=patterns)
        analysis = analyze(
            result.tables,
            engine=result.engine,
            source=result.source,
            read_stats=result.stats,
            times=result.times,
            grammar=result.grammar,
            **opts,
        )
    except LogparseError:
        raise
    except Exception as exc:  # a bug: say so in one line instead of a traceback
        if os.environ.get("LOGPARSE_DEBUG"):
            raise
        raise click.ClickException(
            f"{log}: internal error while analysing ({type(exc).__name__}: {exc}); "
            "set LOGPARSE_DEBUG=1 for the traceback"
        ) from None
    # An empty or blank log was read with a placeholder grammar: its engine is no finding.
    no_content = no_content_of(result.lines, result.scores)
    return analysis, no_content


def _without_engine(summary: dict[str, Any], no_content: str | None) -> dict[str, Any]:
    """`summary` of a log that names no engine (`no_content` says why): ``engine`` null and
    ``no_content`` after it. Any other log's summary is returned as it is (the same as a
    dataset run's)."""
    if not no_content:
        return summary
    out: dict[str, Any] = {}
    for key, value in summary.items():
        out[key] = None if key == "engine" else value
        if key == "engine":
            out["no_content"] = no_content
    return out


def _render_summary(summary: dict[str, Any]) -> str:
    """`render_summary`, its header saying `- (empty file)` instead of an engine the log never named."""
    from logparse.analysis.summary import render_summary

    why = summary.get("no_content")
    return render_summary({**summary, "engine": f"- ({why})"} if why else summary)


def _opts(
    concurrency: int | None,
    idle_gap: float | None,
    min_samples: int,
    min_duration: float,
    segment: int | None = None,
) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "concurrency": concurrency,
        "idle_gap_s": idle_gap,
        "min_samples": min_samples,
        "min_duration_s": min_duration,
    }
    return opts if segment is None else {**opts, "segment": segment}


def segment_option(func: F) -> F:
    """`--segment K`: one engine start of a log that holds several."""
    return click.option(
        "--segment",
        "segment",
        type=click.IntRange(min=1),
        default=None,
        metavar="K",
        help="Analyse only engine start K (1-based) of a log that holds several (restarts); "
        "[default: every start, each on its own].",
    )(func)


@click.command(
    "summary", short_help="Post-mortem of one log, or of each run of a dataset.", epilog=EXPLAIN_EPILOG
)
@click.argument("log", metavar="LOG")
@engine_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print the summary as JSON (a dataset: {"runs": [...], "fleet": [...]}).',
)
@click.option(
    "--brief",
    is_flag=True,
    help="A dataset: print the fleet table only, not each run's summary (text output; ignored for one log).",
)
@out_option
@segment_option
@analysis_options
@grammar_options
def summary_command(
    log: str,
    engine: str,
    as_json: bool,
    brief: bool,
    out: Path | str | None,
    force: bool,
    segment: int | None,
    concurrency: int | None,
    idle_gap: float | None,
    min_samples: int,
    min_duration: float,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Post-mortem of LOG: startup, phases, stable decode windows, prefill, spec decoding, diagnostics.

    LOG is a log file, a folder of its tables (`logparse ingest LOG --out DIR`), or a dataset folder
    of several logs (`logparse ingest DIR --out DATASET`). For a dataset, a fleet table with one row
    per run comes first, then each run's summary; a run that cannot be analysed says why in its row
    without stopping the others, and the exit status is then 1 (as for `ingest`). A dataset of one
    run is still a dataset: --json has the same shape whatever the number of runs. --out DIR writes DIR/fleet.parquet, DIR/fleet.csv and, per
    run, DIR/<run>/summary.json with its tables. A log holding several engine starts (a restart)
    is split into one segment per start, each analysed on its own (--segment K for one).
    """
    from logparse.analysis.fleet import dataset_runs
    from logparse.analysis.summary import summary_dict
    from logparse.store import write_tables

    shown = log
    (log,) = local_inputs([log], stream_files=True)
    out, publish = output_target(out)
    if dataset_runs(log):
        if segment is not None:
            raise click.UsageError(
                "--segment picks an engine start of one log; LOG is a dataset of several runs"
            )
        _fleet_summary(
            Path(log),
            shown=shown,
            as_json=as_json,
            brief=brief,
            out=out,
            force=force,
            patterns=patterns,
            opts=_opts(concurrency, idle_gap, min_samples, min_duration),
        )
        publish()
        return
    opts = _opts(concurrency, idle_gap, min_samples, min_duration, segment)
    analysis, no_content = _analyze(log, engine, patterns, year, opts)
    summary = _without_engine(summary_dict(analysis), no_content)
    if out is not None:
        write_tables(
            analysis.frames(),
            out,
            force=force,
            sources=[log],
            files={"summary.json": json.dumps(summary, indent=2) + "\n"},
        )
        publish()
    click.echo(json.dumps(summary, indent=2) if as_json else _render_summary(summary))


def _fleet_summary(
    dataset: Path,
    *,
    shown: str,
    as_json: bool,
    brief: bool,
    out: Path | None,
    force: bool,
    patterns: tuple[Path, ...],
    opts: dict[str, Any],
) -> None:
    """`summary DATASET`: every run analysed (see `logparse.analysis.fleet`), the fleet table first."""
    import sys
    from contextlib import ExitStack

    from logparse.analysis.fleet import (
        analyze_runs,
        dataset_runs,
        fleet_json,
        fleet_rows,
        previous_out_names,
        progress_wanted,
        remove_stale_runs,
        render_fleet,
        write_fleet,
        write_run,
    )
    from logparse.analysis.summary import render_summary
    from logparse.escape import for_terminal
    from logparse.store import output_folder as table_folder

    def on_start(k: int, n: int, name: str) -> None:
        click.echo(f"run {k}/{n}: {for_terminal(name)}", err=True)

    progress = progress_wanted(len(dataset_runs(dataset)), sys.stderr)
    runs = []
    previous = [] if out is None else previous_out_names(out)
    with ExitStack() as stack:
        tmp = None
        if out is not None:
            tmp = stack.enter_context(table_folder(out, force=force, sources=[str(dataset)]))
        debug = bool(os.environ.get("LOGPARSE_DEBUG"))
        for run in analyze_runs(
            dataset, patterns=patterns, raise_internal=debug, on_start=on_start if progress else None, **opts
        ):
            if tmp is not None:
                write_run(tmp, run)
            run.analysis = None  # its tables are written: keep only the summary
            runs.append(run)
        if all(run.error is not None for run in runs):  # raised inside: --out stays as it was
            shown = "; ".join(f"{for_terminal(r.run)}: {for_terminal(r.error)}" for r in runs[:3])
            raise click.ClickException(
                f"none of the {len(runs)} runs of {for_terminal(shown)} "
                f"could be analysed ({shown}{'; ...' if len(runs) > 3 else ''})"
            )
        rows = fleet_rows(runs)
        if tmp is not None:
            write_fleet(tmp, rows)
    if out is not None:
        remove_stale_runs(out, previous, runs)
    failed = sum(run.error is not None for run in runs)
    if failed:  # as `ingest`: everything is printed, and the exit status still says a run failed
        click.echo(f"{failed} of {len(runs)} runs could not be analysed (see their rows)", err=True)
        click.get_current_context().call_on_close(lambda: sys.exit(1))
    if as_json:
        click.echo(json.dumps(fleet_json(runs, rows), indent=2))
        return
    parts = [f"{for_terminal(shown)}: {len(runs)} runs", "", render_fleet(rows)]
    if not brief:
        for run in runs:
            if run.summary is not None:
                title = f"== run {for_terminal(run.run)} "
                parts += ["", "", title + "=" * max(3, 100 - len(title)), render_summary(run.summary)]
    click.echo("\n".join(parts))


@click.command("windows", short_help="Phases and stable decode windows.", epilog=EXPLAIN_EPILOG)
@click.argument("log", metavar="LOG")
@engine_option
@click.option("--json", "as_json", is_flag=True, help="Print the phases (with their windows) as JSON.")
@out_option
@segment_option
@analysis_options
@grammar_options
def windows_command(
    log: str,
    engine: str,
    as_json: bool,
    out: Path | str | None,
    force: bool,
    segment: int | None,
    concurrency: int | None,
    idle_gap: float | None,
    min_samples: int,
    min_duration: float,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """The phases of LOG and the stretch of each in which all N requests decode undisturbed.

    Figures that are not exact are marked (~ estimated, ? guessed) and explained under the
    table; lines of a family that no rule typed, and restarts, are warned about.
    """
    from logparse.analysis.summary import input_warnings, render_windows, summary_dict
    from logparse.store import write_tables

    opts = _opts(concurrency, idle_gap, min_samples, min_duration, segment)
    (log,) = local_inputs([log], stream_files=True)
    out, publish = output_target(out)
    analysis, _ = _analyze(log, engine, patterns, year, opts)
    summary = summary_dict(analysis)
    if out is not None:
        write_tables(
            {k: v for k, v in analysis.frames().items() if k in ("samples", "phases", "windows")},
            out,
            force=force,
            sources=[log],
        )
        publish()
    warnings = input_warnings(summary)
    if as_json:  # stdout stays the phases list: the warnings go beside it
        click.echo(json.dumps(summary["phases"], indent=2))
        for line in warnings:
            click.echo(line, err=True)
    else:
        click.echo("\n".join([render_windows(summary), *(["", *warnings] if warnings else [])]))


@click.command("compare", short_help="Side-by-side table of several logs.")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@engine_option
@click.option("--json", "as_json", is_flag=True, help="Print the rows and degradation ratios as JSON.")
@out_option
@analysis_options
@grammar_options
def compare_command(
    logs: tuple[str, ...],
    engine: str,
    as_json: bool,
    out: Path | str | None,
    force: bool,
    concurrency: int | None,
    idle_gap: float | None,
    min_samples: int,
    min_duration: float,
    patterns: tuple[Path, ...],
    year: int | None,
) -> None:
    """Stable decode throughput of each LOG side by side, with degradation ratios per engine.

    Every LOG has at least one row: a log without phases says why in its note, and so does a
    log that cannot be read or analysed (no such file, engine not detected, ...); the others
    are still compared, and the exit status is then 1 (as for `ingest`). Problems met reading a
    log (a truncated .gz, invalid UTF-8, ...) are listed after the table (--json: "warnings").
    A ratio is only taken between trusted windows of comparable runs (same engine, model,
    TP/DP sizes, speculative decoding, quantisation and N); the pairs left out are warned about.
    """
    import sys

    import polars as pl

    from logparse.analysis.comparable import comparability_warnings
    from logparse.analysis.compare import (
        NotAnalysed,
        compare_degradation,
        compare_rows,
        compare_warnings,
        render_compare,
    )
    from logparse.escape import for_terminal
    from logparse.store import write_tables

    opts = _opts(concurrency, idle_gap, min_samples, min_duration)
    logs = tuple(local_inputs(logs, stream_files=True))
    read = [_analyze_or_why(log, engine, patterns, year, opts, alone=len(logs) == 1) for log in logs]
    failed = [entry for entry, _ in read if isinstance(entry, NotAnalysed)]
    if len(failed) == len(read):
        shown = "; ".join(f"{for_terminal(f.source)}: {for_terminal(f.reason)}" for f in failed[:3])
        raise click.ClickException(
            f"none of the {len(read)} logs could be analysed ({shown}{'; ...' if len(failed) > 3 else ''})"
        )
    analyses = [entry for entry, _ in read]
    rows = compare_rows(analyses, no_content=[why for _, why in read])
    degr = compare_degradation(rows)
    warnings = pl.concat([compare_warnings(analyses), comparability_warnings(rows)])
    if out is not None:
        local, publish = output_target(out)
        assert local is not None
        write_tables({"compare": rows, "degradation": degr}, local, force=force, sources=list(logs))
        publish()
    if failed:  # as `ingest`: everything is printed, and the exit status still says a log failed
        click.echo(f"{len(failed)} of {len(read)} logs could not be analysed (see their rows)", err=True)
        click.get_current_context().call_on_close(lambda: sys.exit(1))
    if as_json:
        click.echo(
            json.dumps(
                {"rows": rows.to_dicts(), "degradation": degr.to_dicts(), "warnings": warnings.to_dicts()},
                indent=2,
                default=str,
            )
        )
    else:
        click.echo(render_compare(rows, degr, warnings))


def _analyze_or_why(
    log: str, engine: str, patterns: tuple[Path, ...], year: int | None, opts: dict[str, Any], *, alone: bool
) -> tuple[Any, str | None]:
    """`_analyze`, or a `NotAnalysed` saying why `log` could not be read or analysed. A broken
    grammar (--patterns) concerns every log and is raised, as is any error of a log compared
    `alone` (it then fails as `summary` would, with the same exit status)."""
    from logparse.analysis.compare import NotAnalysed
    from logparse.errors import LogparseError, PatternError

    try:
        return _analyze(log, engine, patterns, year, opts)
    except PatternError:
        raise
    except (LogparseError, click.ClickException) as exc:
        if alone:
            raise
        reason = exc.message if isinstance(exc, click.ClickException) else str(exc)
        return NotAnalysed(source=log, reason=reason.removeprefix(f"{log}: ")), None
