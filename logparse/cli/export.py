"""`logparse export`: a run's log as the engine's own Prometheus metrics (OpenMetrics text, a TSDB),
and logparse's grammars as lnav log formats."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from logparse.cli.options import EngineType, chosen_tz, engine_option, patterns_option, tz_option, year_option
from logparse.errors import InputError
from logparse.export.lnav import build_formats, prepare_folder, write_formats
from logparse.export.openmetrics import render
from logparse.export.promtool import create_blocks, find_promtool
from logparse.export.series import RunSeries, Series, run_series
from logparse.grammar import load_grammar
from logparse.store import check_writable, output_file

RETENTION_HINT = "100y"  # what the printed `prometheus` command passes, so old runs are kept

_LOGS = click.argument("logs", nargs=-1, required=True, metavar="LOG...")
_MODEL = click.option(
    "--model-name",
    metavar="NAME",
    help="The `model_name` label. [default: the served model the log names; left out when it names none]",
)


@click.group("export", short_help="Export runs and grammars to the tools users run (Prometheus, lnav).")
def export_group() -> None:
    """Export runs to the tools people already use to watch live servers, and logparse's grammars
    to the log viewer they browse logs in (`export lnav`).

    \b
    The engine-stats, prefill/decode, spec-decode and KV events of each LOG become the engine's own
    Prometheus metrics (names, types, HELP and labels of vLLM V0/V1 and SGLang), timestamped by the
    log, so the engines' Grafana dashboards show a past run. Gauges are the values printed; the
    token counters are rebuilt from the printed rates (their HELP says how). Each series carries
    `run` (the log's file name) and, when the log names it, `model_name`. Timestamps without a
    timezone are read as UTC (--tz ZONE to read them in another), as by every command.
    """


@export_group.command("openmetrics")
@_LOGS
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="OpenMetrics text file to write (replaced if it exists); `-` writes to stdout.",
)
@engine_option
@year_option
@tz_option
@patterns_option
@_MODEL
def openmetrics_command(
    logs: Sequence[str],
    output: str,
    engine: str,
    year: int | None,
    patterns: tuple[Path, ...],
    model_name: str | None,
) -> None:
    """Write the runs of LOG... as one OpenMetrics text file.

    Validate it with `promtool check metrics < FILE`, or backfill it yourself with
    `promtool tsdb create-blocks-from openmetrics FILE DIR` (what `export prometheus` does).
    """
    if output != "-":
        check_writable(Path(output), file=True)  # before the logs are read
    series, notes = _export(
        logs, engine=engine, year=year, tz=chosen_tz(), patterns=patterns, model_name=model_name
    )
    if output != "-":
        with output_file(Path(output)) as handle:
            handle.writelines(render(series))
    for note in notes:  # after the writing: a write error is then the one line printed
        click.echo(note, err=True)
    if output == "-":
        sys.stdout.writelines(render(series))
        return
    click.echo(f"wrote {output}", err=True)


@export_group.command("prometheus")
@_LOGS
@click.option(
    "--tsdb",
    "tsdb",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Prometheus TSDB folder to add the runs' blocks to (created if missing; blocks "
    "already there are kept).",
)
@click.option(
    "--promtool",
    "promtool_name",
    default="promtool",
    show_default=True,
    metavar="PATH",
    help="The promtool binary (Debian package `prometheus`).",
)
@engine_option
@year_option
@tz_option
@patterns_option
@_MODEL
def prometheus_command(
    logs: Sequence[str],
    tsdb: Path,
    promtool_name: str,
    engine: str,
    year: int | None,
    patterns: tuple[Path, ...],
    model_name: str | None,
) -> None:
    """Backfill the runs of LOG... into a Prometheus TSDB with `promtool tsdb create-blocks-from
    openmetrics`, then point a Prometheus (and its Grafana) at it.

    \b
    Serve it with e.g.:
      prometheus --storage.tsdb.path=DIR --storage.tsdb.retention.time=100y
    (the long retention keeps a past run's samples from being deleted at start-up).
    """
    promtool = find_promtool(promtool_name)
    check_writable(tsdb)  # before the logs are read
    series, notes = _export(
        logs, engine=engine, year=year, tz=chosen_tz(), patterns=patterns, model_name=model_name
    )
    with tempfile.TemporaryDirectory(prefix="logparse-export-") as scratch:
        text = Path(scratch) / "runs.om"
        with output_file(text) as handle:
            handle.writelines(render(series))
        report = create_blocks(promtool, text, tsdb)
    for note in notes:
        click.echo(note, err=True)
    click.echo(report.rstrip(), err=True)
    click.echo(
        f"blocks in {tsdb}; serve them with: prometheus --storage.tsdb.path={tsdb} "
        f"--storage.tsdb.retention.time={RETENTION_HINT}",
        err=True,
    )


@export_group.command("lnav")
@click.option(
    "-o",
    "--output",
    "folder",
    required=True,
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Folder to write the format files to (created if missing; other files in it are kept), e.g. "
    "~/.lnav/formats/installed.",
)
@click.option(
    "--engine",
    "-e",
    "engines",
    type=EngineType(),
    multiple=True,
    metavar="vllm|sglang",
    help="Only this engine's format (repeatable). [default: every engine]",
)
@patterns_option
def lnav_command(folder: Path, engines: tuple[str, ...], patterns: tuple[Path, ...]) -> None:
    """Write logparse's grammars as lnav log formats: DIR/logparse_<engine>.json.

    \b
    Each format (lnav's format-v1 schema) has:
      regex         one per envelope shape of the grammar's sample lines: the engine's stamp as
                    lnav's time, level, outer_ts, rank, pid, task, and the message as body
      search-table  one per message and stats rule, <engine>_<rule>, whose columns are the rule's
                    fields: ;SELECT log_time, gen_tps FROM vllm_engine_stats_v1
      sample        the grammar's sample lines, which lnav checks when it loads the format
    With --patterns, your own rules are exported too.

    \b
    Install:  logparse export lnav -o ~/.lnav/formats/installed
         or:  logparse export lnav -o DIR && lnav -i DIR/logparse_vllm.json
    Check:    lnav -C   (reports a bad regex, stamp or sample)

    \b
    Left out (lnav cannot hold it): lines without a stamp, JSON records and text before a record
    start no lnav message (lnav shows them with the message before); constants, templates, derived
    fields and the `extra` pairs have no column; fallback rules (any other WARNING) have no table;
    `floats` lists and `bool` values are text columns, and so are numbers a rule may print with
    thousands separators; a field a rule captures in several places has a column per place (x,
    x__2, ...). lnav reads a year-less stamp (vLLM's MM-DD) with a year of its own choosing.
    Lines a format does not take stay in lnav's view as part of the message before them.
    """
    prepare_folder(folder)
    grammar = load_grammar(patterns)
    chosen = sorted({e for e in engines if e != "auto"}) or None
    formats = build_formats(grammar, chosen)
    for fmt, path in zip(formats, write_formats(formats, folder)):
        body = fmt.body
        click.echo(
            f"wrote {path}: {len(body['regex'])} envelope regexes, {len(body['search-table'])} search "
            f"tables, {len(body['sample'])} samples",
            err=True,
        )
        for note in fmt.notes:
            click.echo(f"{fmt.name}: {note}", err=True)


def _export(
    logs: Sequence[str],
    *,
    engine: str,
    year: int | None,
    tz: str | None,
    patterns: Sequence[Path],
    model_name: str | None,
) -> tuple[list[Series], list[str]]:
    """Every series of every log, and the notes about each run (`run_notes`); an error when no
    log gives a series."""
    import logparse

    unique = list(dict.fromkeys(logs))
    series: list[Series] = []
    notes: list[str] = []
    for log, run in zip(unique, run_labels(unique)):
        result = logparse.ingest(log, engine=engine, year=year, tz=tz, patterns=patterns)
        found = run_series(result.tables, engine=result.engine, run=run, model_name=model_name)
        notes += run_notes(found)
        series.extend(found.series)
    if not series:
        raise InputError(
            f"{', '.join(unique)}: no timestamped engine-stats, decode/prefill, spec-decode or "
            "KV lines: nothing to export"
        )
    return series, notes


def run_labels(logs: Sequence[str]) -> list[str]:
    """The `run` label of each log: its file name, or the path as given when two names are alike."""
    names = [Path(log).name for log in logs]
    return [log if names.count(name) > 1 else name for log, name in zip(logs, names)]


def run_notes(found: RunSeries) -> list[str]:
    """What `export` says about one run on stderr: what it exported and what its log lacked."""
    samples = sum(len(s.samples) for s in found.series)
    version = f" {found.version}" if found.version else ""
    metrics = len({s.name for s in found.series})
    notes = [
        f"{found.run}: {found.engine}{version}, {metrics} metrics, {len(found.series)} series, {samples} samples"
    ]
    if found.series and not found.model_name:
        notes.append(
            f"{found.run}: the log names no served model: label model_name left out "
            "(--model-name sets it; the engines' dashboards filter on it)"
        )
    if found.aggregated:
        notes.append(
            f"{found.run}: {found.aggregated} 'N Engines Aggregated' stats lines left out: they sum "
            "all engines, and vLLM's metrics are per engine"
        )
    if found.untimed:
        notes.append(f"{found.run}: {found.untimed} stats lines have no timestamp and are not exported")
    if found.unprinted:
        notes.append(f"{found.run}: not printed by this log, left out: {', '.join(found.unprinted)}")
    return notes
