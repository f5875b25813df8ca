"""The post-mortem of every run of a Parquet dataset, and one fleet table comparing them.

A dataset written by `logparse ingest DIR --out DATASET` holds one `run=<name>` folder per log.
Each run is analysed exactly as `logparse summary` analyses one log (`analyze_log` reads a run
folder back with `read_folder`); the fleet table then picks, from each run's
`summary_dict`, the facts a reader compares across servers. A run that cannot be analysed keeps
its row, with the reason in ``error``, and does not stop the others.

>>> from logparse.analysis.fleet import analyze_runs, fleet_rows   # doctest: +SKIP
>>> rows = fleet_rows(list(analyze_runs(Path("DATASET"))))   # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from logparse.analysis.analyze import Analysis, analyze_log
from logparse.analysis.identity import IDENTITY_KEYS, differences
from logparse.analysis.summary import summary_dict
from logparse.analysis.text import GUESSED_DATE, date_mark, fmt, render_table, tokens_label
from logparse.errors import LogparseError
from logparse.escape import for_terminal
from logparse.store import is_table_folder, runs_of, write_csv, write_parquet
from logparse.store.copies import shown_name

PROGRESS_MIN_RUNS = 4  # fewer runs finish before "run k/N" lines are worth printing
RUN_PREFIX = "run="

FLEET_SCHEMA: dict[str, pl.DataType] = {
    "run": pl.String(),
    "engine": pl.String(),
    "version": pl.String(),
    "start": pl.Datetime("us"),
    "start_date_guessed": pl.Boolean(),
    "end": pl.Datetime("us"),
    "span_s": pl.Float64(),
    "phases": pl.Int64(),
    "best_phase": pl.Int64(),
    "input_tokens": pl.Int64(),
    "input_tokens_estimated": pl.Boolean(),
    "concurrency": pl.Int64(),
    "samples": pl.Int64(),
    "gen_tps_mean": pl.Float64(),
    "per_request_tps": pl.Float64(),
    "ms_per_token": pl.Float64(),
    "trusted": pl.Boolean(),
    "prefill_tps_mean": pl.Float64(),
    "kv_pool_tokens": pl.Int64(),
    "ready_s": pl.Float64(),
    "diagnostics": pl.Int64(),
    "diagnostic_errors": pl.Int64(),
    "diagnostic_warnings": pl.Int64(),
    "oom": pl.Int64(),
    "preemptions": pl.Int64(),
    "retractions": pl.Int64(),
    "segments": pl.Int64(),
    "model": pl.String(),
    "tensor_parallel": pl.Int64(),
    "data_parallel": pl.Int64(),
    "speculative": pl.Boolean(),
    "quantization": pl.String(),
    "error": pl.String(),
}


@dataclass
class RunSummary:
    """One run of a dataset: its `summary_dict`, or why it could not be analysed.

    ``out_name`` is its folder's name under `--out` (the run's name, made safe for a path);
    ``analysis`` is the full `Analysis` (for writing its tables); it is None when ``error`` is set.
    """

    run: str
    folder: Path
    out_name: str
    summary: dict[str, Any] | None = None
    error: str | None = None
    analysis: Analysis | None = None

    def as_json(self) -> dict[str, Any]:
        """``{"run": name, **summary_dict}``, or ``{"run", "source", "error"}`` for a failed run."""
        if self.summary is None:
            return {"run": self.run, "source": shown_name(self.folder), "error": self.error}
        return {"run": self.run, **self.summary}


def dataset_runs(path: str | Path) -> list[Path]:
    """The `run=<name>` folders of `path` when it is a dataset, else ``[]``.

    A log file, a folder of one log's tables and one `run=` folder give ``[]``: `logparse summary`
    reads those as one log. A dataset of a single run is still a dataset, so that the shape of
    `summary DATASET --json` does not depend on how many logs were ingested into it.
    """
    if not is_table_folder(path):
        return []
    return runs_of(Path(path))


def run_label(folder: Path) -> str:
    """The run's name: its folder's name without `run=`."""
    name = folder.name
    return name[len(RUN_PREFIX) :] if name.startswith(RUN_PREFIX) else name


def analyze_runs(
    dataset: Path,
    *,
    patterns: Sequence[str | Path] = (),
    concurrency: int | None = None,
    idle_gap_s: float | None = None,
    min_samples: int = 5,
    min_duration_s: float = 20.0,
    spec_tokens: int | None = None,
    raise_internal: bool = False,
    on_start: Callable[[int, int, str], None] | None = None,
) -> Iterator[RunSummary]:
    """Analyse each run of `dataset` in turn (options as in `analyze`), yielding as each is done.

    A run that fails yields a `RunSummary` with ``error`` set: a `LogparseError`'s message, or
    ``internal error (Type: message)`` for anything else (re-raised instead with `raise_internal`).
    `on_start(k, n, name)` is called before run k of n (1-based) is read.
    """
    runs = runs_of(Path(dataset))
    out_names = output_names([run_label(folder) for folder in runs])
    for k, (folder, out_name) in enumerate(zip(runs, out_names), start=1):
        name = run_label(folder)
        if on_start is not None:
            on_start(k, len(runs), name)
        try:
            analysis = analyze_log(
                folder,
                patterns=patterns,
                concurrency=concurrency,
                idle_gap_s=idle_gap_s,
                min_samples=min_samples,
                min_duration_s=min_duration_s,
                spec_tokens=spec_tokens,
            )
            summary = summary_dict(analysis)
        except LogparseError as exc:
            yield RunSummary(run=name, folder=folder, out_name=out_name, error=str(exc))
            continue
        except Exception as exc:
            if raise_internal:
                raise
            yield RunSummary(
                run=name,
                folder=folder,
                out_name=out_name,
                error=f"internal error while analysing ({type(exc).__name__}: {exc})",
            )
            continue
        yield RunSummary(run=name, folder=folder, out_name=out_name, summary=summary, analysis=analysis)


def best_phase(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The phase whose stable window decodes fastest (trusted windows first), or None."""
    with_window = [ph for ph in summary["phases"] if ph["stable"] is not None]
    if not with_window:
        return None
    return max(
        with_window, key=lambda ph: (bool(ph["stable"]["trusted"]), ph["stable"]["gen_tps_mean"] or 0.0)
    )


def fleet_row(run: str, summary: dict[str, Any] | None, *, error: str | None = None) -> dict[str, Any]:
    """One run's row of the fleet table (`FLEET_SCHEMA`), picked from its `summary_dict`.

    ``start``/``end`` are the first phase's start and the last phase's end, ``span_s`` the time
    between them; the window figures (``concurrency`` is its N) come from `best_phase`; the
    prefill mean is that phase's, else the first phase's that has one.
    """
    row: dict[str, Any] = dict.fromkeys(FLEET_SCHEMA)
    row.update(run=run, error=error)
    if summary is None:
        return row
    phases = summary["phases"]
    start = _time(phases[0]["start"]) if phases else None
    end = _time(phases[-1]["end"]) if phases else None
    best = best_phase(summary)
    stable = best["stable"] if best is not None else {}
    prefills = ([best] if best is not None else []) + phases
    prefill = next(
        (ph["prefill"]["input_tps_mean"] for ph in prefills if ph["prefill"]["input_tps_mean"] is not None),
        None,
    )
    severities = [d["severity"] for d in summary["diagnostics"]]
    counts = summary["counts"]
    row.update(
        engine=summary["engine"],
        version=summary["version"],
        start=start,
        start_date_guessed=bool(date_mark(summary.get("times"), year_shown=False)) if start else None,
        end=end,
        span_s=(end - start).total_seconds() if start is not None and end is not None else None,
        phases=len(phases),
        best_phase=None if best is None else best["phase"],
        input_tokens=None if best is None else best["input_tokens"],
        input_tokens_estimated=None if best is None else best["input_tokens_estimated"],
        concurrency=None if best is None else best["concurrency"],
        samples=stable.get("samples"),
        gen_tps_mean=stable.get("gen_tps_mean"),
        per_request_tps=stable.get("per_request_tps"),
        ms_per_token=stable.get("ms_per_token"),
        trusted=stable.get("trusted"),
        prefill_tps_mean=prefill,
        kv_pool_tokens=summary["startup"].get("kv_pool_tokens"),
        ready_s=summary["startup"].get("ready_s"),
        diagnostics=len(severities),
        diagnostic_errors=severities.count("error"),
        diagnostic_warnings=severities.count("warning"),
        oom=counts.get("oom"),
        preemptions=counts.get("preemptions"),
        retractions=counts.get("retractions"),
        segments=len(summary.get("segments") or []) or None,
        **_identity(summary, best),
    )
    return row


def _identity(summary: dict[str, Any], best: dict[str, Any] | None) -> dict[str, Any]:
    """The identity (`identity.IDENTITY_KEYS`) of the engine start of the run's best phase (else its first)."""
    segments = [g for g in summary.get("segments") or [] if g.get("analysed")]
    wanted = None if best is None else best.get("segment")
    seg = next((g for g in segments if g["segment"] == wanted), segments[0] if segments else {})
    return {k: seg.get(k) for k in IDENTITY_KEYS}


def fleet_comparability(rows: pl.DataFrame) -> list[str]:
    """Notes on runs of one engine whose rows are not comparable (`identity.differences`, N)."""
    notes = []
    ok = rows.filter(pl.col("error").is_null() & pl.col("per_request_tps").is_not_null()).to_dicts()
    for i, a in enumerate(ok):
        for b in ok[i + 1 :]:
            if a["engine"] != b["engine"]:
                continue
            differ, _ = differences(a, b)
            if a["concurrency"] != b["concurrency"]:
                differ.append(f"N {a['concurrency']} vs {b['concurrency']}")
            if differ:
                notes.append(
                    f"{for_terminal(a['run'])} and {for_terminal(b['run'])} are not comparable "
                    f"({'; '.join(for_terminal(d) for d in differ)}): do not read a ratio off their rows"
                )
    return notes


def fleet_rows(runs: Sequence[RunSummary]) -> pl.DataFrame:
    """The fleet table: one row per run, in the order given (`FLEET_SCHEMA`)."""
    rows = [fleet_row(r.run, r.summary, error=r.error) for r in runs]
    return pl.DataFrame(rows, schema=FLEET_SCHEMA, orient="row")


def fleet_json(runs: Sequence[RunSummary], rows: pl.DataFrame) -> dict[str, Any]:
    """``{"runs": [{"run": name, **summary_dict}, ...], "fleet": [row, ...]}`` in JSON types."""
    fleet = [
        {k: v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v for k, v in row.items()}
        for row in rows.iter_rows(named=True)
    ]
    return {"runs": [r.as_json() for r in runs], "fleet": fleet}


# Terminal columns: header, alignment. While the table is wider than the terminal, those in FOLD are
# left out, in that order, and long run names are shortened in the middle to SHORT_NAMES characters
# (the JSON, CSV and Parquet rows keep every fact and the whole name).
COLUMNS = [
    ("run", "l"),
    ("engine", "l"),
    ("start", "l"),
    ("span", "l"),
    ("ph", "r"),
    ("input", "r"),
    ("N", "r"),
    ("tok/s", "r"),
    ("tok/s/req", "r"),
    ("prefill", "r"),
    ("KV pool", "r"),
    ("diag", "r"),
    ("oom/pre", "r"),
]
FOLD = ["start", "ph", "diag", "prefill"]
SHORT_NAMES = (24, 16)


def render_fleet(rows: pl.DataFrame, *, width: int = 100) -> str:
    """The fleet table for the terminal, a legend, then a line for each failed run or doubtful window.

    Columns: run, engine and version, start of the first phase, span of the phases (first phase's
    start to last phase's end, not the whole log: the legend says so), phases; of the
    best stable window its input, N, tok/s and tok/s per request; the prefill mean, the KV pool,
    the count of diagnostics, OOM retries / preemptions+retractions. While the table is wider than
    `width`, the columns of `FOLD` are left out and long run names shortened (the legend says so).
    Run names, versions and errors are escaped.
    """
    body, notes = [], []
    for r in rows.iter_rows(named=True):
        run = for_terminal(r["run"])
        if r["error"] is not None:
            body.append([run, "error", *["-"] * (len(COLUMNS) - 2)])
            notes.append(f"{run}: not analysed: {for_terminal(r['error'])}")
            continue
        engine = for_terminal(r["engine"] + (f" {r['version']}" if r["version"] else ""))
        preempt = None if r["preemptions"] is None else r["preemptions"] + (r["retractions"] or 0)
        start = "-" if r["start"] is None else r["start"].strftime("%m-%d %H:%M")
        if r["start_date_guessed"]:
            start = GUESSED_DATE + start
        window_input = tokens_label(r["input_tokens"], estimated=bool(r["input_tokens_estimated"]))
        body.append(
            [
                run,
                engine,
                start,
                duration(r["span_s"]),
                fmt(r["phases"]),
                window_input,
                fmt(r["concurrency"]),
                fmt(r["gen_tps_mean"], 1),
                fmt(r["per_request_tps"], 2),
                fmt(r["prefill_tps_mean"], 0),
                tokens_label(r["kv_pool_tokens"]),
                fmt(r["diagnostics"]),
                f"{fmt(r['oom'])}/{fmt(preempt)}",
            ]
        )
        if r["phases"] == 0:
            notes.append(f"{run}: no phases (no decode activity; its summary says why)")
        elif r["best_phase"] is None:
            notes.append(f"{run}: no stable decode window in any phase")
        elif not r["trusted"]:
            notes.append(f"{run}: its best stable window (phase {r['best_phase']}) is not trusted")
        if (r["segments"] or 1) > 1:
            notes.append(
                f"{run}: {r['segments']} engine starts (restarts), each analysed on its own; see its summary"
            )
    notes += fleet_comparability(rows)
    if not body:
        return "no runs"
    # Narrower and narrower layouts (columns left out, names shortened); the first that fits is shown.
    layouts: list[tuple[int, int | None]] = [
        (0, None),
        (1, None),
        *((k, SHORT_NAMES[0]) for k in range(1, len(FOLD) + 1)),
        (len(FOLD), SHORT_NAMES[1]),
    ]
    for folded, limit in layouts:
        table = _table(body, FOLD[:folded], limit)
        if max(len(line) for line in table.splitlines()) <= width:
            break
    legend = _legend(folded=FOLD[:folded])
    if folded:
        legend += f"; left out to fit {width} columns: {', '.join(FOLD[:folded])} (see --json)"
    if limit is not None and any(len(row[0]) > limit for row in body):
        legend += "; long run names are shortened (…)"
    lines = [table, "", *_wrap(legend, width)]
    if notes:
        lines += ["", *(line for note in notes for line in _wrap(note, width, indent="    "))]
    return "\n".join(lines)


def _legend(*, folded: Sequence[str]) -> str:
    """The footnote defining the fleet table's columns (`start` only while it is shown)."""
    start = (
        ""
        if "start" in folded
        else "start: when the first phase of load began (`?`: a date the log does not print, "
        "from the file's modification time); "
    )
    return (
        f"{start}span: from the first phase's start to the last phase's end (the load, not the whole "
        "log); best stable window per run: its input, N, tok/s (all requests), tok/s/req; "
        "prefill: mean tok/s; oom/pre: OOM retries / preemptions+retractions"
    )


def _table(body: Sequence[Sequence[str]], folded: Sequence[str], limit: int | None) -> str:
    """The table without the `folded` columns, run names cut to `limit` (unless that makes two alike)."""
    keep = [i for i, (h, _) in enumerate(COLUMNS) if h not in folded]
    names = [row[0] for row in body]
    if limit is not None:
        short = [shorten(name, limit) for name in names]
        names = short if len(set(short)) == len(set(names)) else names
    return render_table(
        [[name, *(row[i] for i in keep[1:])] for name, row in zip(names, body)],
        [COLUMNS[i][0] for i in keep],
        align="".join(COLUMNS[i][1] for i in keep),
    )


def shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters in the middle (its end often tells runs apart).

    >>> shorten("vllm-emulated-0.11-preemptions-compose", 24)
    'vllm-emul…ptions-compose'
    """
    if len(text) <= limit:
        return text
    tail = limit // 2 + 2
    return text[: limit - 1 - tail] + "…" + text[-tail:]


def duration(seconds: float | None) -> str:
    """A span of seconds, short: `-` for None.

    >>> [duration(s) for s in (45.0, 216.0, 3725.0, None)]
    ['45s', '3m36s', '1h02m', '-']
    """
    if seconds is None:
        return "-"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def progress_wanted(runs: int, stream: TextIO) -> bool:
    """ "run k/N" lines only for many runs, on a terminal, unless LOGPARSE_NO_PROGRESS is set."""
    if runs < PROGRESS_MIN_RUNS or os.environ.get("LOGPARSE_NO_PROGRESS"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def output_names(runs: Sequence[str]) -> list[str]:
    """A folder name per run for `--out DIR/<run>/`: the run's name, made safe and unique (and
    never `fleet.csv` or `fleet.parquet`, the files beside them).

    >>> output_names(["a", "a/../b", "..", "fleet.csv"])
    ['a', 'a_.._b', 'run', 'fleet.csv-2']
    """
    seen: dict[str, int] = {"fleet.csv": 1, "fleet.parquet": 1}
    out = []
    for run in runs:
        name = re.sub(r"[^A-Za-z0-9._=-]+", "_", run).strip("._") or "run"
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return out


def write_run(folder: Path, run: RunSummary) -> Path | None:
    """Write an analysed run as `summary --out` writes one log: `folder/<out_name>/<table>.parquet`
    and `folder/<out_name>/summary.json`. A failed run writes nothing (its row says why)."""
    import json

    if run.summary is None:
        return None
    sub = folder / run.out_name
    sub.mkdir(parents=True, exist_ok=True)
    if run.analysis is not None:
        for table_name, frame in run.analysis.frames().items():
            write_parquet(frame, sub / f"{table_name}.parquet", compression="zstd")
    path = sub / "summary.json"
    path.write_text(json.dumps(run.summary, indent=2) + "\n", encoding="utf-8")
    return path


def write_fleet(folder: Path, rows: pl.DataFrame) -> list[Path]:
    """Write the fleet table as `folder/fleet.parquet` and `folder/fleet.csv`."""
    paths = [folder / "fleet.parquet", folder / "fleet.csv"]
    write_parquet(rows, paths[0], compression="zstd")
    write_csv(rows, paths[1])
    return paths


def previous_out_names(out: Path) -> list[str]:
    """The run folders an earlier `summary DATASET --out` wrote into `out` (from its fleet.parquet)."""
    try:
        runs = pl.read_parquet(out / "fleet.parquet", columns=["run", "error"], glob=False)
    except (OSError, pl.exceptions.PolarsError):
        return []
    return [
        name
        for name, error in zip(
            output_names(runs.get_column("run").to_list()), runs.get_column("error").to_list()
        )
        if error is None
    ]


def remove_stale_runs(out: Path, previous: Sequence[str], runs: Sequence[RunSummary]) -> list[Path]:
    """Remove the run folders of an earlier `--out` into `out` that this one did not write again.

    `write_tables`/`table_folder` keep what they do not know as the user's; these folders are ours
    (`previous_out_names`), and left behind they would pass for runs of the new dataset.
    """
    from logparse.store import remove_tree

    written = {r.out_name for r in runs if r.summary is not None}
    stale = [
        out / name for name in previous if name not in written and (out / name / "summary.json").is_file()
    ]
    for folder in stale:
        remove_tree(folder)
    return stale


def _time(value: Any) -> dt.datetime | None:
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value)
        except ValueError:
            return None
    return value if isinstance(value, dt.datetime) else None


def _wrap(text: str, width: int, *, indent: str = "") -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent=indent, break_on_hyphens=False) or [text]


__all__ = [
    "FLEET_SCHEMA",
    "RunSummary",
    "analyze_runs",
    "best_phase",
    "dataset_runs",
    "duration",
    "fleet_comparability",
    "fleet_json",
    "fleet_row",
    "fleet_rows",
    "output_names",
    "previous_out_names",
    "progress_wanted",
    "remove_stale_runs",
    "render_fleet",
    "run_label",
    "shorten",
    "write_fleet",
    "write_run",
]
