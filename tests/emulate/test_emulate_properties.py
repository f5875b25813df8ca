"""Hypothesis-chosen runs never crash, keep time ordered, and their truth matches their text."""
from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import emulate_grammar as G  # noqa: E402

from logparse.emulate import (  # noqa: E402
    SGLANG_ERAS, VLLM_ERAS, EmulatedRun, LogStyle, PhaseParams, RunParams, StartupParams, emulate,
)

FLASHINFER = G.re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) - (?:INFO|WARNING) - ")


@st.composite
def phases(draw: st.DrawFn, spec_tokens: int, oom: bool) -> PhaseParams:
    n = draw(st.integers(1, 12))
    return PhaseParams(
        concurrency=n, input_len=draw(st.integers(16, 20_000)), output_len=draw(st.integers(2, 400)),
        gap_s=draw(st.floats(0.5, 60.0)), prefill_tps=draw(st.floats(500.0, 50_000.0)),
        prefill_ctx_slowdown=draw(st.floats(0.0, 2.0)),
        prefill_chunk_tps=tuple(draw(st.lists(st.floats(500.0, 40_000.0), max_size=3))),
        decode_tps=draw(st.floats(3.0, 90.0)), decode_ctx_slowdown=draw(st.floats(0.0, 3.0)),
        noise=draw(st.floats(0.0, 0.3)), prefill_noise=draw(st.floats(0.0, 0.2)),
        spec_accept_len=draw(st.floats(1.0, spec_tokens + 1.0)) if spec_tokens else None,
        spec_jitter=draw(st.floats(0.0, 0.5)), stall_s=draw(st.floats(0.0, 5.0)),
        oom_retries=draw(st.integers(0, 5)) if oom else 0, jit_compiles=draw(st.integers(0, 3)),
        preemptions=tuple(draw(st.lists(st.floats(0.0, 30.0), max_size=2))),
    )


@st.composite
def runs(draw: st.DrawFn) -> RunParams:
    engine = draw(st.sampled_from(["vllm", "sglang"]))
    era = draw(st.sampled_from(VLLM_ERAS if engine == "vllm" else SGLANG_ERAS))
    spec_tokens = draw(st.sampled_from([0, 0, 2, 5]))
    oom = engine == "vllm" or era.name != "0.5.14"
    hybrid = engine == "sglang" and era.name != "0.4" and draw(st.booleans())
    return RunParams(
        engine=engine, era=era.name, seed=draw(st.integers(0, 2**31)), tp=draw(st.sampled_from([1, 2, 4, 8])),
        start=draw(st.datetimes(datetime(2024, 1, 1), datetime(2027, 12, 31), allow_imaginary=False))
        .replace(microsecond=0).isoformat(),
        spec_tokens=spec_tokens, max_num_batched_tokens=draw(st.sampled_from([512, 2048, 8192, 32768])),
        hybrid_ssm=hybrid, decode_log_interval=draw(st.sampled_from([1, 10, 40])),
        warnings=tuple(draw(st.lists(st.sampled_from(["slow_tokenizer", "fp8_kv_scale"]), unique=True))),
        startup=StartupParams(compile_s=None if era.name == "0.6" else draw(st.sampled_from([None, 4.0])),
                              oom_retries=draw(st.integers(0, 3)) if oom else 0, mamba_slots=32),
        style=LogStyle(wrapper=draw(st.sampled_from(["none", "docker", "compose"])),
                       color=draw(st.booleans()), health_poll_s=draw(st.sampled_from([None, 2.0, 10.0])),
                       glue_tqdm=draw(st.booleans())),
        phases=tuple(draw(st.lists(phases(spec_tokens, oom), min_size=1, max_size=3))),
    )


def _times(run: EmulatedRun) -> tuple[list[datetime], list[datetime], list[str]]:
    year = datetime.fromisoformat(run.params.start).year
    engine, foreign, docker = [], [], []
    for line in run.lines:
        bare, stamp = G.strip(line)
        if stamp:
            docker.append(stamp)
        m = (G.SGLANG_PREFIX if run.params.engine == "sglang" else
             G.VLLM_PREFIX["0.6" if run.truth["era"] == "0.6" else "v1"]).match(bare)
        if m:
            engine.append(G.engine_time(run.params.engine, m.group("ts"), year))
        f = FLASHINFER.search(bare)
        if f:
            foreign.append(datetime.strptime(f.group(1), "%Y-%m-%d %H:%M:%S,%f"))
    return engine, foreign, docker


@given(runs())
def test_random_runs_render_in_time_order(params: RunParams) -> None:
    run = emulate(params)
    engine, foreign, docker = _times(run)
    assert engine and engine == sorted(engine)
    assert foreign == sorted(foreign) and docker == sorted(docker)
    assert len(run.text.split("\n")) == len(run.lines) + 1
    json.dumps(run.truth)


@given(runs())
def test_random_runs_keep_truth_and_text_in_step(params: RunParams) -> None:
    run = emulate(params)
    era = run.truth["era"]
    engine = params.engine
    prefix = G.SGLANG_PREFIX if engine == "sglang" else G.VLLM_PREFIX["0.6" if era == "0.6" else "v1"]
    stats = G.vllm_stats_regex(era) if engine == "vllm" else G.sglang_decode_regex(era)
    previous_end = None
    for phase in run.truth["phases"]:
        assert phase["start"] < phase["end"]
        if previous_end is not None:
            assert previous_end < phase["start"]
        previous_end = phase["end"]
        window = phase["stable"]
        if not window:
            continue
        lo, hi = phase["sample_lines"]
        for no, value in zip(window["lines"], window["gen_tps"], strict=True):
            assert lo <= no <= hi
            m = prefix.match(G.strip(run.lines[no - 1])[0])
            assert m and stats.fullmatch(m.group("msg"))
            f = G.fields(m.group("msg"))
            if engine == "vllm":
                assert f["Running"] == phase["concurrency"] and f["Avg prompt throughput"] == 0.0
                assert f.get("Waiting", f.get("Pending")) == 0 and f["Avg generation throughput"] == value
            else:
                assert f["#running-req"] == phase["concurrency"] and f["#queue-req"] == 0
                assert f["gen throughput (token/s)"] == value
        assert window["gen_tps_min"] - 1e-9 <= window["gen_tps_mean"] <= window["gen_tps_max"] + 1e-9
