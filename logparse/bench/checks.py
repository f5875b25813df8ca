"""Consistency checks on client benchmark results: which reported numbers cannot all be true.

Every check has a stable code and reports a severity: `ok` (checked and consistent), `info`,
`warning` (suspicious, but possible) or `error` (arithmetically impossible). Checks that lack
their inputs, or whose inputs logparse derived (see `derive.py`), are not reported at all.

Row checks (n = output tokens per request):

- `latency_decomposition`: mean latency ~ mean TTFT + (n - 1) x mean TPOT. Exact for means when
  n is fixed, since per request latency = TTFT + (n - 1) x TPOT. (Cordatus and AIPerf call this
  per-request TPOT "ITL".) On the Openzeka SGLang-spec c=64 row: 4.7526 s + 127 x 34.40 ms =
  9.12 s against 9.13 s reported: consistent, although the report calls it an anomaly.
- `tps_vs_latency`: mean per-user TPS ~ n / mean latency. By Jensen's inequality the mean of
  n / latency is >= n / mean latency, so a TPS clearly below it is a warning, a little above is
  fine, and far above means a wide latency spread (info).
- `throughput_bound`: reported output throughput <= requests x n / duration, with n the
  requested length when known (nothing can generate more). The GPUStack vLLM 200K client claims
  1111.61 tok/s where 10 x 3000 / 295.21 s = 101.6: an error.
- `concurrency_bound`: reported output throughput <= concurrency x n / mean latency (with at most
  C requests in flight, sum of latencies <= C x duration).
- `percentile_order`: P90 >= mean (a warning when not: only a heavy tail allows it) and
  median <= P90 <= P95 <= P99, P10 <= P90 (an error when not). Rounding is monotone, so a
  violation in rounded values is a violation in the true ones.
- `itl_vs_tpot`: pooled chunk-gap ITL >= 0.8 x TPOT. A mean chunk gap below the per-token
  decode time means more streamed chunks than tokens (empty, role or reasoning deltas counted).

- `failed_requests`: every request completed; a warning when some failed (the figures are of the
  completed ones), an error when none did (a run of failures measures nothing: its figures are
  left out, never shown as 0).

Configuration checks:

- `tps_slo_optimistic_tail`: the TPS SLO could only be judged at P90, the optimistic tail;
  says whether C_max changes when judged at n / P90 latency (the P10 of TPS for fixed n).
- `percentile_fallback`: a P90-basis SLO could not be judged at the P90 (or TPS P10): judged at
  a stricter percentile the file prints (info: a pass holds at P90, a fail is not proven), or not
  judged at all (warning: C_max P90 then rests on the other SLO at those levels).
- `duplicate_level`: two runs of one configuration at the same concurrency (the first is used).
- `rps_definition`: Cordatus's "Throughput (RPS)" is completed / sum(latency) = 1 / mean latency,
  a per-request rate that falls as concurrency rises; the system completes about C / L req/s.
  Reported once per configuration: info when every level matches 1 / L (within 2-decimal
  rounding), a warning when it does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from logparse.bench.derive import tokens_per_request
from logparse.bench.slo import c_max, slo_matrix
from logparse.bench.units import ms, req_s, secs, tok_s, tokens

SEVERITIES: tuple[str, ...] = ("ok", "info", "warning", "error")

CHECK_CODES: dict[str, str] = {
    "latency_decomposition": "mean latency ~ mean TTFT + (n - 1) x mean TPOT",
    "tps_vs_latency": "mean per-user TPS ~ n / mean latency (>= by Jensen)",
    "throughput_bound": "output throughput <= requests x n / duration",
    "concurrency_bound": "output throughput <= concurrency x n / mean latency",
    "percentile_order": "P90 >= mean; median <= P90 <= P95 <= P99",
    "itl_vs_tpot": "pooled chunk ITL >= 0.8 x per-request TPOT",
    "tps_slo_optimistic_tail": "TPS SLO judged at the optimistic P90",
    "percentile_fallback": "P90 SLOs judged at the file's P90 (else a stricter percentile, else not)",
    "duplicate_level": "one run per configuration and concurrency",
    "rps_definition": "Cordatus RPS = 1 / mean latency, not system throughput",
    "failed_requests": "every request of the run completed",
}

_CHECK_SCHEMA = {
    "code": pl.String,
    "severity": pl.String,
    "row": pl.Int64,
    "config": pl.String,
    "concurrency": pl.Int64,
    "message": pl.String,
}
_PER_REQUEST_NAME = {"cordatus_csv": "ITL", "aiperf_csv": "ITL"}
_BOUND_TOL = 0.01  # 2-decimal rounding of the three inputs


@dataclass(frozen=True)
class Check:
    """One check result on one row (or one configuration when `row` is None)."""

    code: str
    severity: str
    row: int | None
    config: str | None
    concurrency: int | None
    message: str


def _derived(rec: dict[str, Any]) -> set[str]:
    return set((rec.get("derived") or "").split(","))


def _present(rec: dict[str, Any], *columns: str) -> bool:
    derived = _derived(rec)
    return all(rec.get(column) is not None and column not in derived for column in columns)


def _check(rec: dict[str, Any], code: str, severity: str, message: str) -> Check:
    return Check(code, severity, rec["row"], rec["config"], rec["concurrency"], message)


def latency_decomposition(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """Mean latency against TTFT + (n - 1) x TPOT."""
    n = tokens_per_request(rec)
    if n is None or not _present(rec, "latency_s_mean", "ttft_ms_mean", "tpot_ms_mean"):
        return None
    ttft, tpot, latency = rec["ttft_ms_mean"], rec["tpot_ms_mean"], rec["latency_s_mean"]
    predicted = (ttft + (n - 1) * tpot) / 1000.0
    deviation = latency / predicted - 1.0
    name = _PER_REQUEST_NAME.get(rec["source_tool"], "TPOT")
    arithmetic = (
        f"latency {secs(latency)} vs TTFT {secs(ttft / 1000)} + {tokens(n - 1)} x {name} {ms(tpot)}"
        f" = {secs(predicted)} ({deviation:+.1%})"
    )
    if abs(deviation) <= rel_tol:
        return _check(rec, "latency_decomposition", "ok", f"consistent: {arithmetic}")
    severity = "warning" if abs(deviation) <= 4 * rel_tol else "error"
    return _check(rec, "latency_decomposition", severity, f"inconsistent: {arithmetic}")


def tps_vs_latency(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """Mean per-user TPS against n / mean latency (or 1000 / TPOT for AIPerf's definition)."""
    n = tokens_per_request(rec)
    if n is None or not _present(rec, "tps_per_user_mean"):
        return None
    tps = rec["tps_per_user_mean"]
    if rec.get("tps_per_user_definition") == "inverse_tpot":
        if not _present(rec, "tpot_ms_mean"):
            return None
        expected = 1000.0 / rec["tpot_ms_mean"]
        basis = f"1000 / TPOT {ms(rec['tpot_ms_mean'])} = {tok_s(expected)}"
    else:
        if not _present(rec, "latency_s_mean"):
            return None
        expected = n / rec["latency_s_mean"]
        basis = f"{tokens(n)} / latency {secs(rec['latency_s_mean'])} = {tok_s(expected)}"
    deviation = tps / expected - 1.0
    text = f"mean TPS {tok_s(tps)} vs {basis} ({deviation:+.1%})"
    if deviation < -rel_tol:
        return _check(
            rec,
            "tps_vs_latency",
            "warning",
            f"{text}: a mean of per-request rates cannot fall below the rate of the mean latency"
            f" unless requests produced fewer than {tokens(n)} tokens",
        )
    if deviation > 0.25:
        return _check(
            rec,
            "tps_vs_latency",
            "info",
            f"{text}: above by Jensen's inequality, which needs a wide spread of request latencies",
        )
    return _check(rec, "tps_vs_latency", "ok", f"consistent: {text}")


def throughput_bound(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """Reported output throughput against requests x n / duration."""
    n = rec.get("output_len_requested") or tokens_per_request(rec)
    if n is None or not _present(rec, "output_throughput_tps", "num_requests", "duration_s"):
        return None
    reported, requests, duration = rec["output_throughput_tps"], rec["num_requests"], rec["duration_s"]
    if duration <= 0:
        return None
    bound = requests * n / duration
    arithmetic = f"{requests} x {tokens(n)} / {secs(duration)} = {tok_s(bound)}"
    if reported <= bound * (1.0 + _BOUND_TOL):
        return _check(rec, "throughput_bound", "ok", f"output throughput {tok_s(reported)} <= {arithmetic}")
    return _check(
        rec,
        "throughput_bound",
        "error",
        f"output throughput {tok_s(reported)} is {reported / bound:.1f}x the physical bound {arithmetic}:"
        " impossible; take throughput from the server log instead",
    )


def concurrency_bound(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """Reported output throughput against concurrency x n / mean latency (Little's law)."""
    n = tokens_per_request(rec)
    if n is None or not _present(rec, "output_throughput_tps", "concurrency", "latency_s_mean"):
        return None
    reported, c, latency = rec["output_throughput_tps"], rec["concurrency"], rec["latency_s_mean"]
    bound = c * n / latency
    arithmetic = f"{c} x {tokens(n)} / latency {secs(latency)} = {tok_s(bound)}"
    if reported <= bound * (1.0 + rel_tol):
        return _check(rec, "concurrency_bound", "ok", f"output throughput {tok_s(reported)} <= {arithmetic}")
    return _check(
        rec,
        "concurrency_bound",
        "error",
        f"output throughput {tok_s(reported)} is {reported / bound:.1f}x what {c} requests in flight can"
        f" produce ({arithmetic})",
    )


_ORDERED = {
    "ttft_ms": ("median", "p90", "p95", "p99"),
    "tpot_ms": ("median", "p90", "p95", "p99"),
    "itl_ms": ("median", "p90", "p95", "p99"),
    "latency_s": ("median", "p90", "p95", "p99"),
    "tps_per_user": ("p10", "median", "p90"),
}


def percentile_order(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """P90 >= mean, and the percentiles in increasing order, for every metric family."""
    warnings: list[str] = []
    errors: list[str] = []
    checked: list[str] = []
    for family, order in _ORDERED.items():
        derived = _derived(rec)
        values: dict[str, float] = {
            stat: float(rec[f"{family}_{stat}"])
            for stat in ("mean", *order)
            if rec.get(f"{family}_{stat}") is not None and f"{family}_{stat}" not in derived
        }
        if len(values) < 2:
            continue
        checked.append(family)
        if "mean" in values and "p90" in values and values["p90"] < values["mean"]:
            warnings.append(f"{family} p90 {values['p90']:g} < mean {values['mean']:g}")
        present = [(s, values[s]) for s in order if s in values]
        for (low_stat, low), (high_stat, high) in itertools.pairwise(present):
            if high < low:
                errors.append(f"{family} {high_stat} {high:g} < {low_stat} {low:g}")
    if not checked:
        return None
    if errors:
        return _check(rec, "percentile_order", "error", "impossible: " + "; ".join(errors + warnings))
    if warnings:
        return _check(
            rec,
            "percentile_order",
            "warning",
            "; ".join(warnings) + ": possible only if under 10% of requests pull the mean above the P90",
        )
    return _check(rec, "percentile_order", "ok", f"ordered: {', '.join(checked)}")


def itl_vs_tpot(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """Pooled chunk-gap ITL against per-request TPOT."""
    if rec.get("itl_definition") != "chunk_gap" or not _present(rec, "itl_ms_mean", "tpot_ms_mean"):
        return None
    itl, tpot = rec["itl_ms_mean"], rec["tpot_ms_mean"]
    if itl >= 0.8 * tpot:
        return _check(rec, "itl_vs_tpot", "ok", f"mean ITL {ms(itl)} >= 0.8 x mean TPOT {ms(tpot)}")
    return _check(
        rec,
        "itl_vs_tpot",
        "warning",
        f"mean ITL {ms(itl)} is {tpot / itl:.1f}x below mean TPOT {ms(tpot)}: more streamed chunks than"
        " output tokens (empty, role or reasoning deltas counted), so chunk-based counts are unreliable",
    )


def failed_requests(rec: dict[str, Any], *, rel_tol: float) -> Check | None:
    """A run whose requests failed: an error when none completed (its figures measure nothing),
    a warning when some did (its figures are of the completed ones only)."""
    failed, done = rec.get("failed"), rec.get("num_requests")
    if done == 0:
        sent = f"all {failed} requests" if failed else "every request"
        return _check(
            rec,
            "failed_requests",
            "error",
            f"{sent} failed: no latency or throughput of this run is a measurement",
        )
    if failed is None or done is None:
        return None
    if failed == 0:
        return _check(rec, "failed_requests", "ok", f"{done} requests completed, none failed")
    return _check(
        rec,
        "failed_requests",
        "warning",
        f"{failed} of {failed + done} requests failed: the figures are of the {done} that completed",
    )


ROW_CHECKS: tuple[Callable[..., Check | None], ...] = (
    failed_requests,
    latency_decomposition,
    tps_vs_latency,
    throughput_bound,
    concurrency_bound,
    percentile_order,
    itl_vs_tpot,
)


def _config_checks(rows: pl.DataFrame, *, ttft_ms: float, tps: float) -> Iterator[Check]:
    runs = rows.filter(pl.col("concurrency").is_not_null())
    duplicates = runs.group_by(["config", "concurrency"], maintain_order=True).agg(pl.col("row"))
    for config, concurrency, row_ids in duplicates.filter(pl.col("row").list.len() > 1).iter_rows():
        yield Check(
            "duplicate_level",
            "warning",
            None,
            config,
            concurrency,
            f"rows {row_ids} are all at c={concurrency}; capacity and speedup use row {row_ids[0]}",
        )
    yield from _rps_checks(runs)
    matrix = slo_matrix(rows, ttft_ms=ttft_ms, tps=tps, basis="p90")
    yield from _fallback_checks(matrix)
    optimistic = matrix.filter(pl.col("tps_optimistic"))["config"].unique(maintain_order=True).to_list()
    if not optimistic:
        return
    limits = c_max(matrix)
    pessimistic = _pessimistic_matrix(rows, matrix, tps=tps)
    for config in optimistic:
        current = limits.filter(pl.col("config") == config)["c_max"].item()
        alternative = c_max(pessimistic.filter(pl.col("config") == config))["c_max"].item()
        text = (
            f"TPS >= {tok_s(tps)} judged at P90, the optimistic tail of a higher-is-better metric (90% of"
            f" requests were slower); the file has no P10."
        )
        if alternative is None and pessimistic.filter(pl.col("config") == config)["tps"].is_null().all():
            yield Check("tps_slo_optimistic_tail", "info", None, config, None, text)
            continue
        same = alternative == current
        verdict = "unchanged" if same else f"{alternative} instead of {current}"
        yield Check(
            "tps_slo_optimistic_tail",
            "info" if same else "warning",
            None,
            config,
            None,
            f"{text} Judged at n / P90 latency (the P10 of TPS for fixed-length output) C_max is {verdict}.",
        )


def _fallback_checks(matrix: pl.DataFrame) -> Iterator[Check]:
    """One check per configuration whose P90 judgement fell back to another percentile or none."""
    for (config,), group in matrix.group_by(["config"], maintain_order=True):
        levels: dict[str, list[int]] = {}
        unjudged = stricter = False
        for r in group.iter_rows(named=True):
            for metric in ("ttft", "tps"):
                note = r[f"{metric}_note"]
                if note and not (metric == "tps" and r["tps_optimistic"]):
                    levels.setdefault(note, []).append(r["concurrency"])
                    unjudged = unjudged or r[f"{metric}_ok"] is None
                    stricter = stricter or r[f"{metric}_ok"] is not None
        if not levels:
            continue
        parts = [f"{note} (c={', '.join(map(str, cs))})" for note, cs in levels.items()]
        consequences = [
            *(["a pass at a stricter percentile holds at P90, a fail is not proven"] if stricter else []),
            *(["where an SLO is not judged, C_max P90 rests on the other"] if unjudged else []),
        ]
        message = "; ".join(parts) + ": " + "; ".join(consequences)
        severity = "warning" if unjudged else "info"
        yield Check("percentile_fallback", severity, None, str(config), None, message)


def _rps_checks(runs: pl.DataFrame) -> Iterator[Check]:
    reported = runs.filter(
        pl.col("reported_rps_per_request").is_not_null() & pl.col("latency_s_mean").is_not_null()
    ).with_columns(
        inverse=1.0 / pl.col("latency_s_mean"), system=pl.col("concurrency") / pl.col("latency_s_mean")
    )
    for (config,), group in reported.group_by(["config"], maintain_order=True):
        gap = (group["reported_rps_per_request"] - group["inverse"]).abs() - 0.005 - 0.02 * group["inverse"]
        top = group.sort("concurrency").row(-1, named=True)
        example = (
            f"at c={top['concurrency']} the file says {req_s(top['reported_rps_per_request'])}, 1 / L ="
            f" {req_s(top['inverse'])}, while c / L = {req_s(top['system'])} complete"
        )
        if (gap <= 0).all():
            message = (
                "'Throughput (RPS)' is 1 / mean latency at every level: a per-request rate, not completed"
                f" requests per second ({example})"
            )
            yield Check("rps_definition", "info", None, str(config), None, message)
        else:
            message = f"'Throughput (RPS)' does not match 1 / mean latency at every level ({example})"
            yield Check("rps_definition", "warning", None, str(config), None, message)


def _pessimistic_matrix(rows: pl.DataFrame, matrix: pl.DataFrame, *, tps: float) -> pl.DataFrame:
    n = [tokens_per_request(rec) for rec in rows.iter_rows(named=True)]
    alt = rows.with_columns(pl.Series("n_tokens", n, dtype=pl.Float64)).select(
        "row", (pl.col("n_tokens") / pl.col("latency_s_p90")).alias("alt_tps")
    )
    return (
        matrix.join(alt, on="row", how="left", maintain_order="left")
        .with_columns(
            tps=pl.col("alt_tps"),
            tps_ok=pl.col("alt_tps") >= tps,
        )
        .with_columns(
            ok=pl.col("ttft_ok").fill_null(True)
            & pl.col("tps_ok").fill_null(True)
            & (pl.col("ttft_ok").is_not_null() | pl.col("tps_ok").is_not_null())
        )
    )


def run_checks(
    rows: pl.DataFrame, *, ttft_ms: float = 1000.0, tps: float = 15.0, rel_tol: float = 0.05
) -> pl.DataFrame:
    """Run every row and configuration check; one result row per check that could be evaluated."""
    results: list[Check] = []
    for rec in rows.iter_rows(named=True):
        for check in ROW_CHECKS:
            if rec.get("num_requests") == 0 and check is not failed_requests:
                continue  # nothing measured: no figure to check
            result = check(rec, rel_tol=rel_tol)
            if result is not None:
                results.append(result)
    results.extend(_config_checks(rows, ttft_ms=ttft_ms, tps=tps))
    return pl.DataFrame([asdict(result) for result in results], schema=_CHECK_SCHEMA)
