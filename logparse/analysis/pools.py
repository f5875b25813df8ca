"""The KV pools of a hybrid model, each with its own size and memory, and the one that binds.

A hybrid SGLang model keeps more than one pool: a sliding-window model (SWA) a full-attention
pool and a sliding-window pool (`SWAKVPool mem usage: x GB, swa size: S, full size: F` after
one `KV Cache is allocated. #tokens: …, K size: …, V size: …` line for each, swa first); a
linear-attention model a KV pool and a Mamba state pool (`Mamba Cache is allocated.
max_mamba_cache_size: N, conv_state size: …, ssm_state size: …`). A pool's tokens are never
paired with another pool's memory. The binding pool is the one whose printed usage peaked
highest over the run (Decode lines' `full token usage`, `swa token usage`, `mamba usage`): it
fills first and stops admission; with no usage printed, it is not named.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from logparse.analysis._frames import table

_KV = {
    "tokens": pl.Int64(),
    "k_gb": pl.Float64(),
    "v_gb": pl.Float64(),
    "kv_gb": pl.Float64(),
    "pool": pl.String(),
    "swa_layer_tokens": pl.Int64(),
    "full_layer_tokens": pl.Int64(),
    "max_mamba_cache_size": pl.Int64(),
    "conv_state_gb": pl.Float64(),
    "ssm_state_gb": pl.Float64(),
}
_USAGE = {"token_usage": pl.Float64(), "swa_token_usage": pl.Float64(), "mamba_usage": pl.Float64()}
USAGE_OF = {"full": "token_usage", "swa": "swa_token_usage", "mamba": "mamba_usage"}


def kv_pools(tables: Mapping[str, pl.DataFrame]) -> list[dict[str, Any]]:
    """The pools of a hybrid model (one dict each: ``pool`` `full` / `swa` / `mamba`, ``tokens``
    (Mamba: states), ``gib``, ``line_no``, ``peak_usage``), or [] for a model of one pool.

    Examples
    --------
    >>> kv = pl.DataFrame({"line_no": [152, 153, 154], "tokens": [148717, 185897, None],
    ...     "k_gb": [10.21, 4.25, None], "v_gb": [10.21, 4.25, None], "kv_gb": [None, None, 28.93],
    ...     "pool": [None, None, "swa_total"], "swa_layer_tokens": [None, None, 148717],
    ...     "full_layer_tokens": [None, None, 185897]})
    >>> [(p["pool"], p["tokens"], p["gib"]) for p in kv_pools({"kv_pool": kv})]
    [('full', 185897, 8.5), ('swa', 148717, 20.42)]
    """
    kv = table(tables, "kv_pool", _KV).sort("line_no")
    pools: list[dict[str, Any]] = []
    total = kv.filter(pl.col("pool") == "swa_total")
    sizing = kv.filter(
        pl.col("pool").is_in(["swa_total", "swa_sizing"]) & pl.col("full_layer_tokens").is_not_null()
    )
    if sizing.height:
        row = sizing.row(0, named=True)
        end = total.row(0, named=True)["line_no"] if total.height else None
        allocated = kv.filter(pl.col("pool").is_null() & pl.col("tokens").is_not_null())
        if end is not None:
            allocated = allocated.filter(pl.col("line_no") < end)
        for name, size in (("full", row["full_layer_tokens"]), ("swa", row["swa_layer_tokens"])):
            own = allocated.filter(pl.col("tokens") == size)
            line = own.row(-1, named=True) if own.height else None
            pools.append(
                {
                    "pool": name,
                    "tokens": size,
                    "gib": None if line is None else _kv_gib(line),
                    "line_no": None if line is None else line["line_no"],
                }
            )
    mamba = kv.filter(pl.col("pool") == "mamba")
    if mamba.height:
        row = mamba.row(0, named=True)
        states = [v for v in (row["conv_state_gb"], row["ssm_state_gb"]) if v is not None]
        if not pools:
            line = _smallest_rank_pool(kv.filter(pl.col("pool").is_null() & pl.col("tokens").is_not_null()))
            if line is not None:
                pools.append(
                    {
                        "pool": "full",
                        "tokens": line["tokens"],
                        "gib": _kv_gib(line),
                        "line_no": line["line_no"],
                    }
                )
        pools.append(
            {
                "pool": "mamba",
                "tokens": row["max_mamba_cache_size"],
                "gib": round(sum(states), 2) if states else None,
                "line_no": row["line_no"],
            }
        )
    return with_peaks(pools, peak_usage(table(tables, "decode_batch", _USAGE)))


def with_peaks(pools: list[dict[str, Any]], peaks: Mapping[str, float]) -> list[dict[str, Any]]:
    """`pools` with each one's ``peak_usage`` from `peaks` (`peak_usage`)."""
    return [{**p, "peak_usage": peaks.get(p["pool"])} for p in pools]


def binding_pool(pools: list[dict[str, Any]]) -> str | None:
    """The pool whose printed usage peaked highest (`kv_pools`), or None when none printed one."""
    used = [p for p in pools if p.get("peak_usage") is not None]
    return max(used, key=lambda p: p["peak_usage"])["pool"] if used else None


def _smallest_rank_pool(allocated: pl.DataFrame) -> dict[str, Any] | None:
    """The pool line that binds across ranks: each rank's first `KV Cache is allocated` line (the
    target model's; a draft's comes after it), the smallest of them (the first of equals). Ranks
    that print different pools are limited by the smallest, so its tokens and memory are the pool's
    (`coldstart.kv_pool_range` names the range)."""
    if allocated.is_empty():
        return None
    firsts = (
        allocated.sort("line_no")
        .with_columns(pl.col("rank").fill_null("-"))
        .unique("rank", keep="first", maintain_order=True)
    )
    return firsts.sort("tokens", "line_no").row(0, named=True)


def _kv_gib(line: Mapping[str, Any]) -> float | None:
    if line.get("kv_gb") is not None:
        return float(line["kv_gb"])
    if line.get("k_gb") is None:
        return None
    return round(float(line["k_gb"]) + float(line.get("v_gb") or 0.0), 2)


def peak_usage(decode: pl.DataFrame) -> dict[str, float]:
    """The highest usage each pool's column printed in SGLang's Decode lines (`decode`: the
    ``decode_batch`` table, or just its usage columns), by pool name."""
    peaks = {}
    for pool, column in USAGE_OF.items():
        if column not in decode.columns:
            continue
        peak = decode.get_column(column).max()
        if peak is not None:
            peaks[pool] = float(peak)  # type: ignore[arg-type]
    return peaks


__all__ = ["USAGE_OF", "binding_pool", "kv_pools", "peak_usage", "with_peaks"]
