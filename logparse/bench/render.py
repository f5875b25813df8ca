"""Plain-text, aligned tables of a `BenchAnalysis` for the terminal."""
from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from logparse.analysis.summary import TEXT_WIDTH
from logparse.analysis.text import tokens_label
from logparse.bench.analyze import BenchAnalysis
from logparse.bench.checks import SEVERITIES
from logparse.bench.units import tok_s
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


def _slo_cell(ttft_ok: bool | None, tps_ok: bool | None, optimistic: bool) -> str:
    failed = [name for name, ok in (("TTFT", ttft_ok), ("TPS", tps_ok)) if ok is False]
    unknown = ttft_ok is None or tps_ok is None
    text = "+".join(failed) if failed else ("?" if ttft_ok is None and tps_ok is None else "ok")
    return text + ("?" if unknown and text != "?" else "") + ("*" if optimistic else "")


def render_slo(analysis: BenchAnalysis) -> str:
    """The SLO matrix for both bases: 'ok', or which SLO failed, per configuration x concurrency."""
    ttft, tps = analysis.settings["slo_ttft_ms"], analysis.settings["slo_tps"]
    parts = []
    for basis, title in (("p90", "P90 (TTFT P90; TPS P10, else P90*)"), ("mean", "mean")):
        frame = analysis.slo.filter(pl.col("basis") == basis).with_columns(
            cell=pl.struct("ttft_ok", "tps_ok", "tps_optimistic").map_elements(
                lambda s: _slo_cell(s["ttft_ok"], s["tps_ok"], s["tps_optimistic"]), return_dtype=pl.String
            )
        )
        if frame.is_empty():
            continue
        headers, rows = _pivot(frame, "cell", ["config"])
        heading = f"SLO matrix at {title}: TTFT <= {ttft:g} ms, TPS >= {tps:g} tok/s"
        parts.append(heading + "\n" + format_table(headers, rows))
    legend = "cells: ok = both pass; otherwise the SLO that fails. * TPS judged at its optimistic P90."
    return "\n\n".join(parts) + ("\n" + legend if parts else "")


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
    return title + "\n" + format_table(headers, rows)


def render_aggregate(analysis: BenchAnalysis) -> str:
    """Aggregate output (mean per-user TPS x concurrency) per configuration x concurrency."""
    if analysis.aggregate.is_empty():
        return ""
    headers, rows = _pivot(analysis.aggregate, "aggregate_tps", ["config"])
    return "Aggregate output, tok/s (mean TPS x c)\n" + format_table(headers, rows)


def render_spec(analysis: BenchAnalysis) -> str:
    """Spec / direct per-user TPS ratio per concurrency, and the break-even concurrency."""
    if not analysis.spec:
        return ""
    levels = sorted({p["concurrency"] for s in analysis.spec for p in s["speedup"]})
    headers = ["engine", *(f"c={c}" for c in levels), "break-even c", "between"]
    rows = []
    for summary in analysis.spec:
        ratios = {p["concurrency"]: p["ratio"] for p in summary["speedup"]}
        between = summary["break_even_between"]
        name = summary["engine"] + (f" {summary['label']}" if summary["label"] else "")
        rows.append(
            [
                name,
                *(None if ratios.get(c) is None else f"{ratios[c]:.2f}x" for c in levels),
                summary["break_even_concurrency"],
                f"{between[0]}-{between[1]}" if between else summary["note"],
            ]
        )
    return "Spec speedup (spec TPS / direct TPS, same engine)\n" + format_table(headers, rows)


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


def render_text(analysis: BenchAnalysis) -> str:
    """All tables of `logparse bench` as plain text."""
    sections = [
        render_slo(analysis),
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
        return f"{source}: no load phase found"
    stable = phase.get("stable_gen_tps")
    shown = f"{tok_s(stable)} over {phase.get('stable_samples')} samples" if stable else "no stable window"
    inputs = phase.get("input_tokens")
    shown_input = tokens_label(inputs, estimated=bool(phase.get("input_tokens_estimated"))) if inputs else "?"
    return (f"{source} ({result.get('engine')}): phase {phase.get('phase')}, N={phase.get('concurrency')},"
            f" {shown_input} input tokens per request, stable decode {shown}")


def _client_line(run: dict[str, Any]) -> str:
    bound = run.get("physical_bound_tps")
    facts = ", ".join(str(v) for v in (run.get("engine"), run.get("workload")) if v)
    return (f"{for_terminal(str(run['config']))}" + (f" ({for_terminal(facts)})" if facts else "")
            + f" c={run['concurrency']}: {tok_s(run['client_output_tps'])} output"
            + (f"; physical bound {tok_s(bound)} ({run['bound_ratio']:.1f}x)" if bound else ""))


def render_reconcile(result: dict[str, Any]) -> str:
    """The reconcile verdict as readable text, wrapped to `TEXT_WIDTH` columns."""
    lines = _labelled("server log", _server_line(result))
    for run in result.get("runs", []):
        lines += _labelled("client", _client_line(run))
        for problem in run["problems"]:
            lines += _labelled("  problem", problem)
        for note in run["notes"]:
            lines += _labelled("  note", note)
    lines += _labelled("trust", f"{result['trust']}: {result['reason']}")
    return "\n".join(lines)
