"""Unit tests of the analysis steps on small hand-built frames."""
from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from logparse.analysis import analyze
from logparse.analysis.degradation import degradation
from logparse.analysis.phases import find_phases, plateau_running
from logparse.analysis.prefill import first_request_chunks, phase_input_exact, prefill_chunks, request_inputs
from logparse.analysis.samples import decode_samples, rank_samples
from logparse.analysis.windows import mark_stable, no_window_reasons, stable_windows

T0 = dt.datetime(2026, 7, 28, 17, 0, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def vllm_stats(rows: list[tuple[float, float, float, int, int]], *, start_line: int = 100,
               engine_idx: int | None = 0, kv: float = 10.0) -> pl.DataFrame:
    """engine_stats rows from (t, prompt_tps, gen_tps, running, waiting)."""
    return pl.DataFrame({
        "line_no": [start_line + 2 * i for i in range(len(rows))],
        "time": [at(r[0]) for r in rows], "rank": ["APIServer"] * len(rows), "level": ["INFO"] * len(rows),
        "rule": ["engine_stats_v1"] * len(rows),
        "prompt_tps": [r[1] for r in rows], "gen_tps": [r[2] for r in rows],
        "running": [r[3] for r in rows], "waiting": [r[4] for r in rows],
        "gpu_kv_pct": [kv] * len(rows), "engine_idx": [engine_idx] * len(rows),
    }, schema_overrides={"time": pl.Datetime("us"), "engine_idx": pl.Int64})


# A vLLM run: a prefill stretch, five undisturbed samples at N=4, the tail, idle, then a second
# phase at N=2 with a longer context (slower per request).
PHASE1 = [(0, 9000.0, 40.0, 4, 0), (10, 3000.0, 300.0, 4, 0), (20, 0.0, 400.0, 4, 0), (30, 0.0, 410.0, 4, 0),
          (40, 0.0, 390.0, 4, 0), (50, 0.0, 400.0, 4, 0), (60, 0.0, 150.0, 0, 0), (70, 0.0, 0.0, 0, 0)]
PHASE2 = [(200, 8000.0, 10.0, 2, 0), (210, 0.0, 100.0, 2, 0), (220, 0.0, 100.0, 2, 0), (230, 0.0, 110.0, 2, 0),
          (240, 0.0, 30.0, 0, 0)]


def vllm_tables() -> dict[str, pl.DataFrame]:
    return {"engine_stats": vllm_stats(PHASE1 + PHASE2),
            "kv_pool": pl.DataFrame({"line_no": [5], "time": [at(-100)], "rank": ["EngineCore"],
                                     "tokens": [100_000], "max_concurrency": [3.05],
                                     "per_request_tokens": [32768]},
                                    schema_overrides={"time": pl.Datetime("us")})}


def test_vllm_samples_flag_prefill_and_kv_tokens() -> None:
    ranks = rank_samples(vllm_tables(), engine="vllm", pool_tokens=100_000)
    assert ranks.get_column("prefill").to_list()[:3] == [True, True, False]
    assert ranks.get_column("kv_tokens")[0] == pytest.approx(10_000.0)
    samples = decode_samples(ranks)
    assert samples.get_column("interval_s").to_list()[1] == pytest.approx(10.0)
    assert samples.get_column("context_per_request")[0] == pytest.approx(2_500.0)


def test_dp_engines_are_summed_at_each_instant() -> None:
    a = vllm_stats([(0, 0.0, 100.0, 3, 0), (10, 0.0, 110.0, 3, 0)], start_line=10, engine_idx=0)
    b = vllm_stats([(0, 0.0, 90.0, 2, 1), (10, 0.0, 80.0, 2, 0)], start_line=11, engine_idx=1)
    samples = decode_samples(rank_samples({"engine_stats": pl.concat([a, b])}, engine="vllm"))
    assert samples.get_column("gen_tps").to_list() == [190.0, 190.0]
    assert samples.get_column("running").to_list() == [5, 5]
    assert samples.get_column("waiting").to_list() == [1, 0]
    assert samples.get_column("lines").to_list() == [[10, 11], [12, 13]]


def test_sglang_first_decode_after_prefill_is_out_and_tp_copies_are_dropped() -> None:
    decode_rows = [(10, "TP0", 4), (11, "TP1", 4), (13, "TP0", 4), (14, "TP1", 4), (15, "TP0", 4)]
    decode = pl.DataFrame({
        "line_no": [r[0] for r in decode_rows], "time": [at(r[0]) for r in decode_rows],
        "rank": [r[1] for r in decode_rows], "running_req": [r[2] for r in decode_rows],
        "num_token": [4000] * 5, "token_usage": [0.1] * 5, "gen_tps": [100.0] * 5, "queue_req": [0] * 5,
    }, schema_overrides={"time": pl.Datetime("us")})
    prefill = pl.DataFrame({"line_no": [9, 12], "time": [at(9), at(12)], "rank": ["TP0", "TP0"],
                            "new_seq": [1, 1], "new_token": [10, 10], "cached_token": [0, 0],
                            "running_req": [0, 4], "queue_req": [0, 0], "input_tps": [1.0, 2.0]},
                           schema_overrides={"time": pl.Datetime("us")})
    ranks = rank_samples({"decode_batch": decode, "prefill_batch": prefill}, engine="sglang")
    assert ranks.get_column("line_no").to_list() == [10, 13, 15]          # TP1 copies dropped
    assert ranks.get_column("prefill").to_list() == [True, True, False]   # 13 follows the prefill at 12


def test_phases_split_on_idle_and_take_the_running_plateau() -> None:
    samples = decode_samples(rank_samples(vllm_tables(), engine="vllm"))
    phases = find_phases(samples, idle_gap_s=25.0)
    assert phases.get_column("concurrency").to_list() == [4, 2]
    assert phases.get_column("first_line").to_list() == [100, 116]
    # the samples printing nothing running (t=60, 70, 240) are idle, whatever their throughput
    assert phases.get_column("last_line").to_list() == [110, 122]
    # disjoint and ordered
    assert phases.get_column("start")[1] > phases.get_column("end")[0]
    given = find_phases(samples, idle_gap_s=25.0, concurrency=3)
    assert given.get_column("concurrency").to_list() == [3, 3]
    assert given.get_column("concurrency_source").to_list() == ["given", "given"]


def test_a_long_silence_without_an_idle_line_still_splits() -> None:
    samples = decode_samples(rank_samples(
        {"engine_stats": vllm_stats([(0, 0.0, 50.0, 1, 0), (10, 0.0, 50.0, 1, 0), (100, 0.0, 50.0, 1, 0)])},
        engine="vllm"))
    assert find_phases(samples, idle_gap_s=25.0).height == 2
    assert find_phases(samples, idle_gap_s=120.0).height == 1


def test_plateau_ignores_a_single_spike() -> None:
    assert plateau_running(pl.Series([1, 2, 4, 4, 4, 5, 3, 1])) == 4
    assert plateau_running(pl.Series([0, 0])) is None


def _windows(tables: dict[str, pl.DataFrame], **kw: object) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    from logparse.analysis.phases import assign_phase

    samples = decode_samples(rank_samples(tables, engine="vllm", pool_tokens=100_000))
    phases = find_phases(samples, idle_gap_s=25.0, **kw)  # type: ignore[arg-type]
    marked = mark_stable(assign_phase(samples, phases), phases)
    return marked, phases, stable_windows(marked, phases, min_samples=3)


def test_stable_window_statistics() -> None:
    marked, _, windows = _windows(vllm_tables())
    w = windows.row(0, named=True)
    assert marked.filter(pl.col("stable") & (pl.col("phase") == 1)).get_column("line_no").to_list() == \
        [104, 106, 108, 110]
    assert w["samples"] == 4
    assert w["gen_tps_mean"] == pytest.approx(400.0)
    assert w["gen_tps_median"] == pytest.approx(400.0)
    assert (w["gen_tps_min"], w["gen_tps_max"]) == (390.0, 410.0)
    assert w["per_request_tps"] == pytest.approx(100.0)
    assert w["ms_per_token"] == pytest.approx(10.0)
    assert w["cv"] == pytest.approx(pl.Series([400.0, 410.0, 390.0, 400.0]).std(ddof=0) / 400.0)
    assert w["duration_s"] == pytest.approx(40.0)
    assert w["context_tokens_per_request"] == pytest.approx(2_500.0)
    assert w["trusted"]
    second = windows.row(1, named=True)
    assert second["samples"] == 3 and second["per_request_tps"] == pytest.approx(310.0 / 3 / 2)
    assert second["trusted"]


def test_short_window_is_flagged_and_missing_window_explained() -> None:
    tables = {"engine_stats": vllm_stats([(0, 5000.0, 10.0, 4, 0), (10, 0.0, 100.0, 4, 0),
                                          (20, 1000.0, 100.0, 4, 0), (30, 0.0, 50.0, 0, 0)])}
    _, _, windows = _windows(tables)
    assert windows.height == 1 and not windows.row(0, named=True)["trusted"]
    assert windows.row(0, named=True)["note"] == "not trusted: 1 sample(s), need 3, 10.0 s, need 20.0 s"
    busy = {"engine_stats": vllm_stats([(0, 5000.0, 10.0, 4, 2), (10, 500.0, 100.0, 4, 1),
                                        (20, 0.0, 100.0, 4, 1), (30, 0.0, 50.0, 0, 0)])}
    marked, phases, windows = _windows(busy)
    assert windows.is_empty()
    reasons = no_window_reasons(marked, phases)
    assert reasons.get_column("reason").to_list() == ["requests were always waiting while N=4 ran"]


def test_stable_window_needs_exactly_n_running() -> None:
    marked, _, windows = _windows(vllm_tables(), concurrency=5)
    assert windows.is_empty()
    assert not marked.get_column("stable").any()


def test_degradation_orders_by_context_and_reports_peak() -> None:
    w = pl.DataFrame({"engine": ["a", "a", "b", "b"], "input_tokens": [200_000, 64_000, 64_000, 200_000],
                      "per_request_tps": [16.3, 50.1, 33.5, 26.8], "per_request_tps_peak": [16.7, 53.7, 41.8, 28.8],
                      "src": ["a200", "a64", "b64", "b200"]})
    out = degradation(w, by="engine", label="src")
    assert out.get_column("from_label").to_list() == ["a64", "b64"]
    assert out.get_column("ratio").to_list() == pytest.approx([50.1 / 16.3, 33.5 / 26.8])
    assert out.get_column("ratio_peak_over_mean").to_list() == pytest.approx([53.7 / 16.3, 41.8 / 26.8])
    assert out.get_column("context_ratio").to_list() == pytest.approx([200 / 64, 200 / 64])


def _prefill_lines(rows: list[tuple[int, int, int, int, float]]) -> pl.DataFrame:
    """(new_seq, new_token, cached, running_req, input_tps) per line."""
    return pl.DataFrame({
        "series": [0] * len(rows), "line_no": list(range(1, len(rows) + 1)),
        "time": [at(i) for i in range(len(rows))], "new_seq": [r[0] for r in rows],
        "new_token": [r[1] for r in rows], "cached_token": [r[2] for r in rows],
        "running_req": [r[3] for r in rows], "input_tps": [r[4] for r in rows],
    }, schema_overrides={"time": pl.Datetime("us")})


def test_prefill_chunks_follow_requests_through_packed_batches() -> None:
    # three 250-token prompts, budget 100, as SGLang packs them: A A A+B B B C C C
    lines = _prefill_lines([(1, 100, 0, 0, 5.0), (1, 100, 0, 0, 90.0), (2, 100, 0, 0, 80.0),
                            (1, 100, 0, 1, 70.0), (1, 100, 0, 1, 95.0), (1, 100, 0, 2, 85.0),
                            (1, 100, 0, 2, 75.0), (1, 50, 0, 2, 65.0)])
    chunks = prefill_chunks(lines)
    assert chunks.get_column("request").to_list() == [0, 0, 0, 1, 1, 2, 2, 2]
    assert chunks.get_column("completes").to_list() == [0, 0, 1, 0, 1, 0, 0, 1]
    assert chunks.get_column("cached_tokens").to_list() == [0, 100, 200, None, None, 0, 100, 200]
    assert chunks.get_column("input_tps").to_list() == [90.0, 80.0, 70.0, 95.0, 85.0, 75.0, 65.0, None]
    assert phase_input_exact(chunks) == (250, 3)
    exact = request_inputs(chunks)
    assert exact.get_column("request").to_list() == [2]
    assert exact.get_column("input_tokens").to_list() == [250]
    first = first_request_chunks(chunks)
    assert first.get_column("cached_tokens").to_list() == [0, 100]
    assert first.get_column("input_tps").to_list() == [90.0, 80.0]


def test_phase_input_takes_cached_tokens_and_retractions_into_account() -> None:
    lines = _prefill_lines([(1, 60, 40, 0, 1.0), (1, 100, 0, 1, 1.0), (1, 100, 0, 2, 1.0)])
    assert phase_input_exact(prefill_chunks(lines)) == (100, 3)
    def retraction(line: int, gained: int | None) -> pl.DataFrame:
        return pl.DataFrame({"line_no": [line], "count": [1], "tokens_gained": [gained]},
                            schema={"line_no": pl.Int64, "count": pl.Int64, "tokens_gained": pl.Int64})

    # unknown re-prefilled tokens: only the lines before the retraction
    assert phase_input_exact(prefill_chunks(lines), retractions=retraction(3, None)) == (100, 2)
    assert phase_input_exact(prefill_chunks(lines), retractions=retraction(1, None)) == (None, 0)
    # a request retracted with 120 tokens and prefilled again in a fourth line
    again = _prefill_lines([(1, 60, 40, 0, 1.0), (1, 100, 0, 1, 1.0), (1, 100, 0, 2, 1.0), (1, 120, 0, 2, 1.0)])
    again = again.with_columns(pl.Series("line_no", [1, 2, 3, 5]))   # the retraction is line 4
    breaks = pl.DataFrame({"series": [0], "line_no": [4], "retracted": [1]})
    chunks = prefill_chunks(again, breaks=breaks)
    assert chunks.get_column("completes").to_list() == [1, 1, 1, 1]
    assert phase_input_exact(chunks, retractions=retraction(4, 120)) == (100, 3)


def test_analyze_end_to_end_on_tables() -> None:
    tables = vllm_tables()
    tables["spec_decode"] = pl.DataFrame({
        "line_no": [105, 107], "time": [at(20), at(30)], "rank": ["APIServer"] * 2,
        "mean_accept_len": [1.1, 1.2], "accepted_tps": [10.0, 20.0], "drafted_tps": [700.0, 700.0],
        "accepted": [100, 200], "drafted": [7000, 7000], "per_position": [[0.1, 0.01], [0.2, 0.0]],
        "draft_accept_pct": [1.4, 2.9]}, schema_overrides={"time": pl.Datetime("us")})
    tables["warning"] = pl.DataFrame({"line_no": [3, 4], "time": [at(-200), at(-199)], "rank": [None, None],
                                      "category": ["slow_tokenizer", "fp8_kv_scale_default"],
                                      "message": ["x", "y"]},
                                     schema_overrides={"time": pl.Datetime("us"), "rank": pl.String})
    a = analyze(tables, engine="vllm", source="t", min_samples=3)
    assert a.phases.height == 2
    spec = a.spec.row(0, named=True)
    assert spec["scope"] == "stable" and spec["lines"] == 2
    assert spec["mean_accept_len"] == pytest.approx(1.15)
    assert spec["accept_rate"] == pytest.approx((0.014 + 0.029) / 2)
    assert spec["wasted_draft_pct"] == pytest.approx(100 * (1 - 30 / 1400))
    assert spec["per_position"] == pytest.approx([0.15, 0.005])
    codes = a.diagnostics.get_column("code").to_list()
    assert {"spec_acceptance_collapse", "slow_tokenizer", "fp8_kv_scale_default",
            "concurrency_above_kv_capacity"} <= set(codes)
    assert "kv_pool_below_context" not in codes          # 100,000-token pool, 32,768 context
    d = a.degradation.row(0, named=True)
    assert d["ratio"] == pytest.approx(100.0 / (310.0 / 3 / 2))


def test_diagnostics_for_pool_oom_jit_and_preemptions() -> None:
    tables = vllm_tables()
    tables["kv_pool"] = tables["kv_pool"].with_columns(pl.lit(1_000_000).alias("per_request_tokens"))
    tables["engine_stats"] = tables["engine_stats"].with_columns(
        pl.when(pl.col("line_no") == 106).then(3).otherwise(None).cast(pl.Int64).alias("preemptions"))
    tables["engine_init"] = pl.DataFrame({"line_no": [50], "time": [at(-50)], "rank": [None],
                                          "phase": ["server_ready"], "seconds": [None]},
                                         schema_overrides={"time": pl.Datetime("us"), "rank": pl.String,
                                                           "seconds": pl.Float64})
    tables["oom"] = pl.DataFrame({"line_no": [60, 61, 62], "time": [at(-5)] * 3, "rank": [None] * 3,
                                  "recovered": [True] * 3, "detail": ["OOM detected"] * 3},
                                 schema_overrides={"time": pl.Datetime("us"), "rank": pl.String})
    tables["jit_compile"] = pl.DataFrame({"line_no": [40, 63, 64, 65], "time": [at(-60), at(-4), at(-4), at(25)],
                                          "rank": [None] * 4, "rule": ["r"] * 4,
                                          "what": ["torch_compile_total", "flashinfer_autotune", "jit_op", "jit_op"],
                                          "seconds": [30.0, None, None, None]},
                                         schema_overrides={"time": pl.Datetime("us"), "rank": pl.String})
    a = analyze(tables, engine="vllm")
    diags = {d["code"]: d for d in a.diagnostics.iter_rows(named=True)}
    assert "KV pool holds 100,000 tokens" in diags["kv_pool_below_context"]["message"]
    assert diags["oom_retries"]["value"] == 3 and "3 after" in diags["oom_retries"]["message"]
    assert diags["runtime_jit"]["value"] == 2 and "inside phase(s) 1" in diags["runtime_jit"]["message"]
    assert diags["preemptions_in_phase"]["phase"] == 1
    assert a.counts["jit_compiles"] == 2 and a.counts["runtime_jit_compiles"] == 2
    assert a.counts["preemptions"] == 3 and a.counts["oom"] == 3


def test_short_stable_window_diagnostic_and_empty_log() -> None:
    tables = {"engine_stats": vllm_stats([(0, 5000.0, 10.0, 4, 0), (10, 0.0, 100.0, 4, 0), (20, 0.0, 0.0, 0, 0)])}
    a = analyze(tables, engine="vllm")
    assert [d["code"] for d in a.diagnostics.iter_rows(named=True)] == ["short_stable_window"]
    empty = analyze({}, engine="sglang")
    assert empty.phases.is_empty() and empty.diagnostics.get_column("code").to_list() == ["no_decode_stats"]


def test_unknown_engine_is_an_input_error() -> None:
    from logparse.errors import InputError

    with pytest.raises(InputError):
        analyze({}, engine="tgi")


def test_sglang_dp_ranks_are_added_up_across_time() -> None:
    # two DP groups printing at different seconds (drifted apart): each round of their lines,
    # one of each group, is summed once at the line completing it (line 11 is not also paired
    # with line 13)
    rows = [(10, "DP0 TP0", 100.0), (11, "DP1 TP1", 80.0), (13, "DP0 TP0", 110.0), (14, "DP1 TP1", 90.0)]
    decode = pl.DataFrame({
        "line_no": [r[0] for r in rows], "time": [at(r[0]) for r in rows], "rank": [r[1] for r in rows],
        "running_req": [4] * 4, "num_token": [1000] * 4, "token_usage": [0.1] * 4,
        "gen_tps": [r[2] for r in rows], "queue_req": [0] * 4,
    }, schema_overrides={"time": pl.Datetime("us")})
    samples = decode_samples(rank_samples({"decode_batch": decode}, engine="sglang"))
    assert samples.get_column("gen_tps").to_list() == [180.0, 200.0]
    assert samples.get_column("lines").to_list() == [[10, 11], [13, 14]]
    assert samples.get_column("running").to_list() == [8, 8]
    assert samples.get_column("n_series").to_list() == [2, 2]
