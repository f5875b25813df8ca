"""One tidy per-sample frame from the engines' periodic stats lines.

vLLM prints one `engine_stats` line per DP engine every stats interval (10 s; silent when idle);
SGLang prints a `Decode batch` line every 40 decode steps and one `Prefill batch` line per prefill
chunk, per DP group. Both become rows of the same shape:

``series`` (vLLM engine index / SGLang DP rank), ``line_no``, ``time``, ``running``, ``waiting``,
``gen_tps``, ``prompt_tps`` (vLLM), ``prefill`` (the sample's interval overlaps a prefill),
``kv_usage`` (0-1), ``kv_tokens`` (KV tokens in use), ``accept_len``, ``accept_rate`` (SGLang),
``preemptions``, ``retracted``.

`rank_samples` gives one row per stats line; `decode_samples` adds the DP series up into one row
per sampling round (throughput is summed across DP engines/ranks, never across TP ranks).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from logparse.analysis._frames import leading_ranks, rank_index, table

RANK_SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "series": pl.Int64(),
    "line_no": pl.Int64(),
    "time": pl.Datetime("us"),
    "running": pl.Int64(),
    "waiting": pl.Int64(),
    "gen_tps": pl.Float64(),
    "prompt_tps": pl.Float64(),
    "prefill": pl.Boolean(),
    "kv_usage": pl.Float64(),
    "kv_tokens": pl.Float64(),
    "accept_len": pl.Float64(),
    "accept_rate": pl.Float64(),
    "preemptions": pl.Int64(),
    "retracted": pl.Int64(),
}

_VLLM_STATS = {
    "prompt_tps": pl.Float64(),
    "gen_tps": pl.Float64(),
    "running": pl.Int64(),
    "waiting": pl.Int64(),
    "gpu_kv_pct": pl.Float64(),
    "engine_idx": pl.Int64(),
    "preemptions": pl.Int64(),
    "engines_aggregated": pl.Int64(),
}
_SGL_DECODE = {
    "running_req": pl.Int64(),
    "num_token": pl.Int64(),
    "token_usage": pl.Float64(),
    "gen_tps": pl.Float64(),
    "queue_req": pl.Int64(),
    "accept_len": pl.Float64(),
    "accept_rate": pl.Float64(),
    "retracted_req": pl.Int64(),
}
_SGL_PREFILL = {
    "new_seq": pl.Int64(),
    "new_token": pl.Int64(),
    "cached_token": pl.Int64(),
    "running_req": pl.Int64(),
    "queue_req": pl.Int64(),
    "input_tps": pl.Float64(),
    "token_usage": pl.Float64(),
}


def prefill_lines(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """SGLang `Prefill batch` lines of the stats-printing rank of each DP group, in line order.

    Columns: ``series``, ``line_no``, ``time``, ``new_seq``, ``new_token``, ``cached_token``,
    ``running_req``, ``queue_req``, ``input_tps``, ``token_usage``.
    """
    frame = table(tables, "prefill_batch", _SGL_PREFILL)
    frame = frame.with_columns(rank_index("DP").fill_null(0).alias("series"))
    frame = leading_ranks(frame).filter(pl.col("time").is_not_null())
    return frame.select("series", "line_no", "time", *_SGL_PREFILL).sort("line_no")


def rank_samples(
    tables: Mapping[str, pl.DataFrame], *, engine: str, pool_tokens: int | None = None
) -> pl.DataFrame:
    """One row per decode-stats line (vLLM `engine_stats`, SGLang `decode_batch`).

    Parameters
    ----------
    tables
        The event tables of one log (`IngestResult.tables`).
    engine
        ``vllm`` or ``sglang``.
    pool_tokens
        vLLM KV pool size in tokens per engine (`GPU KV cache size`), to turn the KV usage
        percentage into tokens; None leaves ``kv_tokens`` null.

    Returns
    -------
    pl.DataFrame
        `RANK_SAMPLE_SCHEMA`, sorted by ``series`` then ``line_no``.

    Examples
    --------
    >>> import datetime as dt
    >>> stats = pl.DataFrame({"line_no": [1, 2], "time": [dt.datetime(2026, 1, 1, 0, 0, s) for s in (0, 10)],
    ...     "rank": ["APIServer"] * 2, "prompt_tps": [900.0, 0.0], "gen_tps": [50.0, 500.0],
    ...     "running": [10, 10], "waiting": [0, 0], "gpu_kv_pct": [10.0, 11.0]})
    >>> rank_samples({"engine_stats": stats}, engine="vllm", pool_tokens=1000)[["line_no", "prefill", "kv_tokens"]]
    shape: (2, 3)
    ┌─────────┬─────────┬───────────┐
    │ line_no ┆ prefill ┆ kv_tokens │
    │ ---     ┆ ---     ┆ ---       │
    │ i64     ┆ bool    ┆ f64       │
    ╞═════════╪═════════╪═══════════╡
    │ 1       ┆ true    ┆ 100.0     │
    │ 2       ┆ false   ┆ 110.0     │
    └─────────┴─────────┴───────────┘
    """
    if engine == "vllm":
        return _vllm_rank_samples(tables, pool_tokens=pool_tokens)
    if engine == "sglang":
        return _sglang_rank_samples(tables)
    return pl.DataFrame(schema=RANK_SAMPLE_SCHEMA)


def _vllm_rank_samples(tables: Mapping[str, pl.DataFrame], *, pool_tokens: int | None) -> pl.DataFrame:
    stats = table(tables, "engine_stats", _VLLM_STATS).filter(pl.col("time").is_not_null())
    # "N Engines Aggregated:" lines already sum the engines; prefer them when present.
    aggregated = stats.filter(pl.col("engines_aggregated").is_not_null())
    if not aggregated.is_empty():
        stats = aggregated
    usage = pl.col("gpu_kv_pct") / 100.0
    pool = pl.lit(float(pool_tokens) if pool_tokens else None, dtype=pl.Float64)
    out = stats.select(
        pl.col("engine_idx").fill_null(0).alias("series"),
        "line_no",
        "time",
        "running",
        "waiting",
        "gen_tps",
        "prompt_tps",
        (pl.col("prompt_tps").fill_null(0.0) > 0).alias("prefill"),
        usage.alias("kv_usage"),
        # an aggregated line's usage is the mean over its engines, each with a pool this size
        (usage * pool * pl.col("engines_aggregated").fill_null(1)).alias("kv_tokens"),
        pl.lit(None, dtype=pl.Float64).alias("accept_len"),
        pl.lit(None, dtype=pl.Float64).alias("accept_rate"),
        pl.col("preemptions").fill_null(0).alias("preemptions"),
        pl.lit(0, dtype=pl.Int64).alias("retracted"),
    )
    return out.cast(RANK_SAMPLE_SCHEMA).sort("series", "line_no")  # type: ignore[arg-type]


def _sglang_rank_samples(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    decode = table(tables, "decode_batch", _SGL_DECODE)
    decode = decode.with_columns(rank_index("DP").fill_null(0).alias("series"))
    decode = leading_ranks(decode).filter(pl.col("time").is_not_null())
    prefill = prefill_lines(tables)
    # A Decode line's interval overlaps a prefill when a Prefill line of the same DP group was
    # printed since the previous Decode line (so the first Decode line after a prefill is out).
    events = pl.concat(
        [
            decode.select("series", "line_no", pl.lit(True).alias("_decode")),
            prefill.select("series", "line_no", pl.lit(False).alias("_decode")),
        ]
    ).sort("series", "line_no")
    events = events.with_columns(
        (~pl.col("_decode")).cast(pl.Int64).cum_sum().over("series").alias("_prefills_so_far")
    )
    events = events.filter(pl.col("_decode")).with_columns(
        (
            pl.col("_prefills_so_far") - pl.col("_prefills_so_far").shift(1).over("series").fill_null(0) > 0
        ).alias("prefill")
    )
    decode = decode.join(events.select("series", "line_no", "prefill"), on=["series", "line_no"], how="left")
    out = decode.select(
        "series",
        "line_no",
        "time",
        pl.col("running_req").alias("running"),
        pl.col("queue_req").alias("waiting"),
        "gen_tps",
        pl.lit(None, dtype=pl.Float64).alias("prompt_tps"),
        pl.col("prefill").fill_null(False),
        pl.col("token_usage").alias("kv_usage"),
        pl.col("num_token").cast(pl.Float64).alias("kv_tokens"),
        "accept_len",
        "accept_rate",
        pl.lit(0, dtype=pl.Int64).alias("preemptions"),
        pl.col("retracted_req").fill_null(0).alias("retracted"),
    )
    return out.cast(RANK_SAMPLE_SCHEMA).sort("series", "line_no")  # type: ignore[arg-type]


def decode_samples(ranks: pl.DataFrame, *, tolerance_factor: float = 2.5) -> pl.DataFrame:
    """Add the DP series of `rank_samples` up into one row per sampling round.

    With a single series the rows are kept as they are. With several (vLLM `Engine 000`,
    `Engine 001`, …; SGLang `DP0`, `DP1`, …) a sample is one round of the series' lines, taken
    at the line completing it: each series' latest line (no older than `tolerance_factor` ×
    the series' median interval), a line with activity counted in one sample only. Series
    printing together make one round per instant; SGLang DP groups that drifted apart (each
    counts its own decode steps) print in turn, and a round takes one line of each, so a
    window's mean gen throughput is the sum of the groups' mean printed rates and its sample
    count the number of rounds, not of lines. A series with no recent line is idle and adds
    nothing (``n_series`` counts the series that contribute), unless its next line comes less
    than one of its median intervals later: then it is late, and the round is not complete
    (`_rounds` has the rules). Counts and throughputs are summed, KV usage averaged over the
    contributing series, and a sample overlaps a prefill if any series' line does.

    Returns
    -------
    pl.DataFrame
        ``sample`` (0-based), ``line_no`` (the last line contributing), ``lines`` (all of them),
        ``time``, ``n_series``, the `RANK_SAMPLE_SCHEMA` measures, ``interval_s`` (time since the
        previous sample) and ``context_per_request`` (``kv_tokens / running``).

    Examples
    --------
    >>> import datetime as dt
    >>> t = [dt.datetime(2026, 1, 1, 0, 0, s) for s in (0, 0, 10, 10)]
    >>> ranks = pl.DataFrame({"series": [0, 1, 0, 1], "line_no": [1, 2, 3, 4], "time": t,
    ...     "running": [5, 5, 5, 5], "waiting": [0, 0, 0, 0], "gen_tps": [100.0, 110.0, 90.0, 95.0],
    ...     "prefill": [False] * 4}, schema_overrides={"time": pl.Datetime("us")})
    >>> decode_samples(ranks)[["line_no", "running", "gen_tps", "interval_s"]]
    shape: (2, 4)
    ┌─────────┬─────────┬─────────┬────────────┐
    │ line_no ┆ running ┆ gen_tps ┆ interval_s │
    │ ---     ┆ ---     ┆ ---     ┆ ---        │
    │ i64     ┆ i64     ┆ f64     ┆ f64        │
    ╞═════════╪═════════╪═════════╪════════════╡
    │ 2       ┆ 10      ┆ 210.0   ┆ null       │
    │ 4       ┆ 10      ┆ 185.0   ┆ 10.0       │
    └─────────┴─────────┴─────────┴────────────┘
    """
    ranks = _conform(ranks)
    series_ids = ranks.get_column("series").unique().sort().to_list()
    if len(series_ids) <= 1:
        out = ranks.sort("line_no").with_columns(
            pl.concat_list("line_no").alias("lines"), pl.lit(1, dtype=pl.Int64).alias("n_series")
        )
    else:
        out = _combine_series(ranks, series_ids, tolerance_factor=tolerance_factor)
    out = (
        out.sort("time", "line_no")
        .with_columns(
            pl.col("time").diff().dt.total_seconds(fractional=True).alias("interval_s"),
            pl.when(pl.col("running") > 0)
            .then(pl.col("kv_tokens") / pl.col("running"))
            .alias("context_per_request"),
        )
        .with_row_index("sample")
    )
    return out.select(
        pl.col("sample").cast(pl.Int64),
        "line_no",
        "lines",
        "time",
        "n_series",
        *[c for c in RANK_SAMPLE_SCHEMA if c not in ("series", "line_no", "time")],
        "interval_s",
        "context_per_request",
    )


def _conform(ranks: pl.DataFrame) -> pl.DataFrame:
    missing = [
        pl.lit(None, dtype=d).alias(c) for c, d in RANK_SAMPLE_SCHEMA.items() if c not in ranks.columns
    ]
    frame = ranks.with_columns(missing) if missing else ranks
    frame = frame.with_columns(pl.col("series").fill_null(0), pl.col("prefill").fill_null(False))
    return frame.select(list(RANK_SAMPLE_SCHEMA)).cast(RANK_SAMPLE_SCHEMA)  # type: ignore[arg-type]


_PER_SECOND_SLOTS = 1024  # room for that many lines of one series sharing one timestamp


def _combine_series(ranks: pl.DataFrame, series_ids: list[int], *, tolerance_factor: float) -> pl.DataFrame:
    from logparse.analysis._frames import median_interval

    # Timestamps are whole seconds (SGLang) and a series can print several lines in one second
    # (a Decode line every 40 steps at > 40 steps/s). Distances between lines are measured in
    # ticks `time_us * _PER_SECOND_SLOTS + k` (k: the line's rank among its series' lines of
    # that second), which keeps a series' lines of one second apart and in order.
    ranks = ranks.sort("series", "time", "line_no").with_columns(
        (
            pl.col("time").dt.epoch("us") * _PER_SECOND_SLOTS + pl.int_range(pl.len()).over("series", "time")
        ).alias("_tick")
    )
    # Every line, in print order, is a candidate sample: each series' latest line up to it.
    combined = ranks.select(
        pl.col("line_no").alias("_ev"),
        (pl.col("line_no") + 1).alias("_ev1"),
        pl.col("_tick").alias("_at"),
        pl.col("series").alias("_x"),
        "time",
    ).sort("_ev")
    measures = [c for c in RANK_SAMPLE_SCHEMA if c not in ("series", "time")]
    for sid in series_ids:
        part = ranks.filter(pl.col("series") == sid).sort("line_no")
        step = median_interval(part.get_column("time")) or 10.0
        tol = int(max(step * tolerance_factor, 1.0) * 1_000_000) * _PER_SECOND_SLOTS
        late_tol = int(step * 1_000_000) * _PER_SECOND_SLOTS - 1
        cols = [f"{c}__{sid}" for c in measures]
        latest = part.select(
            pl.col("line_no").alias("_ev"),
            pl.col("_tick").alias("_tick_"),
            *[pl.col(c).alias(f"{c}__{sid}") for c in measures],
        )
        after = part.select(
            pl.col("line_no").alias("_ev1"),
            pl.col("line_no").alias(f"_after__{sid}"),
            pl.col("_tick").alias("_after_tick_"),
        )
        combined = combined.join_asof(latest, on="_ev", strategy="backward").join_asof(
            after, on="_ev1", strategy="forward"
        )
        recent = (pl.col("_at") - pl.col("_tick_")) <= tol
        busy = pl.any_horizontal(
            pl.col(f"{c}__{sid}").fill_null(0) > 0 for c in ("running", "waiting", "gen_tps", "prompt_tps")
        )
        combined = (
            combined.with_columns(pl.when(recent).then(pl.col(c)).alias(c) for c in cols)
            .with_columns(
                # the next line comes less than one interval after this one / within the tolerance
                ((pl.col("_after_tick_") - pl.col("_at")) <= late_tol)
                .fill_null(False)
                .alias(f"_soon__{sid}"),
                ((pl.col("_after_tick_") - pl.col("_at")) <= tol).fill_null(False).alias(f"_near__{sid}"),
                busy.alias(f"_busy__{sid}"),
            )
            .drop("_tick_", "_after_tick_")
        )
    keep, spent = _rounds(combined, series_ids)
    combined = combined.with_columns(
        pl.when(pl.Series(spent[sid])).then(None).otherwise(pl.col(f"{c}__{sid}")).alias(f"{c}__{sid}")
        for sid in series_ids
        if any(spent[sid])
        for c in measures
    ).filter(pl.Series(keep))
    present = [pl.col(f"line_no__{sid}").is_not_null() for sid in series_ids]

    def horizontal(name: str, how: str) -> pl.Expr:
        cols = [pl.col(f"{name}__{sid}") for sid in series_ids]
        if how == "sum":
            return pl.sum_horizontal(cols).alias(name)
        if how == "mean":
            return pl.mean_horizontal(cols).alias(name)
        if how == "any":  # an idle series (all null) overlaps no prefill
            return pl.any_horizontal(cols).fill_null(False).alias(name)
        return pl.max_horizontal(cols).alias(name)

    return combined.select(
        horizontal("line_no", "max"),
        pl.concat_list([pl.col(f"line_no__{sid}") for sid in series_ids])
        .list.drop_nulls()
        .list.unique()
        .list.sort()
        .alias("lines"),
        "time",
        pl.sum_horizontal([p.cast(pl.Int64) for p in present]).alias("n_series"),
        horizontal("running", "sum"),
        horizontal("waiting", "sum"),
        horizontal("gen_tps", "sum"),
        horizontal("prompt_tps", "sum"),
        horizontal("prefill", "any"),
        horizontal("kv_usage", "mean"),
        horizontal("kv_tokens", "sum"),
        horizontal("accept_len", "mean"),
        horizontal("accept_rate", "mean"),
        horizontal("preemptions", "sum"),
        horizontal("retracted", "sum"),
    )


def _rounds(combined: pl.DataFrame, series_ids: list[int]) -> tuple[list[bool], dict[int, list[bool]]]:
    """Which candidate samples of `combined` (one per line, in print order) are samples, and
    where a series' latest line is left out of one (``spent``).

    A series with no recent line is idle (an SGLang DP group without requests prints no Decode
    lines; an idle vLLM engine is silent) and adds nothing, unless its next line comes less
    than one of its intervals later: then it is only late, and the line is no sample (a vLLM
    engine prints its lines of one interval together with the others', so one starting in the
    next phase a whole interval later is idle now). The same holds for a series whose latest
    line is an idle one (nothing running, waiting or generated: a vLLM engine's last line).

    A line with activity is counted in one sample only: the lines of one instant are a sample
    at the instant's last line, and SGLang DP groups that drifted apart print in turn, one
    round of their lines making a sample at the line that completes it. So a series whose
    latest busy line was already counted is late when it prints again before the line's own
    series does (and within the recency tolerance): no sample yet; otherwise it has stopped
    and adds nothing. A sample taken while an idle series is about to print that way (a
    drifted group's first line of a phase, stamped a second later) uses up no lines.
    """
    col = {
        name: {sid: combined.get_column(f"{name}__{sid}").to_list() for sid in series_ids}
        for name in ("line_no", "_after", "_soon", "_near", "_busy")
    }
    lines, after = col["line_no"], col["_after"]
    printer = combined.get_column("_x").to_list()
    counted: dict[int, int | None] = dict.fromkeys(series_ids)
    keep: list[bool] = []
    spent: dict[int, list[bool]] = {sid: [] for sid in series_ids}
    for i, x in enumerate(printer):
        late = provisional = False
        left_out = []
        for sid in series_ids:
            line = lines[sid][i]
            stale = line is not None and line == counted[sid]
            if line is not None and not stale:
                left_out.append(False)
                continue
            # the series prints again before the line's own series does, and not after a pause
            first = (
                after[sid][i] is not None
                and (after[x][i] is None or after[sid][i] < after[x][i])
                and col["_near"][sid][i]
            )
            if stale and col["_busy"][sid][i]:
                late = late or first
                left_out.append(True)
            else:
                late = late or col["_soon"][sid][i]
                provisional = provisional or first
                left_out.append(False)
        keep.append(not late)
        for sid, out in zip(series_ids, left_out, strict=True):
            spent[sid].append(not late and out)
            if not late and not out and not provisional and lines[sid][i] is not None:
                counted[sid] = lines[sid][i]
    return keep, spent
