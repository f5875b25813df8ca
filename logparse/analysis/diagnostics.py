"""Diagnostics: findings worth a line in a post-mortem, each with a stable code and a severity.

| code | severity | when |
|---|---|---|
| `kv_pool_below_context` | warning | the KV pool holds fewer tokens than the configured context length |
| `concurrency_above_kv_capacity` | warning / info | N requests of the phase's length overflow the pool (warning); N above the engine's own max concurrency at full length (info) |
| `oom_retries` | warning / info | recovered out-of-memory events: "memory is overcommitted" only when the KV figures say so (`kv_cache_overcommitted`); info when all are FlashInfer autotuner fallbacks to the default tactic; the advice in the engine's own flags (`oom_advice`) |
| `oom_fatal` | error | out-of-memory that was not recovered, each once (`distinct_ooms`) |
| `runtime_jit` | warning | JIT / compile lines after the server was ready or inside a measured phase |
| `preemptions_in_phase` | warning | vLLM `Preemptions:` / V0 preemption warnings / SGLang retractions inside a phase |
| `spec_acceptance_collapse` | warning | speculative decoding accepts almost nothing (accept len < 1.5 or rate < 10 %) |
| `fp8_kv_scale_default` | warning | FP8 KV cache running with the default scale 1.0 |
| `slow_tokenizer` | warning | a slow (Python) tokenizer is in use |
| `short_stable_window` | info | a phase has no stable window, or one not trusted (too few samples, too short, or its throughput swings) |
| `no_decode_stats` | info | the log has no decode stats lines at all |
| `kv_cache_overcommitted` | warning | vLLM's KV cache exceeds its memory budget: vLLM's own `--kv-cache-memory=… to fit` figure when printed, else recomputed (`kv_overcommit`) |
| `max_running_requests_reduced` | info | SGLang cut max_running_requests for lack of pool capacity |
| `error_lines` | error | the engine printed ERROR lines |
| `unparsed_<kind>` | warning | lines that look like a reported line family (`Decode batch`, vLLM stats, OOM, ...) but no rule typed them (`unparsed.unparsed_families`) |
| `input_estimates_disagree` | warning | two independent estimates of a phase's input length disagree (`inputs`) |
| `context_contradicts_input` | warning | the Decode lines' context per request is below the input length the Prefill lines count |
| `impossible_value` | warning | a figure no engine can print (a KV usage above 100 %): not used as a result |
| `start_not_ready` | error / warning | the engine never said it was ready: the last start-up stage reached and the time since (`startfail`) |
| `kv_profile_negative` | error / warning | SGLang profiled a KV pool below the asked `--max-total-tokens` (negative: no room at all) |
| `clock_disagreement` | warning | a wrapper's clock (docker, journald) and the engine's own stamps disagree by more than a second (`clocks`) |
| `restarts` | info | the log holds several engine starts, analysed one by one (`segments`) |
| `input_read` | warning | reading met a problem: a compressed stream ends early or is corrupt, long lines cut, the file changed |
| `input_truncated_last_line` | warning | the input's last line has no newline (a truncated file?) |
| `input_invalid_utf8` | warning | lines with bytes that are not UTF-8 (replaced) |
| `input_nul_bytes` | warning | lines with NUL bytes |

The `input_*` findings are what `ingest` reports about reading the file (`reader.ReadStats`); a
folder of tables read back carries none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from logparse.analysis._frames import first_line_no, table
from logparse.analysis.phases import assign_phase_by_time
from logparse.analysis.startfail import kv_profile_negative, start_not_ready
from logparse.analysis.unparsed import UnparsedFamily, unparsed_decode_stats
from logparse.ingest.reader import ReadStats, read_problems

DIAGNOSTIC_SCHEMA: dict[str, pl.DataType] = {
    "code": pl.String(),
    "severity": pl.String(),
    "message": pl.String(),
    "phase": pl.Int64(),
    "line_no": pl.Int64(),
    "value": pl.Float64(),
}
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

SPEC_COLLAPSE_ACCEPT_LEN = 1.5
SPEC_COLLAPSE_RATE = 0.10
KV_FULL_USAGE = 0.98
KV_NEAR_FULL = 0.90


def _n(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return "?"
    return f"{value:,.{digits}f}"


def counts(
    tables: Mapping[str, pl.DataFrame], *, samples: pl.DataFrame, ready: Any, phases: pl.DataFrame
) -> dict[str, int]:
    """Event counts for the summary: ``oom``, ``oom_recovered``, ``preemptions``, ``retractions``,
    ``jit_compiles``, ``runtime_jit_compiles``, ``warnings``."""
    oom = distinct_ooms(tables)
    pre = _preemption_rows(tables)
    retract = pre.filter(pl.col("_retract"))
    stats_pre = int(samples.get_column("preemptions").fill_null(0).sum()) if samples.height else 0
    return {
        "oom": oom.height,
        "oom_recovered": oom.filter(pl.col("recovered").fill_null(False)).height,
        "preemptions": max(stats_pre, pre.filter(~pl.col("_retract")).height),
        "retractions": int(retract.get_column("count").fill_null(1).sum()) if retract.height else 0,
        "jit_compiles": kernel_jit(tables).height,
        "runtime_jit_compiles": runtime_jit(tables, ready=ready, phases=phases).height,
        "warnings": table(tables, "warning", {}).height,
    }


OOM_ECHO_S = 2.0  # one OOM printed twice (stderr, then the logger) lands within this


def distinct_ooms(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The `oom` lines, each out-of-memory error once: an unrecovered OOM whose message repeats
    that of the previous one of the same process within `OOM_ECHO_S` is its echo (a HIP/CUDA
    OOM printed by stderr and again by the engine's logger). Recovered OOMs (autotuner
    fallbacks) are separate retries and all kept."""
    oom = table(tables, "oom", {"recovered": pl.Boolean(), "detail": pl.String(), "pid": pl.Int64()}).sort(
        "line_no"
    )
    if oom.height < 2:
        return oom
    fatal = ~pl.col("recovered").fill_null(False)
    same = (
        (pl.col("detail") == pl.col("detail").shift(1))
        & (pl.col("pid").fill_null(-1) == pl.col("pid").shift(1).fill_null(-1))
        & fatal
        & fatal.shift(1)
    )
    close = (
        (pl.col("time") - pl.col("time").shift(1)).dt.total_seconds(fractional=True).abs() <= OOM_ECHO_S
    ).fill_null(True)
    return oom.filter(~(same & close).fill_null(False))


# The engines' own knobs: the share of GPU memory they take, and the flag that pins the KV pool.
MEMORY_FLAG = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static"}
KV_SIZE_FLAG = {"vllm": "--kv-cache-memory", "sglang": "--max-total-tokens"}
AUTOTUNER_FALLBACK = (
    "default tactic"  # FlashInfer: "[Autotuner]: OOM detected, falling back to default tactic"
)


def oom_advice(soft: pl.DataFrame, *, engine: str, overcommitted: bool) -> tuple[str, str]:
    """(severity, what the recovered OOMs `soft` say and what to do), in the engine's own flags.

    Memory is called overcommitted only when the KV figures say so (`kv_overcommit`). OOMs that
    are all FlashInfer autotuner fallbacks are the mild case: the tuner tried a tactic that did
    not fit, fell back to the default one and carried on (info); any other recovered OOM is the
    engine running short at that moment (warning)."""
    memory = MEMORY_FLAG.get(engine, "the memory share")
    if overcommitted:
        return "warning", (
            "memory is overcommitted (the KV cache exceeds its budget: kv_cache_overcommitted); lower "
            f"{memory} or pin the KV size ({KV_SIZE_FLAG.get(engine, 'the KV pool size')})"
        )
    detail = soft.get_column("detail").fill_null("")
    tuner = int(detail.str.contains(AUTOTUNER_FALLBACK, literal=True).sum())
    if tuner == soft.height:
        return "info", (
            "all FlashInfer autotuner fallbacks: a tactic being profiled did not fit, the default tactic "
            "was used instead (those shapes may run slower than tuned); the KV figures show no "
            f"overcommit. To tune every tactic, leave more headroom (lower {memory} a little)"
        )
    share = f" ({tuner} of them autotuner fallbacks)" if tuner else ""
    return "warning", (
        f"the engine ran short of memory at those moments{share}; leave more headroom (lower {memory})"
    )


def impossible_usage(samples: pl.DataFrame) -> dict[str, Any] | None:
    """A KV usage above 100 % printed by the engine: no pool holds more than itself, so the
    usage figures are not the pool's (an ``impossible_value`` warning), else None."""
    if samples.is_empty() or "kv_usage" not in samples.columns:
        return None
    over = samples.filter(pl.col("kv_usage") > 1.0 + 1e-9)
    if over.is_empty():
        return None
    top = over.sort("kv_usage", descending=True).row(0, named=True)
    return {
        "code": "impossible_value",
        "severity": "warning",
        "line_no": top["line_no"],
        "value": float(top["kv_usage"]),
        "message": f"{over.height} stats line(s) print a KV cache usage above 100 % (up to {top['kv_usage']:.1%} "
        f"at line {top['line_no']}): impossible for one pool; the usage figures are not used as results",
    }


def _preemption_rows(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    pre = table(tables, "preemption", {"count": pl.Int64(), "mode": pl.String()})
    return pre.with_columns(
        pl.col("mode").fill_null("").str.to_lowercase().str.contains("retract").alias("_retract")
    )


# `jit_compile` lines that are not a kernel compile of their own: autotuner brackets and the
# bookkeeping lines around one torch.compile run (cache directory, Dynamo, graph cache, total).
NOT_A_COMPILE = "autotun|cache_dir|cache_graph|dynamo|torch_compile_total|load_compiled|aot_load|warmup_run"


def kernel_jit(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The `jit_compile` lines that are kernel compiles (JIT ops, DeepGEMM shapes, graph compiles)."""
    jit = table(tables, "jit_compile", {"what": pl.String(), "seconds": pl.Float64()})
    return jit.filter(~pl.coalesce(pl.col("what"), pl.col("rule")).fill_null("").str.contains(NOT_A_COMPILE))


def runtime_jit(
    tables: Mapping[str, pl.DataFrame], *, ready: Any, phases: pl.DataFrame, lead_s: float = 0.0
) -> pl.DataFrame:
    """Kernel JIT lines printed after the server was ready or inside a phase (with ``phase``;
    `lead_s` as in `phases.assign_phase_by_time`)."""
    jit = assign_phase_by_time(kernel_jit(tables), phases, slack_s=0.0, lead_s=lead_s)
    late = pl.col("phase").is_not_null()
    if ready is not None:
        late = late | (pl.col("time") > pl.lit(ready))
    return jit.filter(late.fill_null(False))


def input_problems(stats: ReadStats | None) -> list[tuple[str, str]]:
    """``(code, message)`` for each problem met while reading the input, worded as `ingest` words
    them (`reader.read_problems`); none when the read stats are unknown."""
    return [] if stats is None else read_problems(stats)


def is_empty_log(tables: Mapping[str, pl.DataFrame]) -> bool:
    """True when the log gave no event at all (not a single line)."""
    return not any(frame.height for frame in tables.values())


def no_phases_reason(
    tables: Mapping[str, pl.DataFrame],
    *,
    samples: pl.DataFrame,
    phases: pl.DataFrame,
    read_stats: ReadStats | None = None,
    families: Sequence[UnparsedFamily] = (),
) -> str | None:
    """Why the log has no phase of load (None when it has some), e.g. ``no decode activity (no
    decode stats lines)``; a damaged input says so too, since it may be why, and so do decode
    stats lines that were seen but not typed."""
    if phases.height:
        return None
    unread = unparsed_decode_stats(list(families))
    if is_empty_log(tables):
        reason = "the log is empty"
    elif samples.is_empty() and unread is not None:
        reason = (
            f"no decode stats line could be read: {unread.lines:,} line(s) look like them but no rule "
            f"typed them (see {unread.code})"
        )
    elif samples.is_empty():
        reason = "no decode activity (no decode stats lines)"
    else:
        reason = "no decode activity (no stats line after start-up shows running requests)"
    if input_problems(read_stats):
        reason += " in what could be read: the input was not read cleanly (see its input warnings)"
    return reason


def diagnose(
    tables: Mapping[str, pl.DataFrame],
    *,
    engine: str,
    startup: Mapping[str, Any],
    samples: pl.DataFrame,
    phases: pl.DataFrame,
    windows: pl.DataFrame,
    no_window: pl.DataFrame,
    spec: pl.DataFrame,
    ready: Any,
) -> pl.DataFrame:
    """The diagnostics of one engine start (`DIAGNOSTIC_SCHEMA`, in `ordered` order); those about
    the whole log are `log_diagnostics`'.

    Parameters
    ----------
    tables
        The event tables.
    engine
        ``vllm`` or ``sglang``.
    startup
        `coldstart.startup_figures` output.
    samples
        Decode samples with ``phase``.
    phases
        Phases with ``input_tokens``.
    windows, no_window
        `windows.stable_windows` and `windows.no_window_reasons` output.
    spec
        `spec.spec_by_phase` output.
    ready
        When the server was ready (None if unknown).
    """
    out: list[dict[str, Any]] = []

    def add(
        code: str,
        severity: str,
        message: str,
        *,
        phase: int | None = None,
        line_no: int | None = None,
        value: float | None = None,
    ) -> None:
        out.append(
            {
                "code": code,
                "severity": severity,
                "message": message,
                "phase": phase,
                "line_no": line_no,
                "value": value,
            }
        )

    pool, context = startup.get("kv_pool_tokens"), startup.get("context_len")
    if pool and context and pool < context:
        add(
            "kv_pool_below_context",
            "warning",
            f"KV pool holds {_n(pool)} tokens, less than the configured context of {_n(context)}: "
            "a full-length request cannot fit",
            value=float(pool),
        )

    usage_peak = (
        samples.group_by("phase").agg(pl.col("kv_usage").max().alias("peak"))
        if samples.height
        else pl.DataFrame(schema={"phase": pl.Int64(), "peak": pl.Float64()})
    )
    max_conc = startup.get("max_concurrency")
    capacity = effective_capacity(samples) or pool
    for ph in phases.iter_rows(named=True):
        n, inp, p = ph["concurrency"], ph.get("input_tokens"), ph["phase"]
        peak = usage_peak.filter(pl.col("phase") == p).get_column("peak").drop_nulls()
        peak_v = float(peak[0]) if peak.len() else None
        shared = (ph.get("cached_share") or 0.0) > 0.05  # prefix-cache hits share KV between requests
        # A pool the engine's own usage shows far from full did not overflow, whatever N × input says.
        full = peak_v is None or peak_v >= KV_NEAR_FULL
        if n and inp and capacity and not shared and full and n * inp > capacity:
            add(
                "concurrency_above_kv_capacity",
                "warning",
                f"phase {p}: N={n} requests × {_n(inp)} input tokens = {_n(n * inp)} > KV capacity of "
                f"{_n(capacity)} tokens: requests must queue, be preempted or retracted",
                phase=p,
                value=float(n * inp),
            )
        elif peak_v is not None and KV_FULL_USAGE <= peak_v <= 1.0:
            add(
                "concurrency_above_kv_capacity",
                "warning",
                f"phase {p}: KV cache usage peaked at {peak_v:.0%} with N={n}: the pool is full",
                phase=p,
                value=peak_v,
            )
        elif n and max_conc and engine == "vllm" and n > max_conc:
            add(
                "concurrency_above_kv_capacity",
                "info",
                f"phase {p}: N={n} is above vLLM's maximum concurrency of {max_conc:.2f}x for "
                f"{_n(context)}-token requests; it fits only because these requests are shorter "
                "(lower --max-model-len to raise it)",
                phase=p,
                value=float(max_conc),
            )

    over = kv_overcommit(tables) if engine == "vllm" else None
    if over is not None:
        add(
            "kv_cache_overcommitted", "warning", over["message"], line_no=over["line_no"], value=over["value"]
        )
    reduced = table(
        tables, "kv_pool", {"requested_max_running_requests": pl.Int64(), "max_running_requests": pl.Int64()}
    ).filter(pl.col("requested_max_running_requests").is_not_null())
    if reduced.height:
        r = reduced.sort("line_no").row(0, named=True)
        add(
            "max_running_requests_reduced",
            "info",
            f"max_running_requests was cut from {r['requested_max_running_requests']} to "
            f"{r['max_running_requests']} by the KV/state pool size",
            line_no=r["line_no"],
            value=float(r["max_running_requests"] or 0),
        )

    oom = distinct_ooms(tables)
    if oom.height:
        soft = oom.filter(pl.col("recovered").fill_null(False))
        hard = oom.filter(~pl.col("recovered").fill_null(False))
        if soft.height:
            ranks = soft.get_column("rank").drop_nulls().n_unique()
            before = soft.filter(pl.col("time") <= pl.lit(ready)).height if ready is not None else None
            where = (
                f", {before} before the server was ready and {soft.height - before} after"
                if before is not None
                else ""
            )
            in_phase = assign_phase_by_time(soft, phases, slack_s=0.0, lead_s=_interval(samples))
            in_phase = in_phase.filter(pl.col("phase").is_not_null())
            if in_phase.height:
                where += (
                    f" ({in_phase.height} at the start of phase(s) "
                    f"{', '.join(str(x) for x in in_phase.get_column('phase').unique().sort().to_list())})"
                )
            severity, advice = oom_advice(soft, engine=engine, overcommitted=over is not None)
            add(
                "oom_retries",
                severity,
                f"{soft.height} out-of-memory retries (recovered){f' on {ranks} ranks' if ranks > 1 else ''}"
                f"{where}: {advice}",
                line_no=first_line_no(soft),
                value=float(soft.height),
            )
        if hard.height:
            add(
                "oom_fatal",
                "error",
                f"{hard.height} out-of-memory error(s), first at line {first_line_no(hard)}",
                line_no=first_line_no(hard),
                value=float(hard.height),
            )

    lead = _interval(samples)
    late = runtime_jit(tables, ready=ready, phases=phases, lead_s=lead)
    if late.height:
        in_phase = late.filter(pl.col("phase").is_not_null())
        phase_note = (
            f", {in_phase.height} inside phase(s) "
            f"{', '.join(str(x) for x in in_phase.get_column('phase').unique().sort().to_list())}"
            if in_phase.height
            else ""
        )
        add(
            "runtime_jit",
            "warning",
            f"{late.height} JIT compile(s) after the server was ready{phase_note}: first requests pay "
            "for compilation (extend warm-up to cover these shapes)",
            line_no=first_line_no(late),
            value=float(late.height),
        )

    pre = assign_phase_by_time(_preemption_rows(tables), phases, slack_s=0.0, lead_s=lead)
    for ph in phases.iter_rows(named=True):
        p = ph["phase"]
        stats = samples.filter(pl.col("phase") == p)
        n_stats = int(stats.get_column("preemptions").fill_null(0).sum()) if stats.height else 0
        n_retr_dec = int(stats.get_column("retracted").fill_null(0).sum()) if stats.height else 0
        rows = pre.filter(pl.col("phase") == p)
        n_retract = int(rows.filter(pl.col("_retract")).get_column("count").fill_null(1).sum()) + n_retr_dec
        n_v0 = rows.filter(~pl.col("_retract")).height
        parts = []
        if n_stats:
            parts.append(f"{n_stats} preemption(s) in the stats lines")
        if n_v0:
            parts.append(f"{n_v0} preemption warning(s) (vLLM V0 logs only every 50th)")
        if n_retract:
            parts.append(f"{n_retract} request(s) retracted")
        if parts:
            add(
                "preemptions_in_phase",
                "warning",
                f"phase {p}: {'; '.join(parts)}: KV cache ran out, requests were recomputed",
                phase=p,
                value=float(n_stats + n_v0 + n_retract),
            )

    for row in spec.iter_rows(named=True):
        alen, rate = row["mean_accept_len"], row["accept_rate"]
        if (alen is not None and alen < SPEC_COLLAPSE_ACCEPT_LEN) or (
            rate is not None and rate < SPEC_COLLAPSE_RATE
        ):
            waste = row["wasted_draft_pct"]
            add(
                "spec_acceptance_collapse",
                "warning",
                f"phase {row['phase']}: speculative decoding accepts "
                f"{'?' if alen is None else f'{alen:.2f}'} tokens per step (draft acceptance "
                f"{'?' if rate is None else f'{rate:.1%}'}): "
                f"{'?' if waste is None else f'{waste:.0f}'} % of drafted tokens are thrown away",
                phase=row["phase"],
                value=waste,
            )

    warnings = table(tables, "warning", {"category": pl.String(), "message": pl.String()})
    for code, what in (
        (
            "fp8_kv_scale_default",
            "FP8 KV cache uses the default scaling factor 1.0: "
            "check output quality against a fixed evaluation",
        ),
        ("slow_tokenizer", "a slow tokenizer is in use: tokenization adds to TTFT at long inputs"),
    ):
        hits = warnings.filter(pl.col("category").fill_null("").str.contains(code.split("_default")[0]))
        if hits.height:
            add(
                code,
                "warning",
                f"{what} ({hits.height} line(s), first at line {first_line_no(hits)})",
                line_no=first_line_no(hits),
                value=float(hits.height),
            )

    for row in no_window.iter_rows(named=True):
        add(
            "short_stable_window",
            "info",
            f"phase {row['phase']}: no stable window: {row['reason']}",
            phase=row["phase"],
        )
    for row in windows.filter(~pl.col("trusted")).iter_rows(named=True):
        add(
            "short_stable_window",
            "info",
            f"phase {row['phase']}: stable window {row['note']}",
            phase=row["phase"],
            value=float(row["samples"]),
        )
    for ph in phases.iter_rows(named=True):
        for code, key in (
            ("input_estimates_disagree", "input_problem"),
            ("context_contradicts_input", "context_problem"),
        ):
            if ph.get(key):
                add(code, "warning", ph[key], phase=ph["phase"])

    errors = _error_lines(tables)
    if errors.height:
        add(
            "error_lines",
            "error",
            f"{errors.height} ERROR line(s), first at line {first_line_no(errors)}",
            line_no=first_line_no(errors),
            value=float(errors.height),
        )
    for finding in (
        start_not_ready(tables, ready=ready, samples=samples),
        kv_profile_negative(tables),
        impossible_usage(samples),
    ):
        if finding is not None:
            add(**finding)
    return ordered(pl.DataFrame(out, schema=DIAGNOSTIC_SCHEMA, orient="row"))


def ordered(frame: pl.DataFrame) -> pl.DataFrame:
    """Diagnostics errors first, then warnings (those about reading the input first: they qualify
    every other finding), then info; by phase and code within a severity."""
    return (
        frame.with_columns(
            pl.col("severity").replace_strict(SEVERITY_ORDER, default=9).alias("_o"),
            (~pl.col("code").str.starts_with("input_")).alias("_later"),
        )
        .sort("_o", "_later", "phase", "code", nulls_last=False, maintain_order=True)
        .drop("_o", "_later")
    )


def log_diagnostics(
    tables: Mapping[str, pl.DataFrame],
    *,
    engine: str,
    samples: pl.DataFrame,
    read_stats: ReadStats | None,
    families: Sequence[UnparsedFamily],
    segments: pl.DataFrame,
    zone: str = "UTC",
) -> pl.DataFrame:
    """The findings about the whole log (`DIAGNOSTIC_SCHEMA`): reading problems (``input_*``),
    evidence seen but not typed (``unparsed_<kind>``), restarts, a wrapper's clock that disagrees
    with the engine's (naive stamps read in `zone`), and no decode stats at all."""
    from logparse.analysis.clocks import clock_disagreement

    rows: list[dict[str, Any]] = []

    def add(
        code: str, severity: str, message: str, *, line_no: int | None = None, value: float | None = None
    ) -> None:
        rows.append(
            {
                "code": code,
                "severity": severity,
                "message": message,
                "phase": None,
                "line_no": line_no,
                "value": value,
            }
        )

    problems = input_problems(read_stats)
    for code, message in problems:
        add(code, "warning", message)
    for family in families:
        add(family.code, "warning", family.message, line_no=family.first_line, value=float(family.lines))
    clock = clock_disagreement(tables, zone=zone)
    if clock is not None:
        add("clock_disagreement", "warning", clock["message"], value=clock["offset_s"])
    if segments.height > 1:
        spans = ", ".join(f"{r['first_line']}–{r['last_line']}" for r in segments.iter_rows(named=True))
        add(
            "restarts",
            "info",
            f"the log holds {segments.height} engine starts (lines {spans}): each is analysed "
            "on its own, its figures never added to another's (`--segment K` for one)",
            value=float(segments.height),
        )
    unread = unparsed_decode_stats(list(families))
    if is_empty_log(tables):
        add(
            "no_decode_stats",
            "info",
            "the log is empty (not a single line): nothing to measure throughput on",
        )
    elif samples.is_empty() and unread is not None:
        add(
            "no_decode_stats",
            "warning",
            f"no decode stats line could be read: {unread.lines:,} line(s) look "
            f"like them but no rule typed them (see {unread.code}): throughput was not measured, not absent",
            line_no=unread.first_line,
        )
    elif samples.is_empty():
        damaged = " in what could be read (see the input warnings)" if problems else ""
        add(
            "no_decode_stats",
            "info",
            "no decode stats lines "
            f"({'engine_stats' if engine == 'vllm' else 'Decode batch'}){damaged}: nothing to measure "
            "throughput on",
        )
    return pl.DataFrame(rows, schema=DIAGNOSTIC_SCHEMA, orient="row")


BUDGET_PARTS = ("usable_gib", "weights_gib", "non_torch_gib", "peak_activation_gib", "graph_gib")
KV_OVERCOMMIT_SLACK_GIB = 0.1  # rounding of the printed GiB figures


def kv_overcommit(tables: Mapping[str, pl.DataFrame]) -> dict[str, Any] | None:
    """vLLM's KV cache against what its memory budget leaves for it, from the first `memory` line
    that gives both; None when it fits or the log does not say.

    vLLM (0.10.2+) prints its own figure, ``--kv-cache-memory=BYTES (GiB) to fit into requested
    memory`` (the ``kv_fit_bytes``/``kv_fit_gib`` fields): when present it is the one quoted and
    compared, as the engine computed it from exact byte counts. Only without it is the budget
    recomputed from the printed GiB (usable − weights − non-torch − activation − CUDA graphs).
    Returns ``message``, ``line_no`` and ``value`` (GiB over the budget).
    """
    mem = table(
        tables,
        "memory",
        {
            **dict.fromkeys(BUDGET_PARTS, pl.Float64()),
            "kv_gib": pl.Float64(),
            "gpu_memory_utilization": pl.Float64(),
            "kv_fit_bytes": pl.Int64(),
            "kv_fit_gib": pl.Float64(),
        },
    )
    engine_fit = pl.col("kv_fit_gib").is_not_null() | pl.col("kv_fit_bytes").is_not_null()
    recomputable = pl.all_horizontal(pl.col(c).is_not_null() for c in BUDGET_PARTS)
    rows = mem.filter(pl.col("kv_gib").is_not_null() & (engine_fit | recomputable)).sort("line_no")
    if rows.is_empty():
        return None
    b = rows.row(0, named=True)
    printed_fit = _engine_fit_gib(b)
    fit = printed_fit if printed_fit is not None else b["usable_gib"] - sum(b[c] for c in BUDGET_PARTS[1:])
    if b["kv_gib"] <= fit + KV_OVERCOMMIT_SLACK_GIB:
        return None
    budget = (
        ""
        if b["usable_gib"] is None
        else f"{b['usable_gib']:.2f} GiB usable at utilization {b['gpu_memory_utilization']}"
    )
    if printed_fit is not None:
        flag = "--kv-cache-memory" + ("" if b["kv_fit_bytes"] is None else f"={b['kv_fit_bytes']}")
        message = (
            f"KV cache of {b['kv_gib']:.2f} GiB exceeds the {fit:.2f} GiB that vLLM itself says fits "
            f"the memory budget{f' ({budget})' if budget else ''}: expect allocation retries; pin "
            f"{flag} ({fit:.2f} GiB, vLLM's own figure) or lower --gpu-memory-utilization"
        )
    else:
        message = (
            f"KV cache of {b['kv_gib']:.2f} GiB exceeds the ~{fit:.2f} GiB left in the memory budget "
            f"({budget} minus weights, activation, non-torch and CUDA graphs): expect allocation "
            "retries; pin --kv-cache-memory or lower --gpu-memory-utilization"
        )
    return {"message": message, "line_no": b["line_no"], "value": b["kv_gib"] - fit}


def _engine_fit_gib(row: Mapping[str, Any]) -> float | None:
    """The KV size the engine printed as fitting its budget, in GiB (its GiB figure, else its bytes)."""
    if row.get("kv_fit_gib") is not None:
        return float(row["kv_fit_gib"])
    if row.get("kv_fit_bytes") is not None:
        return row["kv_fit_bytes"] / 2**30
    return None


def _interval(samples: pl.DataFrame) -> float:
    """How far before its first stats line a phase's work may begin: two stats intervals (the
    first sample's own, and one in which queued requests may not have shown yet); 0 without
    samples."""
    from logparse.analysis._frames import median_interval

    return 2.0 * (median_interval(samples.get_column("time")) or 0.0) if samples.height else 0.0


def effective_capacity(samples: pl.DataFrame) -> int | None:
    """KV tokens the engine can hold, as its own usage figures imply (tokens in use ÷ usage).

    This is the pool as the scheduler counts it: with SGLang's decode context parallelism the
    per-rank pool printed at start-up is multiplied by the DCP size.
    """
    if samples.is_empty():
        return None
    ratio = (
        samples.filter((pl.col("kv_usage") >= 0.05) & (pl.col("kv_tokens") > 0))
        .select((pl.col("kv_tokens") / pl.col("kv_usage")).median())
        .item()
    )
    return None if ratio is None else round(ratio)


def _error_lines(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    parts = []
    for frame in tables.values():
        if "level" in frame.columns and frame.height:
            parts.append(frame.filter(pl.col("level").is_in(["ERROR", "CRITICAL"])).select("line_no"))
    return pl.concat(parts) if parts else pl.DataFrame(schema={"line_no": pl.Int64()})
