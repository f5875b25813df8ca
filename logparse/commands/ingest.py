"""`logparse ingest`: parse logs into Parquet tables and print each log's headline."""
from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from logparse.commands.options import engine_option, grammar_options
from logparse.escape import for_terminal, json_line
from logparse.escape import json_default as _json_default
from logparse.headline import headline, no_content_of, render_headline


def _jsonl_sink(event: Mapping[str, Any]) -> None:
    sys.stdout.write(json_line(event, ensure_ascii=False, default=_json_default) + "\n")


@click.command("ingest")
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@engine_option
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path),
              help="Write DIR/<kind>.parquet. With several logs (a folder, a glob, several paths): a Parquet "
                   "dataset DIR/run=<name>/kind=<kind>/part-NNNNN.parquet. DIR is replaced as a whole (your "
                   "own files in it are kept); it is refused if it holds the tables of other logs. "
                   "[default: none; the tables go to a scratch folder that is removed]")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl", "json"]), default="table",
              show_default=True,
              help="table: the headline as text; json: the headline as JSON (several logs: a list); jsonl: "
                   "every event as a JSON line on stdout, in line order, streamed block by block (with --out "
                   "the tables are written too; several logs: one after another).")
@click.option("--json", "as_json", is_flag=True,
              help="The headline as JSON: the same as --format json, as the other commands' --json.")
@click.option("--force", is_flag=True,
              help="Write into a non-empty --out folder logparse did not create, or replace the tables of "
                   "other logs in it. [default: refuse]")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Threads [default: the number of cores]: a large log's blocks, or small logs side by side.")
@click.option("--reference", is_flag=True,
              help="Read every line with the reference per-line parser, in memory (slow; to cross-check "
                   "the fast path, which gives the same tables and the same JSON lines). [default: the fast "
                   "path]")
@grammar_options
def ingest_command(logs: tuple[str, ...], engine: str, out: Path | None, fmt: str, as_json: bool, force: bool,
                   jobs: int | None, reference: bool, patterns: tuple[Path, ...], year: int | None) -> None:
    """Parse LOG (a file, a .gz, - for stdin, a folder or a glob of logs) into typed events and print
    its headline: engine, version, span, ranks, coverage, start-up figures (as `logparse summary`
    gives them), OOM, preemption and JIT counts, warnings.

    Every line becomes exactly one event; lines no rule understands are kept as `unparsed`.
    With --out, each event kind is written as a Parquet table DIR/<kind>.parquet; several logs are
    parsed in parallel into one dataset partitioned by run and kind, which polars, DuckDB or Spark
    read as is. A progress bar is drawn on stderr for large inputs when it is a terminal. An empty
    log, or one of blank lines only, is read without error; its headline claims no engine.
    """
    from logparse.fastpath.dataset import expand_inputs

    if as_json:
        given = click.get_current_context().get_parameter_source("fmt")
        if given is click.core.ParameterSource.COMMANDLINE and fmt != "json":
            raise click.UsageError(f"--json is --format json; it cannot go with --format {fmt}")
        fmt = "json"
    files, several = expand_inputs(logs)
    if reference or (fmt == "jsonl" and not _jsonl_streams(files, patterns)):
        summaries = _ingest_in_memory(files, engine, several, out, fmt, force, reference, patterns, year)
    elif fmt == "jsonl":
        summaries = _ingest_jsonl(files, engine, several, out, force, patterns, year, jobs)
    elif several:
        summaries = _ingest_dataset(files, engine, out, force, jobs, patterns, year, fmt)
    else:
        summaries = [_ingest_one(files[0], engine, out, force, patterns, year, jobs)]
        if fmt == "table":
            click.echo(render_headline(summaries[0]))
    if fmt == "json":
        payload = summaries[0] if len(summaries) == 1 and not several else summaries
        click.echo(json.dumps(payload, indent=2, default=_json_default))


def _events_note(source: str, lines: int, engine: str, coverage: float, scores: Mapping[str, float]) -> str:
    """The line `--format jsonl` prints on stderr after each log."""
    why = no_content_of(lines, scores)
    read = f"{why}, no engine" if why else f"{engine}, coverage {coverage:.1%}"
    return f"{for_terminal(source)}: {lines:,} events ({read})"


def _ingest_one(log: str, engine: str, out: Path | None, force: bool, patterns: tuple[Path, ...],
                year: int | None, jobs: int | None) -> dict[str, Any]:
    """One log, streamed into --out (or a scratch folder) on `jobs` threads: its headline facts."""
    from logparse.fastpath.run import headline_facts, stream_to_folder
    from logparse.tables import table_folder

    if out is None:
        with tempfile.TemporaryDirectory(prefix="logparse-") as tmp:
            outcome, grammar = stream_to_folder(log, Path(tmp), engine=engine, year=year, patterns=patterns,
                                                workers=jobs)
            return headline_facts(outcome, Path(tmp), grammar)
    with table_folder(out, force=force, sources=[log]) as tmp:
        outcome, grammar = stream_to_folder(log, tmp, engine=engine, year=year, patterns=patterns, workers=jobs)
    return headline_facts(outcome, out, grammar)


def _jsonl_streams(files: list[str], patterns: tuple[Path, ...]) -> bool:
    """Whether the JSON lines can come from the streamed tables (else: the reference path, as before).

    Not for a folder of tables written earlier (read back, not parsed), nor with a user grammar
    whose fields a table cannot give back as the parser made them (`fastpath.jsonl.unfaithful`).
    """
    from logparse.fastpath.dataset import is_table_folder
    from logparse.fastpath.jsonl import unfaithful
    from logparse.grammar import load_grammar

    if any(f != "-" and is_table_folder(f) for f in files):
        return False
    return not unfaithful(load_grammar(patterns))


def _ingest_jsonl(files: list[str], engine: str, several: bool, out: Path | None, force: bool,
                  patterns: tuple[Path, ...], year: int | None, jobs: int | None) -> list[dict[str, Any]]:
    """Each log in turn, block by block: its events as JSON lines on stdout (and its tables into --out)."""
    from logparse.fastpath.dataset import run_names
    from logparse.fastpath.jsonl import JsonlOutput
    from logparse.fastpath.sinks import ParquetSink, TeeSink
    from logparse.fastpath.stream import Sink, stream_log
    from logparse.grammar import load_grammar
    from logparse.reader import save_read_stats
    from logparse.tables import LineCounts, table_folder

    grammar = load_grammar(patterns)

    def one(log: str, folder: Path | None, layout: str) -> None:
        output = JsonlOutput(grammar, sys.stdout)

        def sink() -> Sink:
            if folder is None:
                return output.sink()
            return TeeSink(output.sink(), ParquetSink(folder, layout=layout))

        outcome, _ = stream_log(log, grammar, sink, engine=engine, year=year, workers=jobs)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            save_read_stats(outcome.stats, folder)  # as `fastpath.run.stream_to_folder` keeps them
        counts = LineCounts()
        counts.counts = outcome.counts
        note = _events_note(outcome.source, counts.lines, outcome.engine, counts.coverage, outcome.scores)
        click.echo(note, err=True)

    if out is None:
        for log in files:
            one(log, None, "flat")
    else:
        with table_folder(out, force=force, sources=files) as tmp:
            for log, name in zip(files, run_names(files)):
                if several:
                    one(log, tmp / f"run={name}", "hive")
                else:
                    one(log, tmp, "flat")
    return []


def _ingest_dataset(files: list[str], engine: str, out: Path | None, force: bool, jobs: int | None,
                    patterns: tuple[Path, ...], year: int | None, fmt: str) -> list[dict[str, Any]]:
    """Several logs into a dataset DIR/run=<name>/kind=<kind>/ (or headlines only): a large log alone
    on all threads, small logs side by side (see `run_jobs`)."""
    from logparse.fastpath import progress as progress_mod
    from logparse.fastpath.dataset import Job, default_jobs, run_jobs, run_names
    from logparse.reader import input_size
    from logparse.tables import table_folder

    parallel = jobs or default_jobs()
    names = run_names(files)
    sizes = [input_size(f) or 0 for f in files]
    total = sum(sizes)
    bar = progress_mod.Progress(label=f"{len(files)} logs ") if progress_mod.wanted(total) else None
    done_bytes = 0
    printed = 0
    results: list[dict[str, Any] | None] = [None] * len(files)

    def on_done(i: int, facts: dict[str, Any]) -> None:
        nonlocal done_bytes, printed
        done_bytes += sizes[i]
        results[i] = facts
        if bar is not None:
            bar(done_bytes, total)
        while printed < len(files) and results[printed] is not None:
            if bar is not None:
                bar.close()
            shown = results[printed]
            if "error" in shown:  # type: ignore[operator]
                click.echo(f"error: {for_terminal(shown['error'])} (skipped)", err=True)  # type: ignore[index]
            elif fmt == "table":
                if printed:
                    click.echo("")
                click.echo(render_headline(shown))  # type: ignore[arg-type]
            printed += 1

    def jobs_for(folder: Path | None) -> list[Job]:
        return [Job(log=f, run=name, engine=engine, year=year, patterns=tuple(str(p) for p in patterns),
                    folder=None if folder is None else str(folder / f"run={name}"))
                for f, name in zip(files, names)]

    try:
        if out is None:
            facts = run_jobs(jobs_for(None), parallel=parallel, on_done=on_done)
        else:
            with table_folder(out, force=force, sources=files) as tmp:
                facts = run_jobs(jobs_for(tmp), parallel=parallel, on_done=on_done)
    finally:
        if bar is not None:
            bar.close()
    failed = [f for f in facts if "error" in f]
    if failed and len(failed) == len(facts):
        raise click.ClickException(f"none of the {len(facts)} logs could be read")
    if failed:
        click.get_current_context().call_on_close(lambda: sys.exit(1))
    return [f for f in facts if "error" not in f]


def _ingest_in_memory(files: list[str], engine: str, several: bool, out: Path | None, fmt: str, force: bool,
                      reference: bool, patterns: tuple[Path, ...], year: int | None) -> list[dict[str, Any]]:
    """The reference pipeline: every line through `LineParser`, tables in memory, logs one by one."""
    from logparse.fastpath.dataset import run_names
    from logparse.fastpath.sinks import part_file
    from logparse.pipeline import ingest
    from logparse.reader import save_read_stats
    from logparse.tables import table_folder, write_tables

    summaries = []
    names = run_names(files)
    sink = _jsonl_sink if fmt == "jsonl" else None
    results = []
    for log in files:
        result = ingest(log, engine=engine, year=year, patterns=patterns, on_event=sink, reference=True)
        if out is not None and not several:
            write_tables(result.tables, out, force=force, sources=[log])
            save_read_stats(result.stats, out)  # as `fastpath.run.stream_to_folder` keeps them
        facts = headline(result)
        summaries.append(facts)
        results.append(result)
        if fmt == "table":
            if len(summaries) > 1:
                click.echo("")
            click.echo(render_headline(facts))
        elif fmt == "jsonl":
            note = _events_note(result.source, result.lines, result.engine, result.coverage, result.scores)
            click.echo(note, err=True)
    if out is not None and several:
        with table_folder(out, force=force, sources=files) as tmp:
            for name, result in zip(names, results):
                run = tmp / f"run={name}"
                for kind, frame in result.tables.items():
                    folder = run / f"kind={kind}"
                    folder.mkdir(parents=True, exist_ok=True)
                    frame.write_parquet(folder / part_file(0), compression="zstd")
                run.mkdir(parents=True, exist_ok=True)
                save_read_stats(result.stats, run)
    return summaries
