"""Hypothesis properties of the benchmark analysis."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from bench_records import cordatus_run
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.bench.checks import run_checks
from logparse.bench.derive import complete_record
from logparse.bench.readers.vllm import read_summary
from logparse.bench.schema import empty_record, to_frame
from logparse.bench.slo import Basis, c_max, interactive_users, slo_matrix
from logparse.bench.spec import break_even

PROFILE = settings(max_examples=60, deadline=None, derandomize=True)

levels = st.lists(st.integers(min_value=1, max_value=4096), min_size=2, max_size=8, unique=True).map(sorted)
ratio = st.floats(min_value=0.05, max_value=5.0, allow_nan=False)


@PROFILE
@given(data=st.data(), concurrency=levels)
def test_bench_break_even_lies_between_bracketing_levels(data: st.DataObject, concurrency: list[int]) -> None:
    ratios = data.draw(st.lists(ratio, min_size=len(concurrency), max_size=len(concurrency)))
    found = break_even(concurrency, ratios)
    crossings = [i for i in range(len(ratios) - 1) if ratios[i] >= 1.0 > ratios[i + 1]]
    if not crossings:
        assert found is None
        return
    assert found is not None
    i = crossings[0]
    assert (found.lower, found.upper) == (concurrency[i], concurrency[i + 1])
    assert found.lower <= found.concurrency <= found.upper
    # the interpolated point is where the log2-linear segment through the two levels hits 1.0
    x1, x2 = math.log2(found.lower), math.log2(found.upper)
    t = (math.log2(found.concurrency) - x1) / (x2 - x1)
    assert ratios[i] + t * (ratios[i + 1] - ratios[i]) == pytest.approx(1.0, abs=1e-9)


def _config_rows(points: list[tuple[int, float, float, float]]) -> Any:
    records = [
        cordatus_run(
            index,
            c,
            ttft_ms_p90=ttft,
            ttft_ms_mean=ttft,
            tps_per_user_p90=tps,
            tps_per_user_mean=tps,
            latency_s_mean=latency,
        )
        for index, (c, ttft, tps, latency) in enumerate(points)
    ]
    return to_frame(records)


runs = st.lists(
    st.tuples(
        st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]),
        st.floats(min_value=10, max_value=5000),
        st.floats(min_value=1, max_value=200),
        st.floats(min_value=0.1, max_value=60),
    ),
    min_size=1,
    max_size=8,
    unique_by=lambda p: p[0],
)


def _limit(rows: Any, ttft_ms: float, tps: float, basis: Basis) -> int:
    found = c_max(slo_matrix(rows, ttft_ms=ttft_ms, tps=tps, basis=basis))["c_max"].item()
    return 0 if found is None else int(found)


@PROFILE
@given(
    points=runs,
    ttft=st.tuples(st.floats(10, 5000), st.floats(10, 5000)).map(sorted),
    tps=st.tuples(st.floats(1, 200), st.floats(1, 200)).map(sorted),
    basis=st.sampled_from(["p90", "mean"]),
)
def test_bench_c_max_monotone_in_slo_thresholds(
    points: list[tuple[int, float, float, float]], ttft: list[float], tps: list[float], basis: Basis
) -> None:
    rows = _config_rows(points)
    strict_ttft, loose_ttft = ttft
    low_tps, high_tps = tps
    # a looser TTFT limit or a lower TPS floor never lowers C_max
    assert _limit(rows, strict_ttft, high_tps, basis) <= _limit(rows, loose_ttft, high_tps, basis)
    assert _limit(rows, strict_ttft, high_tps, basis) <= _limit(rows, strict_ttft, low_tps, basis)
    passing = [c for c, t, r, _ in points if t <= strict_ttft and r >= high_tps]
    assert _limit(rows, strict_ttft, high_tps, basis) == max(passing, default=0)


@PROFILE
@given(
    c=st.integers(1, 512),
    latency=st.tuples(st.floats(0.01, 600), st.floats(0.01, 600)).map(sorted),
    think=st.floats(0, 600),
)
def test_bench_interactive_users_at_least_c_and_falling_with_latency(
    c: int, latency: list[float], think: float
) -> None:
    fast, slow = latency
    assert interactive_users(c, fast, think) >= interactive_users(c, slow, think) >= c


@PROFILE
@given(
    requests=st.integers(1, 10_000),
    n=st.integers(1, 8192),
    duration=st.floats(1, 10_000),
    factor=st.floats(0.01, 50),
)
def test_bench_throughput_bound_flags_exactly_the_excess(
    requests: int, n: int, duration: float, factor: float
) -> None:
    bound = requests * n / duration
    rec = empty_record()
    rec.update(
        source_file="p.json",
        source_tool="vllm_bench_json",
        record=0,
        num_requests=requests,
        duration_s=duration,
        output_len_requested=n,
        output_throughput_tps=bound * factor,
    )
    checks = run_checks(to_frame([complete_record(rec)]))
    (severity,) = checks.filter(checks["code"] == "throughput_bound")["severity"].to_list()
    if factor <= 1.0:
        assert severity == "ok"
    elif factor > 1.011:
        assert severity == "error"


@PROFILE
@given(
    completed=st.integers(1, 100_000),
    duration=st.floats(0.01, 1e5),
    stats=st.lists(st.floats(0, 1e6), min_size=4, max_size=4),
)
def test_bench_vllm_summary_round_trip(completed: int, duration: float, stats: list[float]) -> None:
    labels = ["Mean TTFT (ms)", "P90 TTFT (ms)", "Mean TPOT (ms)", "P99.9 ITL (ms)"]
    lines = [
        "============ Serving Benchmark Result ============",
        "{:<40} {:<10}".format("Successful requests:", completed),
        "{:<40} {:<10.2f}".format("Benchmark duration (s):", duration),
        "{:<40} {:<10}".format("Total generated tokens:", completed * 7),
        "---------------Time to First Token----------------",
        *("{:<40} {:<10.2f}".format(f"{label}:", value) for label, value in zip(labels, stats, strict=True)),
        "==================================================",
    ]
    path = Path("console.txt")  # only named in error messages
    text = "\n".join(lines) + "\n"
    (rec,) = read_summary(path, text)
    assert rec["num_requests"] == completed
    assert rec["duration_s"] == float(f"{duration:.2f}")
    assert rec["ttft_ms_mean"] == float(f"{stats[0]:.2f}")
    assert rec["ttft_ms_p90"] == float(f"{stats[1]:.2f}")
    assert rec["tpot_ms_mean"] == float(f"{stats[2]:.2f}")
    assert rec["itl_ms_p99"] is None  # P99.9 is not P99
