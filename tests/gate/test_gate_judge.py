"""The gate's judgement of one metric, thresholds and comparability, on sides built by hand."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logparse.errors import InputError
from logparse.gate import gate_sides
from logparse.gate.comparable import compare_sides
from logparse.gate.judge import judge_metric
from logparse.gate.metrics import BY_KEY
from logparse.gate.render import change_text, render_text
from logparse.gate.sides import Measure, Scope, Side
from logparse.gate.thresholds import Thresholds, parse_option, thresholds

PHASE = Scope("phase 1", "phase 1 (64K, N=10)", input_tokens=65536, concurrency=10, output_tokens=3000)


def log_side(name: str, decode: float | None, *, cv: float = 0.02, oom: float = 0, **facts: object) -> Side:
    scope = facts.pop("scope", PHASE)
    side = Side(source=name, origin="log", engine="vllm", model="Kimi-K3", tensor_parallel=8, **facts)  # type: ignore[arg-type]
    side.scopes.append(scope)  # type: ignore[arg-type]
    missing = None if decode is not None else "no stable window (running never reached N=10)"
    side.measures += [
        Measure("decode_tps", "phase 1", decode, noise=cv, missing=missing),
        Measure("per_request_tps", "phase 1", None if decode is None else decode / 10, noise=cv, missing=missing),
        Measure("oom", "run", oom),
    ]
    return side


def one(baselines: list[Side], candidate: Side, **options: object) -> dict[str, object]:
    result = gate_sides(baselines, candidate, **options)  # type: ignore[arg-type]
    return {j.name: j for j in result.judgements} | {"_result": result}


def test_a_drop_inside_the_windows_cv_is_within_noise_and_says_which_bound() -> None:
    got = one([log_side("a", 100.0, cv=0.10)], log_side("b", 93.0, cv=0.04))
    decode = got["decode_tps[phase 1 (64K, N=10)]"]
    assert decode.verdict == "within noise"  # type: ignore[attr-defined]
    assert decode.bound_source == "window cv" and decode.bound_pct == pytest.approx(10.0)  # type: ignore[attr-defined]
    assert got["_result"].exit_status == 0  # type: ignore[attr-defined]
    assert "10% window cv" in render_text(got["_result"])  # type: ignore[arg-type]


def test_a_drop_beyond_the_threshold_with_quiet_windows_regressed() -> None:
    got = one([log_side("a", 100.0, cv=0.01)], log_side("b", 93.0, cv=0.01))
    decode = got["decode_tps[phase 1 (64K, N=10)]"]
    assert decode.verdict == "regressed" and decode.bound_source == "threshold"  # type: ignore[attr-defined]
    assert got["_result"].exit_status == 1  # type: ignore[attr-defined]


def test_thresholds_per_metric_from_the_option_and_the_file(tmp_path: Path) -> None:
    file = tmp_path / "gate.toml"
    file.write_text("[thresholds]\ndefault = 2\ndecode_tps = 10\n")
    chosen = thresholds(["per_request_tps=8%"], file)
    assert (chosen.pct("decode_tps"), chosen.pct("per_request_tps"), chosen.pct("oom")) == (10.0, 8.0, 2.0)
    got = one([log_side("a", 100.0, cv=0.0)], log_side("b", 93.0, cv=0.0), thresholds=chosen)
    assert got["decode_tps[phase 1 (64K, N=10)]"].verdict == "holds"  # type: ignore[attr-defined]
    assert got["per_request_tps[phase 1 (64K, N=10)]"].verdict == "holds"  # type: ignore[attr-defined]
    strict = thresholds(["decode_tps=3"], file)
    got = one([log_side("a", 100.0, cv=0.0)], log_side("b", 96.0, cv=0.0), thresholds=strict)
    assert got["decode_tps[phase 1 (64K, N=10)]"].verdict == "regressed"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("decode=3", "unknown metric 'decode'"),
        ("decode_tps", "expected METRIC=PCT"),
        ("decode_tps=fast", "is not a number"),
        ("decode_tps=-1", "0 or more"),
    ],
)
def test_a_bad_threshold_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_option(text)


def test_a_threshold_file_without_a_table_or_broken_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("decode_tps = 3\n")
    with pytest.raises(InputError, match=r"\[thresholds\] table"):
        thresholds((), bad)
    bad.write_text("[thresholds\n")
    with pytest.raises(InputError, match="not a valid TOML"):
        thresholds((), bad)


def test_a_count_that_was_zero_regresses_on_any_increase() -> None:
    got = one([log_side("a", 100.0, oom=0)], log_side("b", 100.0, oom=2))
    oom = got["oom"]
    assert oom.verdict == "regressed"  # type: ignore[attr-defined]
    assert change_text(oom) == "+2 (from 0)"  # type: ignore[arg-type]
    assert got["_result"].to_dict()["metrics"][-1]["from_zero"] is True  # type: ignore[attr-defined]


def test_a_figure_missing_on_one_side_is_named_and_exits_2() -> None:
    got = one([log_side("a", 100.0)], log_side("b", None))
    decode = got["decode_tps[phase 1 (64K, N=10)]"]
    assert decode.verdict == "missing"  # type: ignore[attr-defined]
    assert "b: no stable window" in decode.note  # type: ignore[attr-defined]
    assert got["_result"].exit_status == 2 and got["_result"].verdict == "incomplete"  # type: ignore[attr-defined]


def test_decode_missing_on_every_side_is_still_missing() -> None:
    got = one([log_side("a", None)], log_side("b", None))
    assert got["decode_tps[phase 1 (64K, N=10)]"].verdict == "missing"  # type: ignore[attr-defined]


def test_a_regression_wins_over_a_missing_figure_and_not_comparable_over_both() -> None:
    base = log_side("a", 100.0, oom=0)
    base.measures.append(Measure("kv_pool_tokens", "run", 1e6))
    cand = log_side("b", 80.0, oom=0)
    cand.measures.append(Measure("kv_pool_tokens", "run", None, missing="no pool line"))
    assert gate_sides([base], cand).exit_status == 1
    other = log_side("c", 80.0, scope=Scope("phase 1", "phase 1 (200K, N=10)", input_tokens=200_000, concurrency=10))
    assert gate_sides([base], other).exit_status == 2


@pytest.mark.parametrize(
    ("scope", "gpus", "problem"),
    [
        (Scope("phase 1", "p", input_tokens=16384, concurrency=10), {}, "input length (phase 1)"),
        (Scope("phase 1", "p", input_tokens=65536, concurrency=16), {}, "concurrency (phase 1)"),
        (Scope("phase 1", "p", input_tokens=65536, concurrency=10, output_tokens=1024), {}, "output length"),
        (PHASE, {"tensor_parallel": 4}, "GPU count: tensor parallel size 8 in a, 4 in b"),
        (PHASE, {"data_parallel": 2}, "GPU count: data parallel size 1 in a, 2 in b"),
    ],
)
def test_another_workload_is_not_comparable_and_named(scope: Scope, gpus: dict[str, int], problem: str) -> None:
    base, cand = log_side("a", 100.0, data_parallel=1), log_side("b", 100.0, data_parallel=1, scope=scope)
    for name, value in gpus.items():
        setattr(cand, name, value)
    found = compare_sides(base, cand)
    assert any(p.startswith(problem) for p in found.problems), found.problems
    assert gate_sides([base], cand).exit_status == 2


def test_another_engine_only_with_allow_engine_change() -> None:
    base, cand = log_side("a", 100.0), log_side("b", 100.0)
    cand.engine = "sglang"
    assert any("engine: vllm in a, sglang in b" in p for p in compare_sides(base, cand).problems)
    allowed = compare_sides(base, cand, allow_engine_change=True)
    assert not allowed.problems and any("--allow-engine-change" in n for n in allowed.notes)


def test_a_log_against_a_client_result_is_not_comparable() -> None:
    client = Side(source="bench.json", origin="client")
    assert "measure different things" in compare_sides(log_side("a", 100.0), client).problems[0]


def test_the_same_lengths_within_tolerance_are_comparable() -> None:
    near = Scope("phase 1", "p", input_tokens=64_000, input_estimated=True, concurrency=10, output_tokens=2700,
                 output_estimated=True)
    assert compare_sides(log_side("a", 100.0), log_side("b", 100.0, scope=near)).problems == []


@given(
    base=st.floats(1.0, 1e5),
    ratio=st.floats(0.2, 5.0),
    threshold=st.floats(0.0, 50.0),
    cv=st.one_of(st.none(), st.floats(0.0, 0.5)),
    key=st.sampled_from(sorted(BY_KEY)),
)
def test_a_verdict_agrees_with_its_own_numbers(
    base: float, ratio: float, threshold: float, cv: float | None, key: str
) -> None:
    j = judge_metric(
        BY_KEY[key],
        "phase 1",
        "phase 1",
        [("a", Measure(key, "phase 1", base, noise=cv))],
        ("b", Measure(key, "phase 1", base * ratio, noise=cv)),
        threshold,
    )
    assert j is not None and j.worse_pct is not None
    worse = (ratio - 1) * 100 * (1 if BY_KEY[key].better == "lower" else -1)
    assert j.worse_pct == pytest.approx(worse, rel=1e-9, abs=1e-9)
    assert j.bound_pct == max(threshold, 100 * cv if cv is not None else 0.0)
    if j.verdict == "regressed":
        assert j.worse_pct > j.bound_pct
    elif j.verdict == "within noise":
        assert threshold < j.worse_pct <= j.bound_pct and j.bound_source == "window cv"
    elif j.verdict == "improved":
        assert -j.worse_pct > j.bound_pct
    else:
        assert j.verdict == "holds" and j.worse_pct <= threshold


def test_default_thresholds_are_five_percent() -> None:
    assert Thresholds().pct("ttft_p90_ms") == 5.0 and thresholds().pct("decode_tps") == 5.0
