"""Plain-text, aligned tables of a `BenchAnalysis` for the terminal."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from logparse.analysis.summary import TEXT_WIDTH
from logparse.analysis.text import n_text, tokens_label
from logparse.bench.analyze import BenchAnalysis
from logparse.bench.basis import MARK_LEGEND, MISSING
from logparse.bench.checks import SEVERITIES
from logparse.bench.spec import BREAK_EVEN_METHOD
from logparse.bench.units import ms, tok_s
from logparse.escape import for_terminal

_CONFIG_WRAP = 18  # a long configuration name wraps rather than squeezing the checks' messages
_MIN_MESSAGE = 30


_GLUE = "\x00"  # a space that textwrap does not break at (never in a message)
_NUMBER_UNIT = re.compile(r"(?<=\d) (?=(?:tok/s|req/s|ms|s|GiB|GB|tokens)\b)")


def wrap_text(text: str, width: int, *, indent: str = "") -> list[str]:
    """`text` wrapped to `width` columns (words kept whole, hyphens not broken, a number kept with
    its unit), later lines prefixed with `indent`; `[text]` for an empty text."""
    glued = _NUMBER_UNIT.sub(_GLUE, text)
    lines = textwrap.wrap(glued, width=width, subsequent_indent=indent, break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in lines] or [text]


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], *, wrap: Mapping[int, int] | None = None
) -> str:
    """Align `rows` under `headers`: text left-aligned, numbers right-aligned, None as '-'.

    `wrap` maps a column index to the width its text wraps at; the rest of the row continues on
    the lines below, under its own column.
    """
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in rows) if rows else False
        for i in range(len(headers))
    ]
    cells = [line for row in rows for line in _wrapped_row([_cell(value) for value in row], wrap or {})]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def _wrapped_row(cells: list[str], wrap: Mapping[int, int]) -> list[list[str]]:
    """One row's cells as one or more printed lines, the `wrap` columns wrapped."""
    pieces = [wrap_text(c, wrap[i]) if i in wrap else [c] for i, c in enumerate(cells)]
    height = max(len(p) for p in pieces)
    return [[p[k] if k < len(p) else "" for p in pieces] for k in range(height)]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def _levels(frame: pl.DataFrame) -> list[int]:
    return sorted(frame["concurrency"].drop_nulls().unique().to_list())


def _pivot(frame: pl.DataFrame, value: str, first: list[str]) -> tuple[list[str], list[list[Any]]]:
    levels = _levels(frame)
    headers = [*first, *(f"c={c}" for c in levels)]
    rows = []
    for keys, group in frame.group_by(first, maintain_order=True):
        lookup = dict(zip(group["concurrency"].to_list(), group[value].to_list(), strict=True))
        rows.append([*keys, *(lookup.get(c) for c in levels)])
    return headers, rows


def slo_cell(judged: Mapping[str, Any]) -> str:
    """One SLO matrix cell: 'ok', the SLO(s) that fail, or which statistic the file lacks, with
    the marks of `basis.MARK_LEGEND` (e.g. 'ok#', 'TTFT^', 'TPS ok, no TTFT P90 in the file')."""
    basis = judged["basis"]
    verdicts = {"TTFT": judged["ttft_ok"], "TPS": judged["tps_ok"]}
    missing = [name for name, ok in verdicts.items() if ok is None]
    failed = [name for name, ok in verdicts.items() if ok is False]
    if len(missing) == len(verdicts):
        return f"no {'P90' if basis == 'p90' else 'mean'} in the file"
    marks = judged["marks"] or ""
    if not missing:
        return ("+".join(failed) if failed else "ok") + marks
    (present,) = [name for name in verdicts if name not in missing]
    lacking = MISSING[basis][missing[0].lower()]
    return f"{present} {'fails' if failed else 'ok'}{marks}, no {lacking} in the file"


def _legend(marks: str) -> str:
    """The lines explaining the cell marks that occur in `marks` (empty when none does)."""
    lines = [
        line
        for mark, text in MARK_LEGEND.items()
        if mark in marks
        for line in wrap_text(f"  {mark} {text}", TEXT_WIDTH, indent="    ")
    ]
    return "\n".join(lines)


def render_slo(analysis: BenchAnalysis) -> str:
    """The SLO matrix for both bases: 'ok', or which SLO failed, per configuration x concurrency."""
    ttft, tps = analysis.settings["slo_ttft_ms"], analysis.settings["slo_tps"]
    parts = []
    for basis, title in (("p90", "P90 (TTFT P90; TPS P10, else P90*)"), ("mean", "mean")):
        frame = analysis.slo.filter(pl.col("basis") == basis)
        if frame.is_empty():
            continue
        frame = frame.with_columns(pl.Series("cell", [slo_cell(r) for r in frame.iter_rows(named=True)]))
        headers, rows = _pivot(frame, "cell", ["config"])
        heading = f"SLO matrix at {title}: TTFT <= {ttft:g} ms, TPS >= {tps:g} tok/s"
        parts.append(heading + "\n" + format_table(headers, rows))
    if not parts:
        return ""
    legend = _legend("".join(analysis.slo["marks"].drop_nulls().to_list()))
    text = "\n\n".join(parts) + "\ncells: ok = every judged SLO passes; otherwise the SLO that fails."
    return text + ("\n" + legend if legend else "")


def _stat_name(stat: str) -> str:
    return stat if stat in ("mean", "median") else stat.upper()


def _number(value: float, unit: str) -> str:
    """`value` at the precision of its unit (ms: 2 decimals, tok/s: 1), without the unit."""
    return (ms(value) if unit == "ms" else tok_s(value)).rsplit(" ", 1)[0]


def _judged_text(stat: str | None, value: float | None, unit: str, marks: str) -> str:
    if stat is None or value is None:
        return "-"
    return f"{_stat_name(stat)} {_number(value, unit)}{marks}"


def _printed_stats(rec: Mapping[str, Any], prefix: str, stats: Sequence[str], unit: str) -> str:
    """The statistics of one metric the file itself printed, e.g. 'mean 602.00, P99 1,787.00'."""
    not_printed = set((rec.get("derived") or "").split(",")) | set((rec.get("computed") or "").split(","))
    shown = [
        f"{_stat_name(stat)} {_number(rec[f'{prefix}_{stat}'], unit)}"
        for stat in stats
        if rec.get(f"{prefix}_{stat}") is not None and f"{prefix}_{stat}" not in not_printed
    ]
    return ", ".join(shown) or "-"


def render_basis(analysis: BenchAnalysis) -> str:
    """Per run whose P90 judgement does not rest on a printed P90 (TPS P10): the statistic used
    and, beside it, what the file itself printed."""
    judged = analysis.slo.filter(pl.col("basis") == "p90")
    rows_by_id = {r["row"]: r for r in analysis.rows.iter_rows(named=True)}
    table = []
    for j in judged.iter_rows(named=True):
        if j["ttft_source"] == "printed" and j["tps_source"] == "printed" and not j["stricter"]:
            continue
        rec = rows_by_id[j["row"]]
        table.append(
            [
                j["config"],
                j["concurrency"],
                _judged_text(j["ttft_stat"], j["ttft_ms"], "ms", j["ttft_marks"]),
                _printed_stats(rec, "ttft_ms", ("mean", "median", "p90", "p95", "p99"), "ms"),
                _judged_text(j["tps_stat"], j["tps"], "tok/s", j["tps_marks"]),
                _printed_stats(rec, "tps_per_user", ("mean", "median", "p10", "p90"), "tok/s"),
            ]
        )
    if not table:
        return ""
    headers = ["config", "c", "TTFT used, ms", "file's TTFT, ms", "TPS used, tok/s", "file's TPS, tok/s"]
    title = "P90 basis: the statistic each SLO was judged at, beside those the file prints"
    return title + "\n" + format_table(headers, table, wrap={0: _CONFIG_WRAP, 3: 28, 5: 22})


def render_capacity(analysis: BenchAnalysis) -> str:
    """C_max and users N (P90 and mean bases) and the peak aggregate output per configuration."""
    think = analysis.settings["think_s"]
    rows = [
        [
            r["config"],
            r["c_max_p90"],
            r["users_p90"],
            r["c_max_mean"],
            r["users_mean"],
            r["peak_aggregate_tps"],
            r["peak_aggregate_concurrency"],
        ]
        for r in analysis.configs.iter_rows(named=True)
    ]
    headers = ["config", "C_max P90", "users P90", "C_max mean", "users mean", "peak tok/s", "at c"]
    title = f"Capacity: N = C_max x (1 + {think:g} s / mean latency at C_max); peak = max TPS x c"
    notes = [
        line
        for note in _capacity_notes(analysis.configs)
        for line in wrap_text(note, TEXT_WIDTH, indent="  ")
    ]
    return title + "\n" + format_table(headers, rows) + "".join("\n" + line for line in notes)


def _capacity_notes(configs: pl.DataFrame) -> list[str]:
    """What a C_max P90 rests on when not every level was judged on both SLOs at the basis."""
    notes = []
    for r in configs.iter_rows(named=True):
        if r["c_max_p90"] is None:
            continue
        if r["unjudged_p90"]:
            notes.append(f"{r['config']}: C_max P90 rests on one SLO at some levels (see the SLO matrix)")
        if r["stricter_p90"]:
            notes.append(
                f"{r['config']}: some levels judged at a stricter percentile (^): C_max P90 is a lower bound"
            )
    return notes


def render_aggregate(analysis: BenchAnalysis) -> str:
    """Aggregate output per configuration x concurrency: the derived mean per-user TPS x c, and
    under it the output throughput the file itself measured, where it has one."""
    aggregate = analysis.aggregate
    if aggregate.is_empty():
        return ""
    levels = _levels(aggregate)
    rows: list[list[Any]] = []
    for (config,), group in aggregate.group_by(["config"], maintain_order=True):
        by_level = {r["concurrency"]: r for r in group.iter_rows(named=True)}
        rows.append([config, "derived", *(by_level.get(c, {}).get("aggregate_tps") for c in levels)])
        measured = [by_level.get(c, {}).get("output_throughput_tps") for c in levels]
        if any(value is not None for value in measured):
            rows.append(["", "measured", *measured])
    headers = ["config", "source", *(f"c={c}" for c in levels)]
    title = (
        "Aggregate output, tok/s: derived = mean per-user TPS x c (an estimate); measured = the"
        " file's own output throughput (tokens / duration)"
    )
    return "\n".join(wrap_text(title, TEXT_WIDTH)) + "\n" + format_table(headers, rows)


def render_spec(analysis: BenchAnalysis) -> str:
    """Spec / direct per-user TPS ratio per concurrency, and the break-even concurrency."""
    if not analysis.spec:
        return ""
    levels = sorted({p["concurrency"] for s in analysis.spec for p in s["speedup"]})
    headers = ["engine", *(f"c={c}" for c in levels), "break-even c (interpolated)", "between"]
    rows = []
    for summary in analysis.spec:
        ratios = {p["concurrency"]: p["ratio"] for p in summary["speedup"]}
        between = summary["break_even_between"]
        name = summary["engine"] + (f" {summary['label']}" if summary["label"] else "")
        rows.append(
            [
                name,
                *(None if ratios.get(c) is None else f"{ratios[c]:.2f}x" for c in levels),
                None if between is None else f"~{summary['break_even_concurrency']:.1f}",
                f"{between[0]}-{between[1]}" if between else summary["note"],
            ]
        )
    table = format_table(headers, rows)
    if any(s["break_even_between"] for s in analysis.spec):
        method = wrap_text(f"  break-even c: {BREAK_EVEN_METHOD}", TEXT_WIDTH, indent="    ")
        table += "\n" + "\n".join(method)
    return "Spec speedup (spec TPS / direct TPS, same engine)\n" + table


def render_checks(analysis: BenchAnalysis) -> str:
    """Every check that is not 'ok', worst first, and a count per severity."""
    checks = analysis.checks
    counts = {s: checks.filter(pl.col("severity") == s).height for s in SEVERITIES}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    shown = (
        checks.filter(pl.col("severity") != "ok")
        .with_columns(rank=pl.col("severity").replace_strict(dict(zip(SEVERITIES, range(4), strict=True))))
        .sort("rank", descending=True, maintain_order=True)
    )
    rows = [
        [r["severity"], r["code"], r["config"], r["concurrency"], r["message"]]
        for r in shown.iter_rows(named=True)
    ]
    if not rows:
        return f"Checks: {summary}\n(all consistent)"
    headers = ["severity", "code", "config", "c", "message"]
    return f"Checks: {summary}\n" + format_table(headers, rows, wrap=_check_wraps(headers, rows))


def _check_wraps(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[int, int]:
    """Wrap widths for the checks table: the config name at 18, the message in what is left of
    `TEXT_WIDTH` (at least 30 columns)."""
    wrap = min(_CONFIG_WRAP, max(len(str(r[2])) for r in rows))
    config = max(len(piece) for r in rows for piece in wrap_text(str(r[2]), wrap))
    fixed = [max([len(h)] + [len(_cell(r[i])) for r in rows]) for i, h in enumerate(headers[:4]) if i != 2]
    used = sum(fixed) + max(config, len(headers[2])) + 2 * (len(headers) - 1)
    return {2: wrap, 4: max(_MIN_MESSAGE, TEXT_WIDTH - used)}


def render_runs(analysis: BenchAnalysis) -> str:
    """Every run read, with the numbers its file gave: the level (concurrency, else request
    rate), requests completed and failed, tokens per request, duration, throughput, latencies.
    A figure the file does not give (or that a run of failures cannot have) is `-`."""
    rows = []
    for r in analysis.rows.iter_rows(named=True):
        rate = r.get("request_rate")
        level = (
            f"c={r['concurrency']}"
            if r.get("concurrency") is not None
            else (
                "rate inf"
                if rate is not None and rate == float("inf")
                else f"{rate:g} req/s"
                if rate
                else "-"
            )
        )
        rows.append(
            [
                r["config"],
                r.get("engine") or "unknown",
                level,
                r.get("num_requests"),
                r.get("failed"),
                r.get("workload"),
                _rounded(r.get("duration_s"), 1),
                _rounded(r.get("output_throughput_tps"), 1),
                _rounded(r.get("ttft_ms_mean"), 1),
                _rounded(r.get("ttft_ms_median"), 1),
                _rounded(r.get("ttft_ms_p99"), 1),
                _rounded(r.get("tpot_ms_mean"), 2),
                _rounded(r.get("itl_ms_mean"), 2),
            ]
        )
    if not rows:
        return ""
    headers = [
        "config",
        "engine",
        "level",
        "ok",
        "failed",
        "workload",
        "secs",
        "out tok/s",
        "TTFT ms",
        "TTFT p50",
        "TTFT p99",
        "TPOT ms",
        "ITL ms",
    ]
    return "Runs read (mean unless marked; - where the file gives none)\n" + format_table(
        headers, rows, wrap={0: _CONFIG_WRAP}
    )


def _rounded(value: Any, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


def render_text(analysis: BenchAnalysis) -> str:
    """All tables of `logparse bench` as plain text."""
    sections = [
        render_runs(analysis),
        render_slo(analysis),
        render_basis(analysis),
        render_capacity(analysis),
        render_aggregate(analysis),
        render_spec(analysis),
        render_checks(analysis),
    ]
    return "\n\n".join(section for section in sections if section)


_LABEL = 12  # the width of the reconcile labels ('server log  ', '  problem   ')


def _labelled(label: str, text: str) -> list[str]:
    """`text` after a fixed-width label, wrapped to `TEXT_WIDTH` under its own start."""
    return wrap_text(label.ljust(_LABEL) + text, TEXT_WIDTH, indent=" " * _LABEL)


def _server_line(result: dict[str, Any]) -> str:
    phase = result.get("server_phase") or {}
    source = for_terminal(str(result.get("server_log")))
    if not phase:
        why = result.get("no_phases_reason")
        return f"{source}: no load phase found" + (f" ({why})" if why else "")
    stable = phase.get("stable_gen_tps")
    shown = f"{tok_s(stable)} over {phase.get('stable_samples')} samples" if stable else "no stable window"
    inputs = phase.get("input_tokens")
    shown_input = tokens_label(inputs, estimated=bool(phase.get("input_tokens_estimated"))) if inputs else "?"
    matched = phase.get("matched_by")
    how = (
        f" (matched by {', '.join(matched)})"
        if matched
        else " (nothing the client states matches a phase: the longest stable window)"
        if matched is not None
        else ""
    )
    return (
        f"{source} ({result.get('engine')}): phase {phase.get('phase')}{how}, {n_text(phase.get('concurrency'))},"
        f" {shown_input} input tokens per request{_output(phase)}, stable decode {shown}"
    )


def _output(phase: dict[str, Any]) -> str:
    """`, ~3K output tokens per request` when the phase's output length is known."""
    tokens = phase.get("output_tokens")
    return "" if not tokens else f", {tokens_label(tokens, estimated=True)} output"


def _client_line(run: dict[str, Any]) -> str:
    bound = run.get("physical_bound_tps")
    facts = ", ".join(str(v) for v in (run.get("engine"), run.get("workload")) if v)
    return (
        f"{for_terminal(str(run['config']))}"
        + (f" ({for_terminal(facts)})" if facts else "")
        + f" {_level(run)}: {tok_s(run['client_output_tps'])} output"
        + (f"; physical bound {tok_s(bound)} ({run['bound_ratio']:.1f}x)" if bound else "")
    )


def _level(run: dict[str, Any]) -> str:
    """A run's load level: its concurrency, else its request rate."""
    if run.get("concurrency") is not None:
        return f"c={run['concurrency']}"
    rate = run.get("request_rate")
    return f"at {rate:g} req/s" if rate else "at an unlimited or unstated rate"


def render_reconcile(result: dict[str, Any]) -> str:
    """The reconcile verdict as readable text, wrapped to `TEXT_WIDTH` columns."""
    by_run = any("server_phase" in run for run in result.get("runs", []))
    lines = [] if by_run else _labelled("server log", _server_line(result))
    for run in result.get("runs", []):
        if by_run:
            lines += _labelled("server log", _server_line({**result, "server_phase": run["server_phase"]}))
        lines += _labelled("client", _client_line(run))
        for problem in run["problems"]:
            lines += _labelled("  problem", problem)
        for note in run["notes"]:
            lines += _labelled("  note", note)
    for problem in result.get("problems") or []:
        lines += _labelled("problem", problem)
    lines += _labelled("trust", f"{result['trust']}: {result['reason']}")
    return "\n".join(lines)
