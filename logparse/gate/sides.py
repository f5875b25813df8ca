"""One side of a gate: a log's post-mortem or a client result, as measures per scope.

A *scope* is where a figure was taken: a phase of a server log (matched across runs by its
place, first phase to first phase) or a concurrency level of a client result; run-wide figures
(cold start, OOM, KV pool) have the scope ``run``. Every measure carries the marks of its
figure (``~`` estimated, ``?`` guessed, ``≥`` a lower bound), the relative spread of the samples
behind it when it is a mean (a stable window's cv) and, when there is no value, why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from logparse.analysis.evidence import mark_of
from logparse.analysis.text import n_text, tokens_label
from logparse.gate.metrics import Origin

if TYPE_CHECKING:
    from logparse.analysis.analyze import Analysis

RUN = "run"
# A bench file larger than this is not a client result: it is read as a log without being sniffed.
CLIENT_FILE_MAX_BYTES = 64 * 2**20


@dataclass(frozen=True, slots=True)
class Scope:
    """Where measures were taken, and the workload there (what must match to compare them)."""

    key: str  # matched across sides: "phase 1", "c=16", "vllm direct c=16", "run"
    label: str  # shown: "phase 1 (~64K, N=10)"
    input_tokens: float | None = None
    input_estimated: bool = False
    concurrency: int | None = None
    output_tokens: float | None = None
    output_estimated: bool = False


@dataclass(frozen=True, slots=True)
class Measure:
    """One metric's value in one scope of one side."""

    metric: str
    scope: str  # `Scope.key`
    value: float | None
    noise: float | None = None  # relative spread of the samples the value is the mean of
    mark: str = ""  # "~" estimated, "?" guessed, "≥" a lower bound
    missing: str | None = None  # why there is no value


@dataclass
class Side:
    """A baseline or the candidate: what it is, where it was measured, and its measures."""

    source: str
    origin: Origin
    engine: str | None = None
    version: str | None = None
    model: str | None = None
    tensor_parallel: int | None = None
    data_parallel: int | None = None
    scopes: list[Scope] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)

    def scope(self, key: str) -> Scope | None:
        """The scope named `key`, or None."""
        return next((s for s in self.scopes if s.key == key), None)

    def measure(self, metric: str, scope: str) -> Measure | None:
        """The measure of `metric` in `scope`, or None when this side has no such figure at all."""
        return next((m for m in self.measures if m.metric == metric and m.scope == scope), None)

    def describe(self) -> str:
        """`vllm 0.26.0, Kimi-K3, TP8 DP1` (what is known of it)."""
        parts = [" ".join(p for p in (self.engine, self.version) if p)]
        if self.model:
            parts.append(self.model.rstrip("/").rsplit("/", 1)[-1])
        sizes = [f"{name}{n}" for name, n in (("TP", self.tensor_parallel), ("DP", self.data_parallel)) if n]
        parts.append(" ".join(sizes))
        return ", ".join(p for p in parts if p) or ("client result" if self.origin == "client" else "log")


def is_client_result(path: str) -> bool:
    """Whether `path` is a client benchmark result file the bench readers recognise (by content)."""
    from logparse.bench.readers import detect_format
    from logparse.bench.readers._common import read_text
    from logparse.errors import InputError

    file = Path(path)
    if path == "-" or not file.is_file() or file.suffix == ".gz":
        return False
    if file.stat().st_size > CLIENT_FILE_MAX_BYTES:
        return False
    try:
        detect_format(file, read_text(file))
    except InputError:
        return False
    return True


# -- a server log ---------------------------------------------------------------------------------


def log_side(a: Analysis) -> Side:
    """The measures of one log's post-mortem: per phase its stable window and prefill, per run
    its cold start, OOM and preemption counts and KV pool."""
    from logparse.analysis.outputs import phase_outputs

    side = Side(
        source=a.source,
        origin="log",
        engine=a.engine,
        version=a.version,
        model=a.identity.get("model"),
        tensor_parallel=a.identity.get("tensor_parallel"),
        data_parallel=a.identity.get("data_parallel"),
    )
    windows = {r["phase"]: r for r in a.windows.iter_rows(named=True)}
    reasons = {r["phase"]: r["reason"] for r in a.no_window.iter_rows(named=True)}
    prefill = {r["phase"]: r for r in a.prefill.iter_rows(named=True)}
    outputs = {r["phase"]: r for r in phase_outputs(a.samples, a.phases).iter_rows(named=True)}
    for k, ph in enumerate(a.phases.sort("phase").iter_rows(named=True), start=1):
        scope = _phase_scope(k, ph, outputs.get(ph["phase"]))
        side.scopes.append(scope)
        w = windows.get(ph["phase"])
        for metric in ("decode_tps", "per_request_tps"):
            side.measures.append(_window_measure(metric, scope.key, w, reasons.get(ph["phase"])))
        p = prefill.get(ph["phase"])
        value = None if p is None else p.get("input_tps_mean")
        side.measures.append(
            Measure(
                "prefill_tps",
                scope.key,
                value,
                missing=None if value is not None else "no prefill throughput in this phase",
            )
        )
    side.measures += _run_measures(a)
    return side


def _phase_scope(k: int, ph: dict[str, Any], output: dict[str, Any] | None) -> Scope:
    inputs = ph.get("input_tokens")
    estimated = bool(ph.get("input_tokens_estimated"))
    n = ph.get("concurrency")
    label = f"phase {k} ({tokens_label(inputs, estimated=estimated)}, {n_text(n)})"
    return Scope(
        key=f"phase {k}",
        label=label,
        input_tokens=None if inputs is None else float(inputs),
        input_estimated=estimated,
        concurrency=n,
        output_tokens=None if output is None else float(output["output_tokens"]),
        output_estimated=True,
    )


def _window_measure(metric: str, scope: str, w: dict[str, Any] | None, reason: str | None) -> Measure:
    if w is None:
        return Measure(metric, scope, None, missing=f"no stable window ({reason or 'no reason given'})")
    if not w.get("trusted"):
        why = w.get("note") or f"{w.get('samples')} samples"
        return Measure(metric, scope, None, missing=f"its stable window is not trusted ({why})")
    column = "gen_tps_mean" if metric == "decode_tps" else "per_request_tps"
    return Measure(metric, scope, w[column], noise=w.get("cv"))


def _run_measures(a: Analysis) -> list[Measure]:
    s = a.startup
    ev = s.get("evidence") or {}
    ready = s.get("ready_s")
    pool = s.get("kv_pool_tokens")
    counts = a.counts
    return [
        Measure(
            "cold_start_s",
            RUN,
            ready,
            mark="≥" if ready is not None and s.get("ready_s_approx") else "",
            missing=None if ready is not None else "the log never says the server was ready",
        ),
        Measure("oom", RUN, float(counts.get("oom", 0))),
        Measure("preemptions", RUN, float(counts.get("preemptions", 0) + counts.get("retractions", 0))),
        Measure(
            "kv_pool_tokens",
            RUN,
            None if pool is None else float(pool),
            mark=mark_of((ev.get("kv_pool_tokens") or {}).get("confidence")),
            missing=None if pool is not None else "the log prints no KV pool size",
        ),
    ]


# -- a client result ------------------------------------------------------------------------------

CLIENT_COLUMNS = {
    "ttft_p50_ms": "ttft_ms_median",
    "ttft_p90_ms": "ttft_ms_p90",
    "tpot_p50_ms": "tpot_ms_median",
    "tpot_p90_ms": "tpot_ms_p90",
    "itl_p50_ms": "itl_ms_median",
    "itl_p90_ms": "itl_ms_p90",
    "output_tps": "output_throughput_tps",
}


def client_side(source: str, rows: pl.DataFrame, *, slo_ttft_ms: float, slo_tps: float) -> Side:
    """The measures of a client result file (`bench.readers.load_bench` rows): per configuration
    and concurrency level its latency percentiles and output throughput, per configuration its
    C_max under the SLOs (0 when no tested level meets them)."""
    from logparse.bench.slo import c_max, slo_matrix

    rows = rows.filter(pl.col("concurrency").is_not_null())
    configs = rows.get_column("config").unique(maintain_order=True).to_list()
    engines = rows.get_column("engine").drop_nulls().unique().to_list()
    models = rows.get_column("model").drop_nulls().unique().to_list()
    side = Side(
        source=source,
        origin="client",
        engine=engines[0] if len(engines) == 1 else None,
        model=models[0] if len(models) == 1 else None,
    )
    several = len(configs) > 1
    for rec in rows.iter_rows(named=True):
        prefix = f"{rec['config']} " if several else ""
        key = f"{prefix}c={rec['concurrency']}"
        if side.scope(key) is not None:
            continue  # a level run twice in one file: its first run, as `bench` takes it
        output = (
            rec.get("output_len") if rec.get("output_len") is not None else rec.get("output_len_requested")
        )
        side.scopes.append(
            Scope(
                key=key,
                label=key,
                input_tokens=rec.get("input_len"),
                concurrency=rec["concurrency"],
                output_tokens=None if output is None else float(output),
            )
        )
        for metric, column in CLIENT_COLUMNS.items():
            value = rec.get(column)
            side.measures.append(
                Measure(
                    metric, key, value, missing=None if value is not None else f"the file has no {column}"
                )
            )
    judged = c_max(slo_matrix(rows, ttft_ms=slo_ttft_ms, tps=slo_tps, basis="p90"))
    for rec in judged.iter_rows(named=True):
        scope = f"{rec['config']} SLOs" if several else "SLOs"
        if side.scope(scope) is None:
            side.scopes.append(Scope(key=scope, label=scope))
        value = rec["c_max"]
        side.measures.append(
            Measure("c_max", scope, float(value or 0), mark="*" if rec["tps_optimistic"] else "")
        )
    return side


# -- reading an input -----------------------------------------------------------------------------


def read_sides(
    path: str,
    *,
    engine: str = "auto",
    year: int | None = None,
    tz: str | None = None,
    patterns: Sequence[str | Path] = (),
    slo_ttft_ms: float = 1000.0,
    slo_tps: float = 15.0,
) -> list[Side]:
    """The side(s) `path` holds: a client result file, a log, a folder of one log's tables or one
    run of a dataset (one side each), or a dataset of several runs (one side per run)."""
    from logparse.analysis.analyze import analyze
    from logparse.analysis.fleet import dataset_runs
    from logparse.bench.readers import load_bench
    from logparse.ingest import ingest

    if is_client_result(path):
        return [client_side(path, load_bench([path]), slo_ttft_ms=slo_ttft_ms, slo_tps=slo_tps)]
    runs = dataset_runs(path) or [Path(path)]
    sides = []
    for run in runs:
        source = path if len(runs) == 1 else str(run)
        result = ingest(source, engine=engine, year=year, tz=tz, patterns=patterns)
        analysis = analyze(
            result.tables,
            engine=result.engine,
            source=result.source,
            read_stats=result.stats,
            times=result.times,
            grammar=result.grammar,
        )
        sides.append(log_side(analysis))
    return sides


__all__ = [
    "RUN",
    "Measure",
    "Scope",
    "Side",
    "client_side",
    "is_client_result",
    "log_side",
    "read_sides",
]
