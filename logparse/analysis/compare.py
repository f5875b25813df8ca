"""Compare several logs side by side: stable decode throughput and its degradation with context."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from logparse.analysis.analyze import Analysis
from logparse.analysis.comparable import with_comparability
from logparse.analysis.degradation import degradation, render_degradation
from logparse.analysis.identity import IDENTITY_KEYS
from logparse.analysis.text import fmt, n_text, render_table, tokens_label
from logparse.escape import for_terminal

COMPARE_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "engine": pl.String(),
    "phase": pl.Int64(),
    "input_tokens": pl.Int64(),
    "input_tokens_estimated": pl.Boolean(),
    "input_label": pl.String(),
    "concurrency": pl.Int64(),
    "samples": pl.Int64(),
    "duration_s": pl.Float64(),
    "gen_tps_mean": pl.Float64(),
    "gen_tps_min": pl.Float64(),
    "gen_tps_max": pl.Float64(),
    "per_request_tps": pl.Float64(),
    "per_request_tps_peak": pl.Float64(),
    "ms_per_token": pl.Float64(),
    "cv": pl.Float64(),
    "trusted": pl.Boolean(),
    "note": pl.String(),
    "segment": pl.Int64(),
    "input_confidence": pl.String(),
    "model": pl.String(),
    "tensor_parallel": pl.Int64(),
    "data_parallel": pl.Int64(),
    "speculative": pl.Boolean(),
    "quantization": pl.String(),
}


@dataclass(frozen=True, slots=True)
class NotAnalysed:
    """A log that could not be read or analysed (no such file, engine not detected, ...), and why."""

    source: str
    reason: str


def compare_rows(
    analyses: Sequence[Analysis | NotAnalysed],
    *,
    tolerance: float = 0.1,
    no_content: Sequence[str | None] | None = None,
) -> pl.DataFrame:
    """One row per (log, phase): input length, N and the stable window's throughput.

    Phases without a stable window keep a row with null throughput and the reason in ``note``;
    a log without phases keeps one row (``phase`` null) with ``no phases: <why>`` in ``note``,
    and a log that could not be analysed (`NotAnalysed`) one with ``not analysed: <why>``, so
    every log given has at least one row. ``no_content`` (aligned with `analyses`) says which
    logs hold nothing to tell an engine by (``headline.EMPTY_FILE``, ``BLANK_LINES_ONLY``, else
    None): their rows claim no engine, as an empty log's do. ``input_label`` groups input
    lengths within `tolerance` of each other (an estimated vLLM input and an exact SGLang one of
    the same benchmark get the same label).
    """
    why = list(no_content) if no_content is not None else [None] * len(analyses)
    rows = []
    for a, nothing in zip(analyses, why, strict=True):
        if isinstance(a, NotAnalysed):
            rows.append(
                {**dict.fromkeys(COMPARE_SCHEMA), "source": a.source, "note": f"not analysed: {a.reason}"}
            )
        elif a.phases.height:
            rows += _phase_rows(a)
        else:
            rows.append(_no_phase_row(a, claims_engine=nothing is None))
    frame = pl.DataFrame(rows, schema=COMPARE_SCHEMA, orient="row")
    return frame.with_columns(pl.Series("input_label", _labels(frame, tolerance), dtype=pl.String))


def _phase_rows(a: Analysis) -> list[dict[str, object]]:
    """A `compare_rows` row for each phase of one log."""
    windows = {r["phase"]: r for r in a.windows.iter_rows(named=True)}
    reasons = {r["phase"]: r["reason"] for r in a.no_window.iter_rows(named=True)}
    identities = {r["segment"]: {k: r[k] for k in IDENTITY_KEYS} for r in a.segments.iter_rows(named=True)}
    rows = []
    for ph in a.phases.iter_rows(named=True):
        w = windows.get(ph["phase"], {})
        rows.append(
            {
                **dict.fromkeys(COMPARE_SCHEMA),
                "source": a.source,
                "engine": a.engine,
                "phase": ph["phase"],
                "input_tokens": ph["input_tokens"],
                "input_tokens_estimated": ph["input_tokens_estimated"],
                "input_confidence": ph.get("input_confidence"),
                "segment": ph.get("segment"),
                **identities.get(ph.get("segment"), a.identity),
                "concurrency": ph["concurrency"],
                **{
                    k: w.get(k)
                    for k in (
                        "samples",
                        "duration_s",
                        "gen_tps_mean",
                        "gen_tps_min",
                        "gen_tps_max",
                        "per_request_tps",
                        "per_request_tps_peak",
                        "ms_per_token",
                        "cv",
                        "trusted",
                    )
                },
                "note": w.get("note") if w else f"no stable window: {reasons.get(ph['phase'], '?')}",
            }
        )
    return rows


def _no_phase_row(a: Analysis, *, claims_engine: bool = True) -> dict[str, object]:
    """The one `compare_rows` row of a log without phases: nulls, and why in ``note``."""
    # An empty (or blank) log's engine is only the parser's pick: it did not write anything.
    engine = a.engine if claims_engine and not a.empty else None
    return {
        **dict.fromkeys(COMPARE_SCHEMA),
        "source": a.source,
        "engine": engine,
        "note": f"no phases: {a.no_phases_reason or 'no decode activity'}",
    }


def _labels(frame: pl.DataFrame, tolerance: float) -> list[str | None]:
    values = sorted({v for v in frame.get_column("input_tokens").to_list() if v is not None})
    buckets: list[list[int]] = []
    for v in values:
        if buckets and v <= buckets[-1][0] * (1 + tolerance):
            buckets[-1].append(v)
        else:
            buckets.append([v])
    exact = set(
        frame.filter(~pl.col("input_tokens_estimated").fill_null(True)).get_column("input_tokens").to_list()
    )
    label_of: dict[int, str] = {}
    for bucket in buckets:
        anchor = next((v for v in bucket if v in exact), None)
        label = tokens_label(anchor) if anchor is not None else tokens_label(bucket[0], estimated=True)
        label_of.update({v: label for v in bucket})
    return [None if v is None else label_of[v] for v in frame.get_column("input_tokens").to_list()]


def compare_degradation(rows: pl.DataFrame) -> pl.DataFrame:
    """Degradation ratios per engine across the compared logs (`degradation.DEGRADATION_SCHEMA`):
    only between trusted windows of comparable runs (same engine, model, TP/DP sizes, spec
    decoding, quantisation and N: `comparable`), one per input length (the one with most
    samples: windows of equal input lengths give no ratio); the others are
    `comparability_warnings`."""
    usable = with_comparability(
        rows.filter(pl.col("per_request_tps").is_not_null() & pl.col("trusted").fill_null(False))
    )
    # One window per input length and setup: two 16K windows make no "16K -> 16K" ratio.
    usable = usable.sort("samples", descending=True, nulls_last=True, maintain_order=True).unique(
        ["comparable", "input_label"], keep="first", maintain_order=True
    )
    engine_of = dict(zip(usable.get_column("comparable").to_list(), usable.get_column("engine").to_list()))
    out = degradation(usable, by="comparable", label="source")
    return out.with_columns(pl.col("group").replace_strict(engine_of, default=None).alias("group")).rename(
        {"group": "engine"}
    )


WARNING_SCHEMA: dict[str, pl.DataType] = {"source": pl.String(), "code": pl.String(), "message": pl.String()}


def compare_warnings(analyses: Sequence[Analysis | NotAnalysed]) -> pl.DataFrame:
    """The problems met reading each log (its ``input_*`` diagnostics): ``source``, ``code``,
    ``message``, in the order of `analyses` (a `NotAnalysed` log has none: its row says why)."""
    parts = [
        a.diagnostics.filter(pl.col("code").str.starts_with("input_")).select(
            pl.lit(a.source, dtype=pl.String).alias("source"), "code", "message"
        )
        for a in analyses
        if not isinstance(a, NotAnalysed)
    ]
    return pl.concat([pl.DataFrame(schema=WARNING_SCHEMA), *parts], how="vertical_relaxed")


def render_compare(rows: pl.DataFrame, degr: pl.DataFrame, warnings: pl.DataFrame | None = None) -> str:
    """The long table (each row's own input length, `~` when estimated), the Core Result table
    (scenarios × engines) with the rows it leaves out and why, or the degradation table, the
    notes of rows, then `warnings` (`compare_warnings`) when given."""
    body = []
    for r in rows.sort("engine", "input_tokens", nulls_last=True).iter_rows(named=True):
        body.append(
            [
                for_terminal(r["source"]),
                r["engine"] or "-",
                fmt(r["phase"]),
                _own_input(r),
                fmt(r["concurrency"]),
                fmt(r["samples"]),
                fmt(r["gen_tps_mean"], 1),
                "-" if r["gen_tps_min"] is None else f"{r['gen_tps_min']:.0f}-{r['gen_tps_max']:.0f}",
                fmt(r["per_request_tps"], 2),
                fmt(r["ms_per_token"], 1),
                "" if r["trusted"] is None else ("yes" if r["trusted"] else "NO"),
            ]
        )
    out = [
        render_table(
            body,
            [
                "log",
                "engine",
                "phase",
                "input",
                "N",
                "samples",
                "stable tok/s",
                "min-max",
                "tok/s/req",
                "ms/tok",
                "trusted",
            ],
            align="lllrrrrrrrl",
        )
    ]
    core = core_result(rows, degr)
    if core:
        out += ["", "Core Result", core]
        left = core_result_left_out(rows)
        if left:
            out += ["", *(for_terminal(line) for line in left)]
    elif degr.height:  # the Core Result table, when shown, already holds these ratios
        out += [
            "",
            "degradation (per-request decode throughput)",
            render_degradation(degr.to_dicts(), label="engine"),
        ]
    notes = [_note_line(r) for r in rows.iter_rows(named=True) if r["note"]]
    if notes:
        out += ["", *notes]
    if warnings is not None and warnings.height:
        out += [
            "",
            *(
                for_terminal(
                    f"{w['source']}: input warning: {w['message']}"
                    if w["code"].startswith("input_")
                    else f"warning: {w['code']}: {w['message']}"
                )
                for w in warnings.iter_rows(named=True)
            ),
        ]
    return "\n".join(out)


def _own_input(row: dict[str, Any]) -> str:
    """A row's own input length, `~` when estimated (its group's label may be another log's exact one)."""
    if row["input_tokens"] is None:
        return "-"
    return tokens_label(row["input_tokens"], estimated=bool(row["input_tokens_estimated"]))


def _note_line(row: dict[str, object]) -> str:
    """`log phase N: note`, or `log: note` for a log without phases (text from the log escaped)."""
    where = "" if row["phase"] is None else f" phase {row['phase']}"
    return for_terminal(f"{row['source']}{where}: {row['note']}")


CELL_KEY = ("engine", "input_label", "concurrency")


def core_cells(rows: pl.DataFrame) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """The rows that make the Core Result, and those left out with why (``source``, ``phase``,
    ``why``). A cell is one trusted window per engine, input length and N (`CELL_KEY`); of
    several, the one with the most samples (then the first given) holds it."""
    usable = rows.filter(
        pl.col("trusted").fill_null(False)
        & pl.col("input_label").is_not_null()
        & pl.col("engine").is_not_null()
    )
    ranked = usable.with_row_index("_order").sort(
        ["samples", "_order"], descending=[True, False], nulls_last=True
    )
    cells = ranked.unique(list(CELL_KEY), keep="first", maintain_order=True).sort("_order").drop("_order")
    holder = {tuple(r[k] for k in CELL_KEY): r for r in cells.iter_rows(named=True)}
    kept = {(r["source"], r["phase"]) for r in cells.iter_rows(named=True)}
    left: list[dict[str, Any]] = []
    for r in rows.iter_rows(named=True):
        if (r["source"], r["phase"]) in kept:
            continue
        if r["trusted"] and r["input_label"] is not None and r["engine"] is not None:
            h = holder[tuple(r[k] for k in CELL_KEY)]
            where = h["source"] + ("" if h["phase"] is None else f" phase {h['phase']}")
            why = (
                f"another trusted window of {r['engine']} at {r['input_label']}, {n_text(r['concurrency'])} "
                f"holds that cell ({where}, {h['samples']} samples)"
            )
        elif r["trusted"] and r["input_label"] is None:
            why = "its input length is unknown"
        elif r["per_request_tps"] is not None:
            why = f"its stable window is not trusted ({r['note'] or 'too short'})"
        else:
            why = r["note"] or "no stable window"
        left.append({"source": r["source"], "phase": r["phase"], "why": why})
    return cells, left


def core_result_left_out(rows: pl.DataFrame) -> list[str]:
    """`log phase K: left out of the Core Result: why`, for each row not in it (`core_cells`)."""
    out = []
    for x in core_cells(rows)[1]:
        where = x["source"] + ("" if x["phase"] is None else f" phase {x['phase']}")
        out.append(f"{where}: left out of the Core Result: {x['why']}")
    return out


def core_result_frame(rows: pl.DataFrame, degr: pl.DataFrame) -> pl.DataFrame | None:
    """The cells of the Core Result table (see `core_result`) as a frame of strings: ``scenario``,
    one column per engine (sorted), ``result``; one pair of lines per input length and N, the
    cells exactly as the text shows them. None unless two engines have a trusted window: every
    (engine, input length, N) that has one is kept, whatever the other logs hold
    (`core_result_left_out` names the rest and why)."""
    usable, _ = core_cells(rows)
    engines = usable.get_column("engine").unique().sort().to_list()
    if len(engines) < 2:
        return None
    order = (
        usable.group_by("input_label", "concurrency")
        .agg(pl.col("input_tokens").min())
        .sort("input_tokens", "concurrency", nulls_last=True)
        .select("input_label", "concurrency")
        .rows()
    )
    table_rows = []
    for label, n in order:
        part = {
            r["engine"]: r
            for r in usable.filter(
                (pl.col("input_label") == label) & (pl.col("concurrency").eq_missing(n))
            ).iter_rows(named=True)
        }
        shown = _scenario_label(label, part)
        cells = [f"~{part[e]['gen_tps_mean']:.0f} tok/s" if e in part else "-" for e in engines]
        table_rows.append([f"{shown} stable decode ({n_text(n)})", *cells, _leader(part, "gen_tps_mean")])
        cells = [
            f"{part[e]['per_request_tps']:.1f} tok/s, {part[e]['ms_per_token']:.1f} ms" if e in part else "-"
            for e in engines
        ]
        table_rows.append([f"{shown} per request", *cells, ""])
    labels = {
        (r["source"], r["input_tokens"]): r["input_label"]
        for r in rows.iter_rows(named=True)
        if r["input_label"]
    }
    estimated = {
        (r["source"], r["input_tokens"]): r["engine"]
        for r in usable.iter_rows(named=True)
        if r["input_tokens_estimated"]
    }
    pairs: dict[tuple[str | None, str | None], dict[str, dict[str, Any]]] = {}
    for d in degr.iter_rows(named=True):
        key = (
            labels.get((d["from_label"], d["from_input_tokens"])),
            labels.get((d["to_label"], d["to_input_tokens"])),
        )
        if key[0] != key[1]:
            pairs.setdefault(key, {})[d["engine"]] = d
    for (lo, hi), by_engine in pairs.items():
        if lo is None or hi is None:
            continue
        cells = [
            f"{by_engine[e]['ratio']:.2f}x (peak/mean {by_engine[e]['ratio_peak_over_mean']:.2f}x)"
            if e in by_engine
            else "-"
            for e in engines
        ]
        best = min(by_engine, key=lambda e: by_engine[e]["ratio"]) if len(by_engine) > 1 else None
        marked = sorted(
            {
                estimated[key]
                for d in by_engine.values()
                for key in ((d["from_label"], d["from_input_tokens"]), (d["to_label"], d["to_input_tokens"]))
                if key in estimated
            }
        )
        mark = f" (~ {', '.join(marked)})" if marked else ""
        table_rows.append(
            [f"decode degradation {lo}→{hi}{mark}", *cells, f"{best} scales better" if best else ""]
        )
    columns = ["scenario", *engines, "result"]
    return pl.DataFrame(table_rows, schema={c: pl.String() for c in columns}, orient="row")


def _scenario_label(label: str, part: dict[str, dict[str, Any]]) -> str:
    """The input length of a scenario with its mark: `~64K` when every engine's is estimated,
    `64K (~ vllm)` when some are (the label is then another engine's exact length)."""
    estimated = sorted(e for e, r in part.items() if r["input_tokens_estimated"])
    if not estimated:
        return label
    if len(estimated) == len(part):
        return label if label.startswith("~") else f"~{label}"
    return f"{label} (~ {', '.join(estimated)})"


def core_result(rows: pl.DataFrame, degr: pl.DataFrame) -> str | None:
    """A scenario × engine table like a write-up's "Core Result" (None unless two engines have a
    trusted window; see `core_result_frame`)."""
    frame = core_result_frame(rows, degr)
    if frame is None:
        return None
    engines = frame.width - 2
    return render_table(frame.rows(), frame.columns, align="l" + "r" * engines + "l")


def _leader(part: dict[str, dict[str, object]], key: str) -> str:
    if len(part) < 2:
        return ""
    ranked = sorted(part.items(), key=lambda kv: kv[1][key], reverse=True)  # type: ignore[arg-type, return-value]
    (best, b), (_, second) = ranked[0], ranked[1]
    return f"{best} leads by ~{b[key] / second[key]:.2f}x"  # type: ignore[operator]
