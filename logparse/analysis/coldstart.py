"""Cold start: the timeline from the first line to "ready", per rank, and the memory split.

Stages come from the typed events: weight loading (`weight_load`), torch.compile / JIT
(`jit_compile`), KV allocation (`kv_pool`), CUDA graph capture (`cuda_graph`), engine init and
server ready (`engine_init`). Ranks that print their own copy (SGLang's TP ranks, vLLM workers)
keep their own rows; a figure for the whole server takes the slowest rank.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, cast

import polars as pl

from logparse.analysis._frames import first_non_null, table
from logparse.analysis.evidence import ESTIMATED, EXACT, GUESSED, Figure
from logparse.analysis.figures import startup_evidence

TIMELINE_SCHEMA: dict[str, pl.DataType] = {
    "stage": pl.String(),
    "rank": pl.String(),
    "line_no": pl.Int64(),
    "time": pl.Datetime("us"),
    "seconds": pl.Float64(),
    "since_start_s": pl.Float64(),
    "detail": pl.String(),
}

_WEIGHT = {
    "seconds": pl.Float64(),
    "gib": pl.Float64(),
    "phase": pl.String(),
    "mem_usage_gib": pl.Float64(),
    "shards": pl.Int64(),
}
_GRAPH = {
    "seconds": pl.Float64(),
    "gib": pl.Float64(),
    "phase": pl.String(),
    "mem_usage_gib": pl.Float64(),
    "num_sizes": pl.Int64(),
    "mode": pl.String(),
}
_JIT = {"what": pl.String(), "seconds": pl.Float64()}
_INIT = {"seconds": pl.Float64(), "phase": pl.String()}
_KV = {
    "tokens": pl.Int64(),
    "max_concurrency": pl.Float64(),
    "per_request_tokens": pl.Int64(),
    "kv_gib": pl.Float64(),
    "k_gb": pl.Float64(),
    "v_gb": pl.Float64(),
    "kv_gb": pl.Float64(),
    "max_running_requests": pl.Int64(),
    "context_len": pl.Int64(),
    "gpu_blocks": pl.Int64(),
}
_MEM = {
    "weights_gib": pl.Float64(),
    "non_torch_gib": pl.Float64(),
    "peak_activation_gib": pl.Float64(),
    "kv_gib": pl.Float64(),
    "graph_gib": pl.Float64(),
    "mem_usage_gib": pl.Float64(),
}
_CONFIG = {
    "max_model_len": pl.Int64(),
    "max_seq_len": pl.Int64(),
    "version": pl.String(),
    "key": pl.String(),
    "value": pl.String(),
    "args": pl.String(),
}


def ready_time(tables: Mapping[str, pl.DataFrame]) -> Any:
    """When the server said it was ready (SGLang "fired up", uvicorn startup complete), or None."""
    row = ready_row(tables)
    return None if row is None else row["time"]


def ready_row(tables: Mapping[str, pl.DataFrame]) -> dict[str, Any] | None:
    """The `engine_init` row that marks the server ready (its ``line_no`` and ``time``), or None.

    A phase named like `server_ready` wins; else uvicorn's `Application startup complete`.
    uvicorn prints no timestamp before vLLM 0.31; the row then gets the time of the last
    timestamped line before it.
    """
    init = table(tables, "engine_init", _INIT).sort("line_no")
    phase = pl.col("phase").fill_null("")
    for cond in (phase.str.contains("ready"), phase.str.contains("startup_complete|app_startup")):
        hit = init.filter(cond)
        if hit.height:
            row = hit.row(0, named=True)
            row["time_approx"] = row["time"] is None
            if row["time"] is None:
                row["time"] = time_at_line(tables, row["line_no"])
            return row
    return None


def time_at_line(tables: Mapping[str, pl.DataFrame], line_no: int) -> Any:
    """The time of the last timestamped line at or before `line_no`, or None."""
    best = None
    for frame in tables.values():
        if "time" not in frame.columns or frame.is_empty():
            continue
        before = frame.filter((pl.col("line_no") <= line_no) & pl.col("time").is_not_null())
        if before.height:
            t = before.sort("line_no").get_column("time")[-1]
            line = before.get_column("line_no").max()
            if best is None or line > best[0]:  # type: ignore[operator]
                best = (line, t)
    return None if best is None else best[1]


def start_time(tables: Mapping[str, pl.DataFrame]) -> Any:
    """The earliest timestamp in the log, or None."""
    # polars types Series.min() as any Python scalar; `time` is a Datetime column
    firsts = [
        cast("dt.datetime | None", f.get_column("time").min())
        for f in tables.values()
        if "time" in f.columns and f.height
    ]
    times = [t for t in firsts if t is not None]
    return min(times) if times else None


def timeline(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """The cold-start events in time order (`TIMELINE_SCHEMA`), up to and including ready.

    Examples
    --------
    >>> import datetime as dt
    >>> t0 = dt.datetime(2026, 7, 28, 17, 6, 30)
    >>> tables = {"weight_load": pl.DataFrame({"line_no": [1, 2], "time": [t0, t0 + dt.timedelta(seconds=160)],
    ...     "rank": [None, None], "seconds": [None, 160.0], "phase": ["begin", None]})}
    >>> timeline(tables)[["stage", "seconds", "since_start_s"]]
    shape: (2, 3)
    ┌──────────────┬─────────┬───────────────┐
    │ stage        ┆ seconds ┆ since_start_s │
    │ ---          ┆ ---     ┆ ---           │
    │ str          ┆ f64     ┆ f64           │
    ╞══════════════╪═════════╪═══════════════╡
    │ weight_begin ┆ null    ┆ 0.0           │
    │ weight_load  ┆ 160.0   ┆ 160.0         │
    └──────────────┴─────────┴───────────────┘
    """
    start = start_time(tables)
    parts: list[pl.DataFrame] = []

    def add(frame: pl.DataFrame, stage: pl.Expr, detail: pl.Expr) -> None:
        if frame.is_empty():
            return
        parts.append(
            frame.select(
                stage.alias("stage"),
                "rank",
                "line_no",
                "time",
                pl.col("seconds").cast(pl.Float64)
                if "seconds" in frame.columns
                else pl.lit(None, dtype=pl.Float64).alias("seconds"),
                detail.cast(pl.String).alias("detail"),
            )
        )

    weights = table(tables, "weight_load", _WEIGHT).filter(
        pl.col("seconds").is_not_null() | pl.col("phase").fill_null("").str.contains("begin")
    )
    add(
        weights,
        pl.when(pl.col("seconds").is_null())
        .then(pl.lit("weight_begin"))
        .when(pl.col("gib").is_not_null())
        .then(pl.lit("model_load"))
        .otherwise(pl.lit("weight_load")),
        pl.lit(None, dtype=pl.String),
    )
    # SGLang's per-rank "Load weight begin/end" and "Init torch distributed" are memory lines.
    mem = table(
        tables,
        "memory",
        {
            "phase": pl.String(),
            "seconds": pl.Float64(),
            "load_s": pl.Float64(),
            "weights_gib": pl.Float64(),
            "model_type": pl.String(),
        },
    )
    what = pl.coalesce(pl.col("phase"), pl.col("rule")).fill_null("")
    mem = mem.filter(what.str.contains("load_weight|torch_distributed")).with_columns(
        pl.coalesce(pl.col("load_s"), pl.col("seconds")).alias("seconds")
    )
    add(
        mem,
        pl.when(what.str.contains("distributed"))
        .then(pl.lit("distributed_init"))
        .when(what.str.contains("begin"))
        .then(pl.lit("weight_begin"))
        .otherwise(pl.lit("weight_load")),
        pl.col("model_type"),
    )
    add(
        table(tables, "jit_compile", _JIT).filter(pl.col("seconds").is_not_null()),
        pl.lit("compile"),
        pl.col("what"),
    )
    kv = table(tables, "kv_pool", _KV).filter(pl.col("tokens").is_not_null()).sort("line_no").head(1)
    add(kv, pl.lit("kv_allocation"), pl.col("tokens"))
    graphs = table(tables, "cuda_graph", {**_GRAPH, "graph": pl.String()})
    add(graphs.filter(pl.col("seconds").is_not_null()), pl.lit("cuda_graph"), pl.col("graph"))
    init = table(tables, "engine_init", _INIT).filter(
        pl.col("seconds").is_not_null() | pl.col("phase").fill_null("").str.contains("ready|startup_complete")
    )
    add(init, pl.coalesce(pl.col("phase"), pl.lit("engine_init")), pl.lit(None))
    if not parts:
        return pl.DataFrame(schema=TIMELINE_SCHEMA)
    frame = pl.concat(parts, how="vertical_relaxed").filter(pl.col("time").is_not_null())
    ready = ready_time(tables)
    if ready is not None:
        frame = frame.filter(pl.col("time") <= ready)
    frame = frame.with_columns(
        (
            (pl.col("time") - pl.lit(start)).dt.total_seconds(fractional=True)
            if start is not None
            else pl.lit(None, dtype=pl.Float64)
        ).alias("since_start_s")
    )
    return frame.select(list(TIMELINE_SCHEMA)).cast(TIMELINE_SCHEMA).sort("time", "line_no")  # type: ignore[arg-type]


def stages(timeline_frame: pl.DataFrame) -> pl.DataFrame:
    """The timeline per stage (a CUDA graph or model load is told apart by its detail, e.g. target
    and draft): ``stage``, ``ranks`` (how many printed it), ``seconds`` (the first
    rank's), ``seconds_max`` (the slowest rank's), ``first_at_s`` / ``last_at_s`` (since the first
    line), in order of first appearance."""
    schema = {
        "stage": pl.String(),
        "ranks": pl.Int64(),
        "seconds": pl.Float64(),
        "seconds_max": pl.Float64(),
        "first_at_s": pl.Float64(),
        "last_at_s": pl.Float64(),
    }
    if timeline_frame.is_empty():
        return pl.DataFrame(schema=schema)
    staged = timeline_frame.with_columns(
        pl.when(
            pl.col("detail").is_not_null()
            & pl.col("stage").is_in(["cuda_graph", "weight_load", "weight_begin"])
        )
        .then(pl.format("{} ({})", pl.col("stage"), pl.col("detail")))
        .otherwise(pl.col("stage"))
        .alias("stage")
    )
    return (
        staged.sort("time", "line_no")
        .group_by("stage", maintain_order=True)
        .agg(
            pl.col("rank").fill_null("").n_unique().cast(pl.Int64).alias("ranks"),
            pl.col("seconds").drop_nulls().first().alias("seconds"),
            pl.col("seconds").max().alias("seconds_max"),
            pl.col("since_start_s").min().alias("first_at_s"),
            pl.col("since_start_s").max().alias("last_at_s"),
        )
        .select(list(schema))
        # polars' cast takes Mapping[str | selector | dtype, ...]: a str-keyed dict is not one (invariant key)
        .cast(schema)  # type: ignore[arg-type]
    )


def startup_figures(tables: Mapping[str, pl.DataFrame], *, engine: str) -> dict[str, Any]:
    """The startup block of the summary: weights, KV pool, graph capture, compile, init, ready.

    Keys: ``weights_gib``, ``weight_load_s``, ``kv_pool_tokens``, ``kv_gib``, ``max_concurrency``
    (as vLLM prints it), ``context_len``, ``max_running_requests``, ``cuda_graph_s``,
    ``cuda_graph_gib``, ``compile_s``, ``init_s``, ``init_s_inferred``, ``ready_s``,
    ``activation_gib``, ``non_torch_gib``, ``evidence`` (`figures.startup_evidence`),
    ``kv_pool_range`` (`kv_pool_range`: when the ranks print different pools; the pool is then the
    smallest, which binds). Other figures printed by every rank are the first rank's
    (rank 0; for SGLang graph capture, its target and draft captures added up). A log of
    several engine starts gives its first start's figures (`segments.first_segment_tables`):
    two starts' captures are never added up.
    """
    from logparse.analysis.pools import binding_pool, kv_pools
    from logparse.analysis.segments import first_segment_tables

    tables = first_segment_tables(tables)
    weights = table(tables, "weight_load", _WEIGHT)
    graphs = table(tables, "cuda_graph", _GRAPH)
    jit = table(tables, "jit_compile", _JIT)
    init = table(tables, "engine_init", _INIT)
    kv = table(tables, "kv_pool", _KV)
    mem = table(
        tables, "memory", {**_MEM, "load_s": pl.Float64(), "phase": pl.String(), "seconds": pl.Float64()}
    )
    config = table(tables, "config", _CONFIG)

    pool = kv_pool_tokens(tables)
    context = (
        first_non_null(kv, "context_len")
        or first_non_null(kv, "per_request_tokens")
        or first_non_null(config, "max_model_len")
        or first_non_null(config, "max_seq_len")
    )
    kv_gib = first_non_null(kv, "kv_gib") or first_non_null(mem, "kv_gib")
    if kv_gib is None:
        sized = kv.filter(pl.col("kv_gb").is_not_null() | pl.col("k_gb").is_not_null()).sort("line_no")
        if sized.height:
            row = sized.row(0, named=True)
            kv_gib = row["kv_gb"] if row["kv_gb"] is not None else (row["k_gb"] or 0) + (row["v_gb"] or 0)

    # SGLang's "Load weight end. elapsed=" (a memory line in some grammars). Rank 0 prints first.
    load_end = mem.filter(
        pl.coalesce(pl.col("phase"), pl.col("rule")).fill_null("").str.contains("load_weight")
        & (
            pl.col("load_s").is_not_null()
            | pl.col("seconds").is_not_null()
            | pl.col("weights_gib").is_not_null()
        )
    ).sort("line_no")
    load_s, load_from_bar = weight_load_seconds(weights, load_end)
    download = weights.filter(pl.col("phase").fill_null("") == "download")
    weights_gib = (
        first_non_null(weights, "gib")
        or first_non_null(mem, "weights_gib")
        or first_non_null(weights, "mem_usage_gib")
        or first_non_null(load_end, "mem_usage_gib")
    )
    graph_rows = graphs.filter(pl.col("seconds").is_not_null()).sort("line_no")
    if graph_rows.height:
        first_rank = graph_rows.get_column("rank").fill_null("").head(1).item()
        mine = graph_rows.filter(pl.col("rank").fill_null("") == first_rank)
        graph_s = float(mine.get_column("seconds").sum())
        gib = mine.select(pl.coalesce(pl.col("gib"), pl.col("mem_usage_gib"))).to_series().drop_nulls()
        graph_gib = float(gib.sum()) if gib.len() else None
    else:
        graph_s, graph_gib = None, None
    compile_rows = jit.filter(pl.col("what").fill_null("").str.contains("total"))
    compile_s = first_non_null(compile_rows, "seconds")
    init_rows = init.filter(
        pl.col("seconds").is_not_null() & pl.col("phase").fill_null("init_engine").str.contains("init_engine")
    )
    init_s = first_non_null(init_rows, "seconds")
    start, ready_at = start_time(tables), ready_row(tables)
    ready = None if ready_at is None else ready_at["time"]
    ready_s = (ready - start).total_seconds() if start is not None and ready is not None else None
    inferred = False
    if init_s is None and ready is not None:
        # SGLang prints no init figure: from the end of rank 0's weight loading to ready.
        ends = pl.concat(
            [
                load_end.select("line_no", "time"),
                weights.filter(pl.col("seconds").is_not_null()).select("line_no", "time"),
            ]
        )
        ends = ends.filter(pl.col("time").is_not_null()).sort("line_no")
        if ends.height:
            init_s = (ready - ends.get_column("time")[0]).total_seconds()
            inferred = True
    max_conc = first_non_null(kv, "max_concurrency")
    pools = kv_pools(tables)
    full = next((p for p in pools if p["pool"] == "full"), None)
    if full is not None and full["gib"] is not None:
        kv_gib = full["gib"]  # the pool whose tokens kv_pool_tokens counts, never another's memory
    figures = {
        "weights_gib": weights_gib,
        "weight_load_s": load_s,
        "weight_load_from_bar": load_from_bar,
        "weight_download_s": _first_seconds(download, "seconds"),
        "kv_pool_tokens": pool,
        "kv_pool_range": kv_pool_range(tables),
        "kv_gib": kv_gib,
        "kv_pools": pools,
        "kv_binding_pool": binding_pool(pools),
        "max_concurrency": max_conc,
        "context_len": context,
        "max_running_requests": first_non_null(kv, "max_running_requests"),
        "cuda_graph_s": graph_s,
        "cuda_graph_gib": graph_gib,
        "compile_s": compile_s,
        "init_s": init_s,
        "init_s_inferred": inferred,
        "ready_s": ready_s,
        "ready_s_approx": bool(ready_at and ready_at["time_approx"]),
        "activation_gib": first_non_null(mem, "peak_activation_gib"),
        "non_torch_gib": first_non_null(mem, "non_torch_gib"),
    }
    return {**figures, "evidence": startup_evidence(figures, pool=kv_pool_figure(tables))}


def kv_pool_by_rank(tables: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Each rank's printed KV pool (``rank``, ``tokens``; the rank label ``-`` when none is
    printed): its SGLang capacity line (`max_total_num_tokens=…`) when it printed one, else its
    first pool line (the target model's: a draft model's pool is allocated after it)."""
    kv = table(tables, "kv_pool", _KV).filter(pl.col("tokens").is_not_null()).sort("line_no")
    capacity = pl.col("context_len").is_not_null() | pl.col("max_running_requests").is_not_null()
    return (
        kv.with_columns(pl.col("rank").fill_null("-"), capacity.alias("_capacity"))
        .group_by("rank", maintain_order=True)
        .agg(pl.col("tokens").sort_by(pl.col("_capacity"), descending=True, maintain_order=True).first())
        .select("rank", "tokens")
    )


def kv_pool_range(tables: Mapping[str, pl.DataFrame]) -> dict[str, Any] | None:
    """When the ranks print different KV pool sizes: ``min``, ``max`` and ``binding`` (the ranks
    of the smallest pool, which limits what every rank can hold); None when they agree."""
    ranks = kv_pool_by_rank(tables)
    if ranks.get_column("tokens").n_unique() < 2:
        return None
    low = int(ranks.get_column("tokens").min())  # type: ignore[arg-type]
    return {
        "min": low,
        "max": int(ranks.get_column("tokens").max()),  # type: ignore[arg-type]
        "binding": [str(r) for r in ranks.filter(pl.col("tokens") == low).get_column("rank").to_list()],
    }


def weight_load_seconds(weights: pl.DataFrame, load_end: pl.DataFrame) -> tuple[float | None, bool]:
    """How long rank 0 took to load the weights, and whether it was read off a progress bar.

    The engine's own line wins: vLLM's `Loading weights took x seconds` (the load alone), else its
    `Model loading took ... and x seconds`; SGLang's `Load weight end. elapsed=x s`. Rank 0 is the
    driver (`driver_first`). A shard progress bar's elapsed time (whole seconds) is the last
    resort, and says so. `Time spent downloading weights` is the download, not the load.
    """
    bar = pl.col("shards").is_not_null() | (pl.col("phase").fill_null("") == "progress")
    printed = weights.filter(
        pl.col("seconds").is_not_null() & ~bar & ~pl.col("phase").fill_null("").is_in(["download", "begin"])
    )
    for value in (
        _first_seconds(printed.filter(pl.col("gib").is_null()), "seconds"),
        _first_seconds(load_end, "load_s"),
        _first_seconds(printed, "seconds"),
        _first_seconds(load_end, "seconds"),
    ):
        if value is not None:
            return value, False
    from_bar = _first_seconds(weights.filter(bar), "seconds")
    return from_bar, from_bar is not None


def _first_seconds(frame: pl.DataFrame, column: str) -> float | None:
    """The driver's (else the first printed) non-null `column` value."""
    values = driver_first(frame.filter(pl.col(column).is_not_null())).get_column(column)
    return None if values.is_empty() else float(values[0])


def driver_first(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` in line order with the lines of no process prefix first: under Ray or
    multiprocessing the driver (rank 0) prints bare lines and the workers `(RayWorkerWrapper
    pid=N)` ones, and a worker may print before rank 0."""
    if "rank" not in frame.columns:
        return frame.sort("line_no")
    return frame.sort(pl.col("rank").is_not_null(), "line_no")


def kv_pool_tokens(tables: Mapping[str, pl.DataFrame]) -> int | None:
    """The target model's KV pool in tokens (`kv_pool_figure`'s value)."""
    figure = kv_pool_figure(tables)
    return None if figure is None else int(figure.value)  # type: ignore[arg-type]


def kv_pool_figure(tables: Mapping[str, pl.DataFrame]) -> Figure | None:
    """The target model's KV pool in tokens, and how sure it is.

    SGLang's capacity line (`max_total_num_tokens=…, context_len=…`) wins, since a draft model
    allocates a second, larger pool; else the `GPU KV cache size` / `#tokens` lines (exact). When
    the ranks print different sizes, the smallest binds: it is the figure (`kv_pool_by_rank`).
    vLLM V0 prints only blocks: `# GPU blocks` × the default block size 16 when that agrees
    (within 1 %) with `Maximum concurrency` × tokens per request (estimated), or when nothing
    else says (guessed: the block size is not printed); else that product (estimated, the
    concurrency printed to 2 decimals).
    """
    kv = table(tables, "kv_pool", _KV)
    ranks = kv_pool_by_rank(tables)
    if ranks.height:
        sizes = ranks.get_column("tokens")
        low, high = int(sizes.min()), int(sizes.max())  # type: ignore[arg-type]
        if low == high:
            return Figure(low, EXACT, "printed pool size")
        binding = ranks.filter(pl.col("tokens") == low).get_column("rank").to_list()
        return Figure(
            low,
            EXACT,
            f"printed pool size; the ranks print {low:,}-{high:,} tokens and the smallest pool "
            f"({', '.join(str(r) for r in binding)}) binds",
        )
    blocks = first_non_null(kv, "gpu_blocks")
    conc, per_request = first_non_null(kv, "max_concurrency"), first_non_null(kv, "per_request_tokens")
    implied = float(conc) * float(per_request) if conc is not None and per_request is not None else None  # type: ignore[arg-type]
    if blocks is not None:
        by_blocks = int(blocks) * 16  # type: ignore[call-overload]
        if implied is None:
            return Figure(by_blocks, GUESSED, "# GPU blocks × 16, vLLM's default block size (not printed)")
        if abs(by_blocks - implied) <= 0.01 * implied:
            return Figure(
                by_blocks,
                ESTIMATED,
                "# GPU blocks × the block size 16, agreeing with maximum concurrency × tokens per request",
                0.01 * implied,
            )
    if implied is None:
        return None
    # per_request: a value of the Int64 column `per_request_tokens` (first_non_null gives an object)
    margin = 0.005 * float(per_request)  # type: ignore[arg-type]
    return Figure(round(implied), ESTIMATED, "maximum concurrency × tokens per request", margin)
