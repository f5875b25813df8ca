"""The emulator never writes a run no engine could have printed, and its presets agree with
themselves: KV usage is the tokens in use over the pool the log printed, never above 100 %,
and no request is longer than the model's maximum length."""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.cli import cli
from logparse.emulate import PhaseParams, RunParams, StartupParams, emulate
from logparse.emulate.fixtures import fixture_params
from logparse.ingest import ingest

USAGE_DIGITS = 0.005      # SGLang prints the usage with 2 decimals
PCT_DIGITS = 0.05         # vLLM prints the KV usage percentage with 1 decimal


def _tables(params: RunParams) -> dict[str, pl.DataFrame]:
    run = emulate(params)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        run.write(path)
        return ingest(path, engine=params.engine, year=int(params.start[:4])).tables


def _printed_pool(tables: dict[str, pl.DataFrame]) -> int:
    kv = tables["kv_pool"].filter(pl.col("tokens").is_not_null()).sort("line_no")
    return int(kv.get_column("tokens")[0])


def test_a_prompt_longer_than_the_model_is_refused() -> None:
    params = RunParams(engine="vllm", startup=StartupParams(max_model_len=32_768),
                       phases=(PhaseParams(concurrency=1, input_len=200_000, output_len=100),))
    with pytest.raises(ValueError, match="exceeds max_model_len"):
        emulate(params)


def test_kv_usage_above_100_percent_is_refused() -> None:
    # 10 x 64K tokens in a pool of 413,696: the "KV usage 396.8 %" run of the issue
    params = RunParams(engine="vllm", startup=StartupParams(max_model_len=131_072),
                       phases=(PhaseParams(concurrency=10, input_len=64_000, output_len=1000),))
    with pytest.raises(ValueError, match="usage above 100 %"):
        emulate(params)


def test_the_cli_says_why_in_one_line() -> None:
    result = CliRunner().invoke(cli, ["emulate", "--engine", "sglang", "--input-len", "200000"])
    assert result.exit_code == 2
    assert "exceeds max_model_len" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name,params", list(fixture_params()), ids=[n for n, _ in fixture_params()])
def test_every_preset_prints_usage_of_the_pool_it_printed(name: str, params: RunParams) -> None:
    tables = _tables(params)
    if params.engine == "sglang":
        pool = _printed_pool(tables)
        decode = tables["decode_batch"]
        assert decode.height
        implied = decode.get_column("num_token") / pool
        assert ((decode.get_column("token_usage") - implied).abs() <= USAGE_DIGITS + 1e-9).all(), name
        assert (decode.get_column("token_usage") <= 1.0).all()
    else:
        stats = tables["engine_stats"]
        assert (stats.get_column("gpu_kv_pct") <= 100.0 + PCT_DIGITS).all(), name


@st.composite
def crowded_runs(draw: st.DrawFn) -> RunParams:
    """Runs near the pool's and the model's limits, either side of them."""
    engine = draw(st.sampled_from(["vllm", "sglang"]))
    pool = draw(st.sampled_from([20_000, 100_000, 413_696]))
    max_len = draw(st.sampled_from([8_192, 32_768, 131_072]))
    phase = PhaseParams(concurrency=draw(st.integers(1, 12)), input_len=draw(st.integers(500, 40_000)),
                        output_len=draw(st.integers(50, 2_000)), decode_tps=40.0)
    return RunParams(engine=engine, seed=draw(st.integers(0, 1000)),
                     startup=StartupParams(kv_pool_tokens=pool, max_model_len=max_len,
                                           pre_load_s=9.0, weight_load_s=6.5, init_s=30.0, cuda_graph_s=9.0),
                     phases=(phase,))


@settings(max_examples=12, deadline=None)
@given(crowded_runs())
def test_an_emulated_run_is_physically_possible_or_refused(params: RunParams) -> None:
    phase = params.phases[0]
    fits_model = phase.input_len + phase.output_len <= params.startup.max_model_len
    try:
        tables = _tables(params)
    except ValueError as exc:
        assert not fits_model or "usage above 100 %" in str(exc)
        return
    assert fits_model
    if params.engine == "sglang":
        pool = _printed_pool(tables)
        decode = tables["decode_batch"]
        assert (decode.get_column("num_token") <= pool).all()
        assert (decode.get_column("token_usage") <= 1.0).all()
    else:
        assert (tables["engine_stats"].get_column("gpu_kv_pct") <= 100.0).all()


def test_dcp_ranks_count_their_own_share() -> None:
    # 4 requests of 20K on a pool of 30K tokens per rank: fits only because 4 ranks share each request
    base = RunParams(engine="sglang", startup=StartupParams(kv_pool_tokens=30_000, max_model_len=32_768),
                     phases=(PhaseParams(concurrency=4, input_len=20_000, output_len=200),))
    with pytest.raises(ValueError, match="usage above 100 %"):
        emulate(base)
    tables = _tables(dataclasses.replace(base, tp=4, dcp_size=4))
    decode = tables["decode_batch"].filter(pl.col("running_req") == 4)
    assert decode.height
    assert (decode.get_column("num_token") <= 30_000).all()
    assert (decode.get_column("num_token") * 4 >= 4 * 20_000).all()   # 4 shares hold 4 whole prompts
