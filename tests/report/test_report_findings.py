"""Captions and adapter helpers on small frames."""

from __future__ import annotations

import polars as pl

from logparse.report import findings as F
from logparse.report import frames as R


def windows(rows: list[tuple[str, int, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "series": s,
                "source": f"{s}-{ctx}",
                "input_tokens": ctx,
                "context_label": R.tokens_label(ctx),
                "concurrency": n,
                "per_request_tps": tps,
                "per_request_tps_peak": tps * 1.05,
                "ms_per_token": 1000 / tps,
            }
            for s, ctx, n, tps in rows
        ]
    )


def test_crossover_found_between_the_two_lengths() -> None:
    frame = windows(
        [
            ("vllm", 64_000, 10, 50.1),
            ("vllm", 200_000, 10, 16.3),
            ("sglang", 64_000, 10, 33.5),
            ("sglang", 200_000, 10, 26.8),
        ]
    )
    assert F.crossovers(frame) == [{"leader": "sglang", "other": "vllm", "from": 64_000, "to": 200_000}]
    caption = F.degradation_caption(frame, R.degradation_ratios(frame))
    assert "vllm: stable decode throughput per request fell 3.07× from 64K to 200K" in caption
    assert "sglang: stable decode throughput per request fell 1.25× from 64K to 200K" in caption
    assert caption.endswith("sglang overtakes vllm between 64K and 200K")


def test_no_crossover_when_one_engine_leads_throughout() -> None:
    frame = windows(
        [("a", 8_192, 4, 60.0), ("a", 32_768, 4, 50.0), ("b", 8_192, 4, 40.0), ("b", 32_768, 4, 39.0)]
    )
    assert F.crossovers(frame) == []


def test_ratio_over_three_lengths_is_end_to_end() -> None:
    frame = windows([("a", 8_192, 4, 60.0), ("a", 32_768, 4, 40.0), ("a", 131_072, 4, 20.0)])
    caption = F.degradation_caption(frame, R.degradation_ratios(frame))
    assert caption == "a: stable decode throughput per request fell 3.00× from 8K to 128K"


def test_several_n_at_one_length_get_no_ratio() -> None:
    frame = windows([("a", 8_192, 4, 60.0), ("a", 8_192, 32, 58.0), ("a", 16_384, 8, 55.0)])
    caption = F.degradation_caption(frame, R.degradation_ratios(frame))
    assert "fell" not in caption
    assert "several N at one context length" in caption


def test_helpers() -> None:
    assert R.tokens_label(65_536) == "64K"
    assert R.tokens_label(200_000) == "200K"
    assert R.tokens_label(None) == "?"
    assert sorted(["TP10", "server", "TP2", "TP0"], key=R.rank_key) == ["server", "TP0", "TP2", "TP10"]
    frame = pl.DataFrame({"i": range(10_000)})
    thinned = R.thin(frame, max_points=1000)
    assert thinned.height <= 1001
    assert thinned["i"][0] == 0
    assert thinned["i"][-1] == 9_999
    assert R.thin(frame.head(10)).height == 10
