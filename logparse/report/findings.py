"""One-line captions that state what each chart shows, worded from the analysis figures."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from logparse.analysis.text import n_text
from logparse.report.frames import LogRun, tokens_label

if TYPE_CHECKING:
    from logparse.bench.analyze import BenchAnalysis


def _f(value: float | None, digits: int = 1) -> str:
    return "?" if value is None else f"{value:,.{digits}f}"


def crossovers(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Where two series swap order between consecutive context lengths both were measured at.

    `frame` is `frames.degradation_frame` output. Returns ``{"leader", "other", "from", "to"}``
    dicts: `leader` is ahead at the longer context `to`, `other` was ahead at `from`.
    """
    out = []
    series = frame.get_column("series").unique(maintain_order=True).to_list()
    for i, a in enumerate(series):
        for b in series[i + 1 :]:
            fa = (
                frame.filter(pl.col("series") == a)
                .group_by("input_tokens")
                .agg(pl.col("per_request_tps").mean())
            )
            fb = (
                frame.filter(pl.col("series") == b)
                .group_by("input_tokens")
                .agg(pl.col("per_request_tps").mean())
            )
            both = fa.join(fb, on="input_tokens", suffix="_b").sort("input_tokens")
            rows = both.rows()
            for (c1, a1, b1), (c2, a2, b2) in itertools.pairwise(rows):
                if (a1 - b1) * (a2 - b2) < 0:
                    leader, other = (a, b) if a2 > b2 else (b, a)
                    out.append({"leader": leader, "other": other, "from": c1, "to": c2})
    return out


def degradation_caption(frame: pl.DataFrame, ratios: pl.DataFrame) -> str:
    """E.g. "vllm: stable decode throughput per request fell 3.03× from 64K to 200K; sglang: …;
    sglang overtakes vllm between 64K and 200K".

    The factor is the product of the analysis' consecutive ratios (shortest against longest
    context) for a series with one window per context; a series with several windows at one
    context (several N) gets none, its points are labelled with N instead.
    """
    parts = []
    single = _one_window_per_context(frame)
    for (group,), part in ratios.group_by("group", maintain_order=True):
        if group not in single:
            continue
        first, last = part.row(0, named=True), part.row(-1, named=True)
        ratio = 1.0
        for r in part.get_column("ratio").to_list():
            ratio *= r
        verb = "fell" if ratio >= 1 else "rose"
        factor = ratio if ratio >= 1 else 1 / ratio
        parts.append(
            f"{group}: stable decode throughput per request {verb} {factor:.2f}× from "
            f"{tokens_label(first['from_input_tokens'])} to {tokens_label(last['to_input_tokens'])}"
        )
    for c in crossovers(frame.filter(pl.col("series").is_in(sorted(single)))):
        parts.append(
            f"{c['leader']} overtakes {c['other']} between {tokens_label(c['from'])} and "
            f"{tokens_label(c['to'])}"
        )
    several = [s for s in frame.get_column("series").unique(maintain_order=True).to_list() if s not in single]
    if several:
        parts.append(f"{', '.join(several)}: several N at one context length (points labelled with N)")
    if not parts and not frame.is_empty():
        row = frame.row(0, named=True)
        parts.append(
            f"one context length only: {row['series']} decodes {_f(row['per_request_tps'])} tok/s per "
            f"request ({_f(row['ms_per_token'])} ms/token) at {tokens_label(row['input_tokens'])}, "
            f"{n_text(row['concurrency'])}"
        )
    return "; ".join(parts)


def _one_window_per_context(frame: pl.DataFrame) -> set[str]:
    label = "context_label" if "context_label" in frame.columns else "input_tokens"
    counts = frame.group_by("series", label).len()
    worst = counts.group_by("series").agg(pl.col("len").max())
    return set(worst.filter(pl.col("len") == 1).get_column("series").to_list())


def timeline_caption(run: LogRun, events: pl.DataFrame) -> str:
    """The stable window(s) of the log, or why there is none, and the events marked."""
    a = run.analysis
    assert a is not None
    parts = []
    for row in a.windows.iter_rows(named=True):
        short = (
            ""
            if row["trusted"]
            else f" (not trusted: {str(row['note'] or '').removeprefix('not trusted: ')})"
        )
        parts.append(
            f"phase {row['phase']}: stable window of {n_text(row['concurrency'])} for "
            f"{_f(row['duration_s'], 0)} s at {_f(row['gen_tps_mean'])} tok/s "
            f"({_f(row['per_request_tps'])} per request, CV {_f((row['cv'] or 0) * 100, 0)}%){short}"
        )
    for row in a.no_window.iter_rows(named=True):
        parts.append(f"phase {row['phase']}: no stable window ({row['reason']})")
    if a.phases.is_empty():
        parts.append("no phase of load found")
    if not events.is_empty():
        counts = events.group_by("event", maintain_order=True).len()
        parts.append("marked: " + ", ".join(f"{n} {e}" for e, n in counts.iter_rows()))
    return "; ".join(parts)


def kv_caption(run: LogRun, usage: pl.DataFrame, unit: str) -> str:
    """Peak KV usage against the pool."""
    a = run.analysis
    assert a is not None
    peak = usage.get_column("used").max()
    if peak is None:
        return "no KV usage printed"
    pool = a.startup.get("kv_pool_tokens")
    if unit == "tokens":
        return f"KV cache in use peaked at {float(peak):,.0f} tokens" + (  # type: ignore[arg-type]
            f" of a {pool:,}-token pool" if pool else ""
        )
    where = f"the {pool:,}-token pool" if pool else "the pool (size not printed)"
    return f"KV cache usage peaked at {float(peak):.0%} of {where}"  # type: ignore[arg-type]


def prefill_caption(chunks: pl.DataFrame, run: LogRun) -> str:
    """The longest request: its first chunk's throughput against its slowest chunk's."""
    if chunks.is_empty():
        return "no prefill chunks inside a phase"
    per = chunks.group_by("request").agg(pl.len().alias("n"), pl.col("line_no").min().alias("first"))
    best = per.sort(["n", "first"], descending=[True, False]).row(0, named=True)
    req = chunks.filter(pl.col("request") == best["request"]).sort("chunk")
    first = req.row(0, named=True)
    low = req.sort("input_tps").row(0, named=True)
    out = []
    if req.height > 1 and first["input_tps"] and low["chunk"] != first["chunk"]:
        change = low["input_tps"] / first["input_tps"] - 1
        out.append(
            f"request {best['request']}: chunk throughput fell from {first['input_tps']:,.0f} tok/s with "
            f"{first['cached_tokens']:,} tokens cached to {low['input_tps']:,.0f} tok/s with "
            f"{low['cached_tokens']:,} cached ({change:+.0%}, {req.height} chunks)"
        )
    a = run.analysis
    if a is not None and not a.prefill.is_empty():
        means = [
            f"phase {r['phase']} {r['input_tps_mean']:,.0f}"
            for r in a.prefill.iter_rows(named=True)
            if r["input_tps_mean"] is not None
        ]
        if means:
            out.append("mean chunk input tok/s " + ", ".join(means))
    return "; ".join(out) or f"{chunks.height} prefill chunks"


def spec_caption(run: LogRun) -> str:
    """Acceptance length and rate per phase, and the share of draft work thrown away."""
    a = run.analysis
    assert a is not None
    parts = []
    for row in a.spec.iter_rows(named=True):
        bits = []
        if row["mean_accept_len"] is not None:
            bits.append(f"{row['mean_accept_len']:.2f} tokens per step")
        if row["accept_rate"] is not None:
            bits.append(f"draft acceptance {row['accept_rate']:.1%}")
        if row["wasted_draft_pct"] is not None:
            bits.append(f"{row['wasted_draft_pct']:.0f}% of drafted tokens rejected")
        parts.append(f"phase {row['phase']}: " + ", ".join(bits))
    return "; ".join(parts)


def position_caption(positions: pl.DataFrame) -> str:
    """First and last draft position's acceptance rate, per phase."""
    parts = []
    for (label,), part in positions.group_by("phase_label", maintain_order=True):
        part = part.sort("position")
        first, last = part.row(0, named=True), part.row(-1, named=True)
        parts.append(
            f"{label}: position 1 accepted {first['rate']:.0%}, position {last['position']} "
            f"{last['rate']:.1%}"
        )
    return "; ".join(parts)


def draft_caption(draft: pl.DataFrame) -> str:
    """Drafted vs accepted throughput per phase."""
    wide = draft.pivot(on="measure", index="phase_label", values="tps")
    parts = []
    for row in wide.iter_rows(named=True):
        d, acc = row.get("drafted"), row.get("accepted")
        if d and acc is not None:
            parts.append(
                f"{row['phase_label']}: {d:,.0f} drafted vs {acc:,.1f} accepted tok/s "
                f"({1 - acc / d:.0%} wasted)"
            )
    return "; ".join(parts)


def coldstart_caption(run: LogRun) -> str:
    """Time to ready and the longest stages (slowest rank)."""
    a = run.analysis
    assert a is not None
    s = a.startup
    parts = []
    if s.get("ready_s") is not None:
        parts.append(f"ready {s['ready_s']:,.0f} s ({s['ready_s'] / 60:.1f} min) after the first line")
    for key, name in (
        ("weight_load_s", "weight loading"),
        ("compile_s", "compile"),
        ("cuda_graph_s", "CUDA graph capture"),
        ("init_s", "engine init"),
    ):
        if s.get(key) is not None:
            inferred = " (inferred)" if key == "init_s" and s.get("init_s_inferred") else ""
            parts.append(f"{name} {s[key]:,.1f} s{inferred}")
    return "; ".join(parts) or "cold-start stages without durations"


def memory_caption(frame: pl.DataFrame, unit: str = "GiB") -> str:
    """The split of the first rank, and whether every rank shows the same."""
    ranks = frame.get_column("rank").unique(maintain_order=True).to_list()
    first = frame.filter(pl.col("rank") == ranks[0])
    same = all(
        frame.filter(pl.col("rank") == r)
        .select("component", pl.col("gib").round(2))
        .sort("component")
        .equals(first.select("component", pl.col("gib").round(2)).sort("component"))
        for r in ranks
    )
    total = first.get_column("gib").sum()
    split = ", ".join(f"{r['component']} {r['gib']:,.1f}" for r in first.iter_rows(named=True))
    where = f"each of {len(ranks)} ranks" if same and len(ranks) > 1 else ranks[0]
    return f"{where}: {split} ({unit}; {total:,.1f} in all)"


# -- bench ----------------------------------------------------------------------------------------


def bench_metrics_caption(bench: BenchAnalysis) -> str:
    """Where TTFT (P90 basis) first breaks its SLO, per configuration."""
    m = bench.slo.filter(pl.col("basis") == "p90")
    limit = bench.settings.get("slo_ttft_ms", 1000.0)
    parts = []
    for (config,), part in m.group_by("config", maintain_order=True):
        fail = part.filter(pl.col("ttft_ok").not_()).sort("concurrency")
        if fail.is_empty():
            # polars types Series.max() as any Python scalar; concurrency is an integer column
            top = cast("int | None", part.get_column("concurrency").max())
            parts.append(f"{config} within {limit:g} ms up to c={top}")
        else:
            row = fail.row(0, named=True)
            parts.append(
                f"{config} above {limit:g} ms from c={row['concurrency']} ({row['ttft_ms']:,.0f} ms "
                f"{row['ttft_stat']})"
            )
    return "TTFT: " + "; ".join(parts) if parts else "client metrics against concurrency"


def aggregate_caption(bench: BenchAnalysis) -> str:
    """Peak aggregate output per configuration."""
    parts = [
        f"{r['config']} {r['peak_aggregate_tps']:,.0f} tok/s at c={r['peak_aggregate_concurrency']}"
        for r in bench.configs.iter_rows(named=True)
        if r["peak_aggregate_tps"] is not None
    ]
    return "peak aggregate output: " + "; ".join(parts)


def capacity_caption(bench: BenchAnalysis) -> str:
    """C_max and users at P90 and at the mean."""
    think = bench.settings.get("think_s", 45.0)
    parts = []
    for r in bench.configs.iter_rows(named=True):
        p90 = "none" if r["c_max_p90"] is None else f"C_max {r['c_max_p90']} → {r['users_p90']} users"
        mean = "none" if r["c_max_mean"] is None else f"{r['c_max_mean']} → {r['users_mean']}"
        parts.append(f"{r['config']}: {p90} (mean basis {mean})")
    return f"at P90 (think time {think:g} s): " + "; ".join(parts)


def speedup_caption(bench: BenchAnalysis) -> str:
    """Break-even of speculative decoding per engine."""
    parts = []
    for s in bench.spec:
        name = s["engine"] if s.get("label") is None else f"{s['engine']} {s['label']}"
        if s.get("break_even_concurrency") is not None:
            parts.append(f"{name}: {s['note']} (break-even c≈{s['break_even_concurrency']:.1f})")
        else:
            parts.append(f"{name}: {s['note']}")
    return "; ".join(parts)


def slo_caption(bench: BenchAnalysis) -> str:
    """Highest tested concurrency meeting every SLO, per configuration, at P90."""
    parts = [
        f"{r['config']} {r['c_max_p90'] if r['c_max_p90'] is not None else 'none'}"
        for r in bench.configs.iter_rows(named=True)
    ]
    return "highest concurrency meeting both SLOs at P90: " + ", ".join(parts)


def join(parts: Sequence[str]) -> str:
    """Non-empty parts joined with '; '."""
    return "; ".join(p for p in parts if p)
