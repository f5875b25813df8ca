"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class EngineType(click.ParamType):
    """An engine name the grammars know, or `auto` (checked when the option is read, with the
    user's own grammar files: an engine they add is accepted too)."""

    name = "engine"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from logparse.errors import PatternError
        from logparse.grammar import load_grammar

        text = str(value)
        if text == "auto":
            return text
        try:
            known = sorted(load_grammar(ctx.params.get("patterns", ()) if ctx else ()).engines)
        except PatternError:
            return text  # the grammar error is reported by the command itself
        if text not in known:
            self.fail(f"unknown engine {text!r}; known engines: {', '.join(known)} (or auto)", param, ctx)
        return text


def engine_option(func: F) -> F:
    """`--engine auto|vllm|sglang|…`: which grammar to use."""
    return click.option(
        "--engine",
        "-e",
        type=EngineType(),
        default="auto",
        show_default=True,
        metavar="auto|vllm|sglang",
        help="Engine that wrote the log; auto detects it from the first lines.",
    )(func)


def _keep_tz(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta["logparse.tz"] = value


def chosen_tz() -> str | None:
    """The `--tz` of the running command (None: UTC, `times.DEFAULT_ZONE`)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get("logparse.tz")


def patterns_option(func: F) -> F:
    """`--patterns FILE.toml` (repeatable): the user's grammar files, on top of the built-in ones."""
    return click.option(
        "--patterns",
        "patterns",
        multiple=True,
        is_eager=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Extra grammar file with your own rules, on top of the built-in ones (repeatable; also "
        "$LOGPARSE_PATTERNS). [default: none]",
    )(func)


def year_option(func: F) -> F:
    """`--year`: the year of stamps that print none."""
    return click.option(
        "--year",
        type=click.IntRange(1970, 2200),
        default=None,
        help="Year for year-less timestamps (vLLM's MM-DD) when the log shows no full date. [default: the "
        "year the file's modification time gives its last line]",
    )(func)


def tz_option(func: F) -> F:
    """`--tz ZONE`: the zone of stamps that print none (read back with `chosen_tz`)."""
    return click.option(
        "--tz",
        default=None,
        metavar="ZONE",
        expose_value=False,
        callback=_keep_tz,
        help="Time zone of stamps that print none (e.g. Europe/Istanbul). [default: UTC, whatever this "
        "machine's zone; "
        "stamps with a zone, such as docker's, are exact]",
    )(func)


def grammar_options(func: F) -> F:
    """`--patterns FILE.toml` (repeatable), `--year`, `--tz`: how a log's lines and times are read."""
    return year_option(patterns_option(tz_option(func)))


def slo_limit_options(func: F) -> F:
    """`--slo-ttft-ms`, `--slo-tps`: the client-side SLOs."""
    func = click.option(
        "--slo-tps",
        type=click.FloatRange(min=0, min_open=True),
        default=15.0,
        show_default=True,
        help="Per-user output rate SLO in tok/s (higher is better).",
    )(func)
    return click.option(
        "--slo-ttft-ms",
        type=click.FloatRange(min=0, min_open=True),
        default=1000.0,
        show_default=True,
        help="TTFT SLO in ms (lower is better).",
    )(func)


def slo_options(func: F) -> F:
    """`--slo-ttft-ms`, `--slo-tps`, `--think-s`: the client-side SLOs and think time."""
    func = click.option(
        "--think-s",
        type=click.FloatRange(min=0),
        default=45.0,
        show_default=True,
        help="User think time Z in s for N = C_max x (1 + Z / L).",
    )(func)
    return slo_limit_options(func)


class PathOrUri(click.ParamType):
    """An input path checked as `click.Path(**options)` checks it, or a URI of object storage
    (`s3://bucket/key`, kept as text: `local_inputs` fetches it when the command runs)."""

    name = "path|uri"

    def __init__(self, **options: Any) -> None:
        self.path = click.Path(**options)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from logparse.store.uri import is_uri

        if not isinstance(value, Path) and is_uri(str(value)):
            return str(value)
        return self.path.convert(value, param, ctx)


def local_inputs(args: Sequence[Any], *, stream_files: bool = False) -> list[str]:
    """`args` with each URI replaced by a local copy for the running command (removed when it ends):
    a dataset or a run is downloaded, a file too unless `stream_files` (a log the ingest reads
    from the store as it streams). Paths are returned as they are, as text."""
    from logparse.store.copies import local_copies

    texts = [str(a) for a in args]
    if not any("://" in t for t in texts):
        return texts
    copies: list[str] = click.get_current_context().with_resource(
        local_copies(texts, stream_files=stream_files)
    )
    return copies


def output_target(out: Path | str | None) -> tuple[Path | None, Callable[[], None]]:
    """Where the running command writes its `--out`, and what to call once it has written it
    without error: a local folder is itself (nothing to call); a URI of object storage is a local
    scratch folder (removed when the command ends) whose files are then uploaded to it. An object
    store has no rename: the files are uploaded one by one, and files of an earlier output under
    the URI that this one does not write again are left there."""
    from logparse.store.uri import is_uri

    if out is None or not is_uri(str(out)):
        return (None if out is None else Path(out)), lambda: None
    import shutil
    import tempfile

    from logparse.store.remote import locate, upload_folder

    target = locate(str(out))
    scratch = Path(tempfile.mkdtemp(prefix="logparse-out-"))
    click.get_current_context().call_on_close(lambda: shutil.rmtree(scratch, ignore_errors=True))
    local = scratch / (target.name or "out")

    def upload() -> None:
        if local.exists():
            upload_folder(local, target)

    return local, upload


class OutTarget(click.ParamType):
    """`--out`: a local folder (a `Path`, which must not be a file) or a URI of object storage
    (`s3://bucket/prefix`, kept as text)."""

    name = "dir|uri"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from logparse.store.uri import is_uri

        if isinstance(value, Path) or not is_uri(str(value)):
            return click.Path(file_okay=False, path_type=Path).convert(value, param, ctx)
        return str(value)


def ingest_options(func: F) -> F:
    """`ingest`'s own options: `--out`, `--format`/`--json`, `--force`, `--jobs`."""
    decorators = [
        click.option(
            "--out",
            "-o",
            type=OutTarget(),
            help="Write DIR/<kind>.parquet. With several logs (a folder, a glob, several paths): a Parquet "
            "dataset DIR/run=<name>/kind=<kind>/part-NNNNN.parquet. DIR is replaced as a whole (your own "
            "files in it are kept) and appears whole or not at all; it is refused if it holds the tables "
            "of other logs. A URI (s3://, gs://, hdfs://, file://) or --executor ray writes the dataset run "
            "by run instead: each run appears whole, a rerun skips the complete ones. [default: none; the "
            "tables go to a scratch folder that is removed]",
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(["table", "jsonl", "json"]),
            default="table",
            show_default=True,
            help="table: the headline as text; json: the headline as JSON (several logs: a list); jsonl: "
            "every event as a JSON line on stdout, in line order, with `time` as ISO-8601 UTC (with --out "
            "the tables are written too).",
        ),
        click.option(
            "--json", "as_json", is_flag=True, help="The headline as JSON (the same as --format json)."
        ),
        click.option(
            "--force",
            is_flag=True,
            help="Write into a non-empty --out folder logparse did not create, or replace the tables of "
            "other logs in it. [default: refuse]",
        ),
        click.option(
            "--jobs",
            "-j",
            type=click.IntRange(min=1),
            default=None,
            help="Threads [default: the number of cores]: a large log's blocks, or small logs side by side.",
        ),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func
