"""Small helpers shared by the analysis modules: typed access to event tables, rank labels."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

COMMON = {
    "line_no": pl.Int64(),
    "time": pl.Datetime("us"),
    "rank": pl.String(),
    "level": pl.String(),
    "rule": pl.String(),
}


def naive_utc(tables: Mapping[str, pl.DataFrame | pl.LazyFrame]) -> dict[str, pl.DataFrame | pl.LazyFrame]:
    """The tables with `time` as naive UTC: the analysis reasons in UTC; the tables store it zoned."""
    out: dict[str, pl.DataFrame | pl.LazyFrame] = {}
    for kind, frame in tables.items():
        schema = frame.schema if isinstance(frame, pl.DataFrame) else frame.collect_schema()
        dtype = schema.get("time")
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
            frame = frame.with_columns(pl.col("time").dt.convert_time_zone("UTC").dt.replace_time_zone(None))
        out[kind] = frame
    return out


def table(tables: Mapping[str, pl.DataFrame], kind: str, columns: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """The `kind` table with at least the common columns and `columns` (missing ones all null).

    An absent kind gives an empty frame of that schema, so callers never special-case it.
    """
    wanted = {**COMMON, **columns}
    frame = tables.get(kind)
    if frame is None:
        return pl.DataFrame(schema=wanted)
    missing = [
        pl.lit(None, dtype=dtype).alias(name) for name, dtype in wanted.items() if name not in frame.columns
    ]
    if missing:
        frame = frame.with_columns(missing)
    return frame


def rank_index(token: str) -> pl.Expr:
    """The integer after `token` in the `rank` label (`DP3 TP3` gives 3 for DP), else null."""
    return pl.col("rank").str.extract(rf"(?:^|[ _]){token}(\d+)", 1).cast(pl.Int64)


def leading_ranks(frame: pl.DataFrame, *, series: str = "series") -> pl.DataFrame:
    """Keep, per `series` (DP group), only the lines of its lowest TP rank.

    SGLang prints stats lines on the attention-TP rank 0 of each DP group; with
    `--enable-metrics-for-all-schedulers` every TP rank repeats them. Throughput adds up across
    DP groups, never across TP ranks, so the copies of the other TP ranks are dropped.
    """
    if frame.is_empty():
        return frame
    with_tp = frame.with_columns(rank_index("TP").fill_null(-1).alias("_tp"))
    lowest = with_tp.group_by(series).agg(pl.col("_tp").min().alias("_tp_min"))
    return (
        with_tp.join(lowest, on=series, how="left")
        .filter(pl.col("_tp") == pl.col("_tp_min"))
        .drop("_tp", "_tp_min")
    )


def median_interval(times: pl.Series) -> float | None:
    """Median of the positive gaps (s) between consecutive sorted timestamps, or None."""
    gaps = times.drop_nulls().sort().diff().dt.total_seconds(fractional=True).drop_nulls()
    gaps = gaps.filter(gaps > 0)
    if gaps.is_empty():
        return None
    return float(gaps.median())  # type: ignore[arg-type]


def first_line_no(frame: pl.DataFrame) -> int:
    """The smallest `line_no` of a frame holding at least one line."""
    value = frame.get_column("line_no").min()
    assert isinstance(value, int), "line_no is a non-null integer column"
    return value


def first_non_null(frame: pl.DataFrame, column: str) -> object:
    """The first non-null value of `column` in line order, or None."""
    if column not in frame.columns or frame.is_empty():
        return None
    series = frame.sort("line_no").get_column(column).drop_nulls()
    return None if series.is_empty() else series[0]
