"""The series `export` builds from a log: engine names per era, printed values, rebuilt counters."""
from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import polars as pl
import pytest
from export_inputs import emulated_logs, real_logs  # noqa: F401 (pytest fixtures)
from hypothesis import given
from hypothesis import strategies as st

import logparse
from logparse.export.counters import GAP_FACTOR, integrate_rates, running_sum, usual_interval_ms
from logparse.export.series import RunSeries, Series, run_series


def export_of(path: Path, **kwargs: str) -> RunSeries:
    result = logparse.ingest(path)
    return run_series(result.tables, engine=result.engine, run=path.name, **kwargs)


def by_name(found: RunSeries) -> dict[str, list[Series]]:
    out: dict[str, list[Series]] = {}
    for series in found.series:
        out.setdefault(series.name, []).append(series)
    return out


def printed(path: Path, kind: str, column: str) -> list[tuple[int, float]]:
    """(Unix ms, value) of every line of `kind` that printed `column`, in line order."""
    frame = logparse.ingest(path).tables[kind]
    rows = frame.filter(pl.col(column).is_not_null() & pl.col("time").is_not_null()).sort("line_no")
    return [(unix_ms(t), float(v)) for t, v in rows.select("time", column).iter_rows()]


def unix_ms(t: datetime) -> int:
    """A naive time is UTC (what `export` says it assumes)."""
    return round((t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp() * 1000)


def last_per_second(points: list[tuple[int, float]]) -> dict[int, float]:
    return dict(points)  # later lines of the same second overwrite earlier ones


def test_vllm_v1_gauges_are_the_printed_values(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["vllm-0.31.log"]
    found = by_name(export_of(log))
    [kv] = found["vllm:kv_cache_usage_perc"]
    assert dict(kv.samples) == {t: v / 100 for t, v in last_per_second(printed(log, "engine_stats", "gpu_kv_pct")).items()}
    [running] = found["vllm:num_requests_running"]
    assert dict(running.samples) == last_per_second(printed(log, "engine_stats", "running"))
    assert dict(kv.labels) == {"model_name": "meta-llama/Llama-3.1-8B-Instruct", "engine": "0", "run": log.name}


@pytest.mark.parametrize(("log", "present", "absent"), [
    ("vllm-0.6.log", {"vllm:gpu_cache_usage_perc", "vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc",
                      "vllm:avg_generation_throughput_toks_per_s"}, {"vllm:kv_cache_usage_perc"}),
    ("vllm-0.10.log", {"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}, {"vllm:num_requests_swapped"}),
    ("vllm-0.31.log", {"vllm:kv_cache_usage_perc", "vllm:num_preemptions"}, {"vllm:gpu_cache_usage_perc"}),
    ("sglang-0.5.14.log", {"sglang:gen_throughput", "sglang:num_used_tokens", "sglang:max_total_num_tokens",
                           "sglang:generation_tokens", "sglang:cache_hit_rate"}, {"vllm:num_requests_running"}),
])
def test_each_era_gets_its_engines_names(emulated_logs: dict[str, Path], log: str, present: set[str],
                                         absent: set[str]) -> None:
    names = set(by_name(export_of(emulated_logs[log])))
    assert present <= names
    assert not absent & names


def test_a_v1_log_of_unknown_version_gets_both_kv_names(emulated_logs: dict[str, Path]) -> None:
    result = logparse.ingest(emulated_logs["vllm-0.31.log"])
    tables = {k: v for k, v in result.tables.items() if k != "config"}
    names = {s.name for s in run_series(tables, engine="vllm", run="r").series}
    assert {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"} <= names
    assert "vllm:num_preemptions" not in names  # 0.31 prints `Preemptions` only when > 0: unknown here


def test_v1_preemptions_sum_the_printed_counts(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["vllm-emulated-0.11-preemptions-compose.log"]
    [counter] = by_name(export_of(log))["vllm:num_preemptions"]
    total = sum(v for _, v in printed(log, "engine_stats", "preemptions"))
    assert total > 0
    assert counter.samples[-1][1] == total


def test_v0_spec_counters_are_the_printed_running_totals(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["vllm-emulated-0.6-spec-two-phases.log"]
    [accepted] = by_name(export_of(log))["vllm:spec_decode_num_accepted_tokens"]
    assert dict(accepted.samples) == last_per_second(printed(log, "spec_decode", "accepted"))


def test_v1_spec_counters_take_the_engine_of_the_stats_line_before(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["vllm-emulated-0.10-multirank-docker.log"]
    [drafted] = by_name(export_of(log))["vllm:spec_decode_num_draft_tokens"]
    assert dict(drafted.labels)["engine"] == "0"
    assert drafted.samples[-1][1] == sum(v for _, v in printed(log, "spec_decode", "drafted"))


def test_rebuilt_token_counter_rises_at_the_printed_rate(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["sglang-0.5.6.log"]
    [counter] = by_name(export_of(log))["sglang:generation_tokens"]
    rates = printed(log, "decode_batch", "gen_tps")
    by_second: dict[int, list[float]] = {}
    for t, v in rates:
        by_second.setdefault(t, []).append(v)
    for (t0, c0), (t1, c1) in pairwise(counter.samples):
        assert (c1 - c0) / ((t1 - t0) / 1000) == pytest.approx(sum(by_second[t1]) / len(by_second[t1]))
    assert "estimated" in counter.help and "integrating" in counter.help


def test_idle_gap_between_phases_is_held_flat(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["vllm-emulated-0.6-spec-two-phases.log"]
    [counter] = by_name(export_of(log))["vllm:generation_tokens"]
    lines = printed(log, "engine_stats", "gen_tps")
    assert len(counter.samples) > len(lines)  # a flat sample before each line after a silence
    usual = usual_interval_ms(lines)
    assert usual is not None
    rate_at = dict(lines)
    for (t0, c0), (t1, c1) in pairwise(counter.samples):
        if t1 in rate_at:
            assert t1 - t0 <= GAP_FACTOR * usual
            assert (c1 - c0) / ((t1 - t0) / 1000) == pytest.approx(rate_at[t1])
        else:
            assert c1 == c0


def test_naive_and_utc_aware_times_export_alike(emulated_logs: dict[str, Path]) -> None:
    result = logparse.ingest(emulated_logs["sglang-0.4.log"])
    aware = {k: v.with_columns(pl.col("time").dt.replace_time_zone("UTC")) if "time" in v.columns else v
             for k, v in result.tables.items()}
    naive = run_series(result.tables, engine="sglang", run="r").series
    assert naive and run_series(aware, engine="sglang", run="r").series == naive


def test_model_name_comes_from_the_log_or_the_option(emulated_logs: dict[str, Path]) -> None:
    log = emulated_logs["vllm-0.26.log"]
    assert export_of(log).model_name == "meta-llama/Llama-3.1-8B-Instruct"
    mine = export_of(log, model_name="mine")
    assert all(dict(s.labels)["model_name"] == "mine" for s in mine.series)


def test_sglang_ranks_become_the_collectors_rank_labels(real_logs: dict[str, Path]) -> None:
    found = export_of(real_logs["sglang/062.log"])
    ranks = {(dict(s.labels).get("dp_rank"), dict(s.labels).get("tp_rank")) for s in found.series}
    assert len(ranks) > 1 and all(dp is not None and tp is not None for dp, tp in ranks)


def test_fields_a_log_never_printed_are_left_out_and_named(emulated_logs: dict[str, Path]) -> None:
    found = export_of(emulated_logs["sglang-0.4.log"])
    assert "sglang:spec_accept_length" not in {s.name for s in found.series}
    assert any(u.startswith("sglang:spec_accept_length") for u in found.unprinted)


@given(st.lists(st.tuples(st.integers(1, 120_000), st.floats(0, 1e5)), min_size=1, max_size=40),
       st.booleans())
def test_integrated_counter_invariants(steps: list[tuple[int, float]], hold: bool) -> None:
    points, t = [], 0
    for gap, rate in steps:
        t += gap
        points.append((t, rate))
    counter = integrate_rates(points, hold_over_gaps=hold)
    assert counter[0] == (points[0][0], 0.0)
    assert [v for _, v in counter] == sorted(v for _, v in counter)  # never decreases
    assert [t for t, _ in counter] == sorted({t for t, _ in counter})  # one sample per time, ordered
    assert {t for t, _ in points} <= {t for t, _ in counter}
    rate_at = dict(points)
    for (t0, c0), (t1, c1) in pairwise(counter):  # each line's rate is its interval's slope
        if t1 in rate_at:
            assert (c1 - c0) / ((t1 - t0) / 1000) == pytest.approx(rate_at[t1], rel=1e-9, abs=1e-6)


@given(st.lists(st.tuples(st.integers(1, 10_000), st.integers(0, 10_000)), max_size=30))
def test_running_sum_ends_at_the_total(steps: list[tuple[int, int]]) -> None:
    points, t = [], 0
    for gap, v in steps:
        t += gap
        points.append((t, float(v)))
    counter = running_sum(points)
    assert [t for t, _ in counter] == [t for t, _ in points]
    assert (counter[-1][1] if counter else 0) == sum(v for _, v in points)
