"""Prefill: SGLang's per-batch lines traced back to requests, and prefill throughput per phase.

SGLang prints one `Prefill batch` line per prefill batch. A long prompt is cut into chunks of the
chunked-prefill budget, and a batch may hold the end of one prompt and the start of the next
(``#new-seq`` counts the requests in it). Only the batch's last request can be unfinished, and a
request whose prefill is done joins the decode batch, so the rise of ``#running-req`` from one
Prefill line to the next tells how many of the batch's requests completed. That is enough to:

* number the requests and give every line the request of its first segment and the context that
  request already had before the line (``cached_tokens``);
* count the requests of a phase, hence its exact input length: Σ (new + cached tokens) ÷ requests;
* read a request's chunk curve: context before the chunk → input throughput. SGLang measures
  ``input throughput`` at the *next* Prefill line (tokens ÷ time since the previous one), so a
  chunk's throughput is the next line's, when that line follows it directly.

vLLM prints only an aggregate prompt throughput per stats interval: no per-request chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

CHUNK_SCHEMA: dict[str, pl.DataType] = {
    "series": pl.Int64(),
    "line_no": pl.Int64(),
    "time": pl.Datetime("us"),
    "request": pl.Int64(),
    "chunk": pl.Int64(),
    "new_seq": pl.Int64(),
    "new_token": pl.Int64(),
    "cached_token": pl.Int64(),
    "cached_tokens": pl.Int64(),
    "completes": pl.Int64(),
    "running_req": pl.Int64(),
    "printed_input_tps": pl.Float64(),
    "input_tps": pl.Float64(),
}


@dataclass(frozen=True)
class _OpenRequest:
    """The request whose prefill continues into the next line."""

    id: int
    chunks: int  # its lines so far
    context: int | None  # its tokens in cache before the next line; None when unknown


def prefill_chunks(
    prefills: pl.DataFrame, *, breaks: pl.DataFrame | None = None, chunk_budget: int | None = None
) -> pl.DataFrame:
    """Trace SGLang prefill lines (`samples.prefill_lines`) back to requests.

    Parameters
    ----------
    prefills
        Columns ``series``, ``line_no``, ``time``, ``new_seq``, ``new_token``, ``cached_token``,
        ``running_req``, ``input_tps``; with a ``phase`` column, each phase is traced on its own
        (requests never span phases).
    breaks
        ``series``, ``line_no`` of Decode lines: one between two Prefill lines means decode steps
        ran in between, so every prompt of the earlier batch was done, and the later line's
        throughput does not measure the earlier batch. Rows with a ``retracted`` count are
        retraction lines: those requests left the running batch between the two lines.
    chunk_budget
        The server's `chunked_prefill_size` (its capacity line): a line that prefilled fewer new
        tokens than that cut no request short, so every prompt of its batch was done (its
        requests may have finished decoding before the next line, leaving no trace in the
        running count).

    Returns
    -------
    pl.DataFrame
        `CHUNK_SCHEMA`, one row per Prefill line: ``request`` (of the line's first segment,
        numbered from 0 in line order), ``chunk`` (the line's index within that request),
        ``cached_tokens`` (that request's context before the line; null when unknown),
        ``completes`` (requests whose prefill finished in the line), ``printed_input_tps`` and
        ``input_tps`` (the throughput that measures this line: the next line's, when it follows
        directly).

    Examples
    --------
    >>> import datetime as dt
    >>> t = [dt.datetime(2026, 1, 1, 0, 0, s) for s in range(5)]
    >>> lines = pl.DataFrame({"series": [0] * 5, "line_no": [1, 2, 3, 4, 5], "time": t,
    ...     "new_seq": [1, 1, 2, 1, 1], "new_token": [100, 100, 100, 100, 40], "cached_token": [0] * 5,
    ...     "running_req": [0, 0, 0, 1, 1], "input_tps": [1.0, 90.0, 80.0, 95.0, 85.0]})
    >>> prefill_chunks(lines)[["line_no", "request", "chunk", "cached_tokens", "completes", "input_tps"]]
    shape: (5, 6)
    ┌─────────┬─────────┬───────┬───────────────┬───────────┬───────────┐
    │ line_no ┆ request ┆ chunk ┆ cached_tokens ┆ completes ┆ input_tps │
    │ ---     ┆ ---     ┆ ---   ┆ ---           ┆ ---       ┆ ---       │
    │ i64     ┆ i64     ┆ i64   ┆ i64           ┆ i64       ┆ f64       │
    ╞═════════╪═════════╪═══════╪═══════════════╪═══════════╪═══════════╡
    │ 1       ┆ 0       ┆ 0     ┆ 0             ┆ 0         ┆ 90.0      │
    │ 2       ┆ 0       ┆ 1     ┆ 100           ┆ 0         ┆ 80.0      │
    │ 3       ┆ 0       ┆ 2     ┆ 200           ┆ 1         ┆ 95.0      │
    │ 4       ┆ 1       ┆ 1     ┆ null          ┆ 0         ┆ 85.0      │
    │ 5       ┆ 1       ┆ 2     ┆ null          ┆ 1         ┆ null      │
    └─────────┴─────────┴───────┴───────────────┴───────────┴───────────┘
    """
    if prefills.is_empty():
        schema = {**CHUNK_SCHEMA, "phase": pl.Int64()} if "phase" in prefills.columns else CHUNK_SCHEMA
        return pl.DataFrame(schema=schema)
    decode_at: dict[int, list[int]] = {}
    retract_at: dict[int, list[tuple[int, int]]] = {}
    if breaks is not None:
        frame = (
            breaks if "retracted" in breaks.columns else breaks.with_columns(pl.lit(None).alias("retracted"))
        )
        for series, line, retracted in frame.select("series", "line_no", "retracted").iter_rows():
            if retracted is None:
                decode_at.setdefault(int(series or 0), []).append(int(line))
            else:
                retract_at.setdefault(int(series or 0), []).append((int(line), int(retracted)))
    out: list[dict[str, object]] = []
    next_request = 0
    keys = ["phase", "series"] if "phase" in prefills.columns else ["series"]
    for key, part in prefills.sort("line_no").group_by(keys, maintain_order=True):
        series = key[-1]
        rows = part.to_dicts()
        decodes = sorted(decode_at.get(int(series or 0), []))
        retracts = sorted(retract_at.get(int(series or 0), []))
        open_req: _OpenRequest | None = None
        for i, row in enumerate(rows):
            m = max(int(row["new_seq"] or 1), 1)
            new = int(row["new_token"] or 0)
            cached = int(row["cached_token"] or 0)
            nxt = rows[i + 1] if i + 1 < len(rows) else None
            direct = nxt is not None and not _decode_between(decodes, row["line_no"], nxt["line_no"])
            if chunk_budget and new < chunk_budget:
                completes = m  # a line below the chunk budget cut no prompt short
            elif (
                direct
                and nxt is not None
                and row["running_req"] is not None
                and nxt["running_req"] is not None
            ):
                # requests retracted in between left the running batch again
                back = sum(n for line, n in retracts if row["line_no"] < line < nxt["line_no"])
                completes = min(max(int(nxt["running_req"]) - int(row["running_req"]) + back, m - 1), m)
            else:
                completes = m  # decode steps ran (or the log ends): every prompt was done
            if open_req is None:
                open_req = _OpenRequest(id=next_request, chunks=0, context=cached)
                next_request += 1
            request, chunk, context = open_req.id, open_req.chunks, open_req.context
            # Requests 2..m of the batch are new; m-1 of them finish here unless the last goes on.
            next_request += m - 1
            if completes == m:
                open_req = None
            elif m == 1:
                open_req = _OpenRequest(
                    id=request, chunks=chunk + 1, context=None if context is None else context + new
                )
            else:
                open_req = _OpenRequest(id=next_request - 1, chunks=1, context=None)
            out.append(
                {
                    "series": series,
                    "line_no": row["line_no"],
                    "time": row["time"],
                    "request": request,
                    "chunk": chunk,
                    "new_seq": m,
                    "new_token": new,
                    "cached_token": cached,
                    "cached_tokens": context,
                    "completes": completes,
                    "running_req": row["running_req"],
                    "printed_input_tps": row["input_tps"],
                    "input_tps": nxt["input_tps"] if direct and nxt is not None else None,
                }
            )
    frame = pl.DataFrame(out, schema=CHUNK_SCHEMA, orient="row")
    if "phase" in prefills.columns:
        frame = frame.join(prefills.select("line_no", "phase"), on="line_no", how="left")
    return frame.sort("line_no")


def _decode_between(decodes: list[int], a: int, b: int) -> bool:
    import bisect

    i = bisect.bisect_right(decodes, a)
    return i < len(decodes) and decodes[i] < b


def request_inputs(chunks: pl.DataFrame) -> pl.DataFrame:
    """Requests whose input length the lines pin down exactly: started at the start of a line
    and finished in a line of their own (``#new-seq: 1``).

    Returns ``request``, ``series``, ``first_line``, ``last_line``, ``start``, ``end``, ``chunks``,
    ``input_tokens``.
    """
    schema = {
        "request": pl.Int64(),
        "series": pl.Int64(),
        "first_line": pl.Int64(),
        "last_line": pl.Int64(),
        "start": pl.Datetime("us"),
        "end": pl.Datetime("us"),
        "chunks": pl.Int64(),
        "input_tokens": pl.Int64(),
    }
    if chunks.is_empty():
        return pl.DataFrame(schema=schema)
    own = chunks.filter(pl.col("cached_tokens").is_not_null())
    done = own.filter((pl.col("new_seq") == 1) & (pl.col("completes") == 1))
    return (
        own.join(done.select("request"), on="request", how="semi")
        .group_by("request", maintain_order=True)
        .agg(
            pl.col("series").first(),
            pl.col("line_no").min().alias("first_line"),
            pl.col("line_no").max().alias("last_line"),
            pl.col("time").min().alias("start"),
            pl.col("time").max().alias("end"),
            pl.len().cast(pl.Int64).alias("chunks"),
            (pl.col("cached_token").first() + pl.col("new_token").sum()).alias("input_tokens"),
        )
        .select(list(schema))
        # polars' cast takes Mapping[str | selector | dtype, ...]: a str-keyed dict is not one (invariant key)
        .cast(schema)  # type: ignore[arg-type]
        .sort("request")
    )


def phase_input_exact(
    chunks: pl.DataFrame, *, retractions: pl.DataFrame | None = None, cached: str = "all"
) -> tuple[int | None, int]:
    """Input length of a phase's requests from its Prefill lines: Σ (new + cached) ÷ requests.

    ``cached="first"`` counts the cached tokens of the lines that start a request only (a fork
    whose continuing chunks print the request's earlier chunks as `#cached-token`).

    A retracted request is prefilled again with its generated tokens. When every retraction
    line says how many tokens it gave back (``tokens_gained``, SGLang ≈0.5.7+), those tokens and
    requests are taken out of the sums; otherwise only the lines before the first retraction
    count, up to the last one that left no prompt half done.

    Parameters
    ----------
    chunks
        `prefill_chunks` rows of one phase.
    retractions
        ``line_no``, ``count``, ``tokens_gained`` of the phase's retraction lines.

    Returns
    -------
    tuple
        (input tokens or None, number of requests).
    """
    part = chunks.sort("line_no")
    retracted, gained = 0, 0
    if retractions is not None and not retractions.is_empty():
        if retractions.get_column("tokens_gained").is_null().any():
            part = part.filter(pl.col("line_no") < retractions.get_column("line_no").min())
            closed = part.filter(pl.col("completes") == pl.col("new_seq"))
            if closed.is_empty():
                return None, 0
            part = part.filter(pl.col("line_no") <= closed.get_column("line_no").max())
        else:
            retracted = int(retractions.get_column("count").fill_null(1).sum())
            gained = int(retractions.get_column("tokens_gained").sum())
    requests = int(part.get_column("completes").sum()) - retracted
    counted = part if cached == "all" else part.filter(pl.col("chunk") == 0)
    # integer columns: polars types sum() as int | float | Decimal
    tokens = int(part.get_column("new_token").sum()) + int(counted.get_column("cached_token").sum()) - gained
    if requests <= 0 or tokens <= 0:
        return None, 0
    return round(tokens / requests), requests


def first_request_chunks(chunks: pl.DataFrame) -> pl.DataFrame:
    """The chunk curve of the phase's first request: its single-request lines, in order
    (``cached_tokens`` → ``input_tps``)."""
    if chunks.is_empty():
        return chunks
    first = chunks.sort("line_no").row(0, named=True)
    if first["chunk"] != 0:
        return chunks.head(0)
    return chunks.filter((pl.col("request") == first["request"]) & (pl.col("new_seq") == 1)).sort("line_no")


def prefill_by_phase(
    *, chunks: pl.DataFrame, samples: pl.DataFrame, phases: pl.DataFrame, engine: str
) -> pl.DataFrame:
    """Aggregate prefill throughput per phase.

    SGLang: mean and max of the printed input throughput of the phase's Prefill lines, leaving out
    the first (measured since the previous Prefill line, across the idle time before the phase).
    vLLM: mean and max of the prompt throughput over the samples that prefilled.

    Returns ``phase``, ``input_tps_mean``, ``input_tps_max``, ``prefill_samples``.
    """
    schema = {
        "phase": pl.Int64(),
        "input_tps_mean": pl.Float64(),
        "input_tps_max": pl.Float64(),
        "prefill_samples": pl.Int64(),
    }
    if phases.is_empty():
        return pl.DataFrame(schema=schema)
    rows = []
    for ph in phases.iter_rows(named=True):
        if engine == "sglang":
            part = chunks.filter(pl.col("phase") == ph["phase"]).sort("line_no")
            values = part.get_column("printed_input_tps").slice(1).drop_nulls()
        else:
            part = samples.filter(pl.col("phase") == ph["phase"])
            values = part.get_column("prompt_tps").drop_nulls()
            values = values.filter(values > 0)
        rows.append(
            {
                "phase": ph["phase"],
                "input_tps_mean": float(values.mean()) if len(values) else None,  # type: ignore[arg-type]
                "input_tps_max": float(values.max()) if len(values) else None,  # type: ignore[arg-type]
                "prefill_samples": len(values),
            }
        )
    return pl.DataFrame(rows, schema=schema, orient="row")
