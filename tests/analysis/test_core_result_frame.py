# ruff: noqa: E501  (the expected Core Result table is pasted as printed)
"""`compare.core_result_frame`: the Core Result as structured rows, which `core_result` renders."""
from __future__ import annotations

from typing import Any

import polars as pl

from logparse.analysis.compare import (COMPARE_SCHEMA, compare_degradation, core_result, core_result_frame,
                                       render_compare)
from logparse.analysis.text import render_table


def _row(source: str, engine: str, input_tokens: int, tps: float, peak: float, label: str) -> dict[str, Any]:
    return {**dict.fromkeys(COMPARE_SCHEMA), "source": source, "engine": engine, "phase": 1,
            "input_tokens": input_tokens, "input_tokens_estimated": False, "input_label": label,
            "concurrency": 10, "samples": 20, "duration_s": 60.0, "gen_tps_mean": tps, "gen_tps_min": tps - 5,
            "gen_tps_max": peak, "per_request_tps": tps / 10, "per_request_tps_peak": peak / 10,
            "ms_per_token": 10_000 / tps, "cv": 0.02, "trusted": True}


ROWS = pl.DataFrame([_row("v64.log", "vllm", 64_000, 501.4, 537.2, "64K"),
                     _row("s64.log", "sglang", 64_000, 335.0, 417.0, "64K"),
                     _row("v200.log", "vllm", 200_000, 163.2, 167.0, "200K"),
                     _row("s200.log", "sglang", 200_000, 268.0, 288.0, "200K")],
                    schema=COMPARE_SCHEMA, orient="row")


def test_frame_has_the_cells_of_the_text() -> None:
    degr = compare_degradation(ROWS)
    frame = core_result_frame(ROWS, degr)
    assert frame is not None
    assert frame.columns == ["scenario", "sglang", "vllm", "result"]
    assert all(dtype == pl.String for dtype in frame.dtypes)
    assert frame.to_dicts() == [
        {"scenario": "64K stable decode (N=10)", "sglang": "~335 tok/s", "vllm": "~501 tok/s",
         "result": "vllm leads by ~1.50x"},
        {"scenario": "64K per request", "sglang": "33.5 tok/s, 29.9 ms", "vllm": "50.1 tok/s, 19.9 ms",
         "result": ""},
        {"scenario": "200K stable decode (N=10)", "sglang": "~268 tok/s", "vllm": "~163 tok/s",
         "result": "sglang leads by ~1.64x"},
        {"scenario": "200K per request", "sglang": "26.8 tok/s, 37.3 ms", "vllm": "16.3 tok/s, 61.3 ms",
         "result": ""},
        {"scenario": "decode degradation 64K→200K", "sglang": "1.25x (peak/mean 1.56x)",
         "vllm": "3.07x (peak/mean 3.29x)", "result": "sglang scales better"},
    ]
    assert core_result(ROWS, degr) == render_table(frame.rows(), frame.columns, align="lrrl")


def test_core_result_text_is_unchanged() -> None:
    text = core_result(ROWS, compare_degradation(ROWS))
    assert text == "\n".join([
        "scenario                                      sglang                     vllm  result",
        "---------------------------  -----------------------  -----------------------  ----------------------",
        "64K stable decode (N=10)                  ~335 tok/s               ~501 tok/s  vllm leads by ~1.50x",
        "64K per request                  33.5 tok/s, 29.9 ms      50.1 tok/s, 19.9 ms",
        "200K stable decode (N=10)                 ~268 tok/s               ~163 tok/s  sglang leads by ~1.64x",
        "200K per request                 26.8 tok/s, 37.3 ms      16.3 tok/s, 61.3 ms",
        "decode degradation 64K→200K  1.25x (peak/mean 1.56x)  3.07x (peak/mean 3.29x)  sglang scales better",
    ])
    assert "\nCore Result\n" + text in render_compare(ROWS, compare_degradation(ROWS))


def test_no_frame_without_two_engines() -> None:
    one = ROWS.filter(pl.col("engine") == "vllm")
    assert core_result_frame(one, compare_degradation(one)) is None
    assert core_result(one, compare_degradation(one)) is None
