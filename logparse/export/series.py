"""One run's metric series: each catalog metric its log supports, as time-ordered samples."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import polars as pl

from logparse.emulate.eras import parse_version
from logparse.export.catalog import CATALOG, Era, Metric, MetricType, help_text
from logparse.export.counters import Point, integrate_rates, running_sum
from logparse.export.rows import aggregated_lines, era_rows, label_columns, label_name, untimed

Labels = tuple[tuple[str, str], ...]
ENGINE_ERAS: dict[str, tuple[Era, ...]] = {"vllm": ("vllm-v0", "vllm-v1"), "sglang": ("sglang",)}
STATS_KINDS = ("engine_stats", "prefix_cache", "spec_decode", "decode_batch", "prefill_batch")


@dataclass(frozen=True, slots=True)
class Series:
    """One labelled series of a metric: (Unix ms, value) samples, time-ordered, one per timestamp."""

    name: str
    type: MetricType
    help: str
    labels: Labels
    samples: tuple[Point, ...]


@dataclass
class RunSeries:
    """Every series exported for one log, and what its log could not give."""

    run: str
    engine: str
    version: str | None
    model_name: str | None
    series: list[Series] = field(default_factory=list)
    untimed: int = 0  # stats lines without a timestamp, not exported
    aggregated: int = 0  # vLLM `N Engines Aggregated` stats lines, not exported
    unprinted: list[str] = field(default_factory=list)  # catalog metrics of its eras the log never printed


def run_series(
    tables: Mapping[str, pl.DataFrame], *, engine: str, run: str, model_name: str | None = None
) -> RunSeries:
    """The series of one log's event tables (`IngestResult.tables`), labelled with `run`.

    `model_name` overrides the served model the log names (vLLM/SGLang `served_model_name`,
    else the model); with neither, the ``model_name`` label is left out.
    """
    version = _config_value(tables, ("version",))
    out = RunSeries(
        run=run,
        engine=engine,
        version=version,
        model_name=model_name or _config_value(tables, ("served_model_name", "model")),
        untimed=untimed(tables, STATS_KINDS),
        aggregated=aggregated_lines(tables),
    )
    base = base_labels(out.model_name)
    by_era: dict[Era, dict[str, pl.DataFrame]] = {}
    for era, metrics in metric_groups(engine, version):
        if era not in by_era:
            by_era[era] = era_tables(tables, era)
        rows = by_era[era]
        frame = group_rows(metrics, rows, version)
        if frame is None:
            out.unprinted.extend(
                f"{m.name} ({m.table}.{m.column})" for m in metrics if not rows[m.table].is_empty()
            )
            continue
        out.series.extend(_series(metrics, frame, base, run))
    return out


def metric_groups(engine: str, version: str | None) -> list[tuple[Era, list[Metric]]]:
    """The catalog metrics a log of `engine` at `version` exports, by era, grouped by name."""
    return [
        (era, metrics)
        for era in ENGINE_ERAS.get(engine, ())
        for metrics in _by_name(m for m in CATALOG if m.era == era and _exported_in(m, version))
    ]


def era_tables(tables: Mapping[str, pl.DataFrame], era: Era) -> dict[str, pl.DataFrame]:
    """`era_rows` of every kind the era's metrics read."""
    return {kind: era_rows(tables, era, kind) for kind in {m.table for m in CATALOG if m.era == era}}


def group_rows(
    metrics: list[Metric],
    rows: Mapping[str, pl.DataFrame],
    version: str | None,
    printed: frozenset[str] = frozenset(),
) -> pl.DataFrame | None:
    """The value rows (``t_ms``, ``line_no``, labels, ``value``) of one metric name from its era's
    rows by kind (`era_rows`); None when none of them printed it. `printed`: the ``table.column``
    fields known to be printed by earlier lines (a line that leaves an `absent_is_zero` field out
    then counts 0)."""
    frames = [f for f in (_value_rows(m, rows[m.table], version, printed) for m in metrics) if f is not None]
    if all(f.is_empty() for f in frames):
        return None
    return pl.concat(frames, how="diagonal_relaxed")


def _by_name(metrics: Iterable[Metric]) -> list[list[Metric]]:
    """Catalog rows grouped by metric name (SGLang gauges are set by decode and prefill lines)."""
    groups: dict[str, list[Metric]] = {}
    for metric in metrics:
        groups.setdefault(metric.name, []).append(metric)
    return list(groups.values())


def _value_rows(
    metric: Metric, rows: pl.DataFrame, version: str | None, printed: frozenset[str] = frozenset()
) -> pl.DataFrame | None:
    """``t_ms``, ``line_no``, the era's label columns and ``value``: the lines that printed the field."""
    values = None if rows.is_empty() else _values(metric, rows, version, printed)
    if values is None:
        return None
    return rows.select("t_ms", "line_no", *label_columns(metric.era), values.alias("value")).filter(
        pl.col("value").is_not_null()
    )


def _series(metrics: list[Metric], rows: pl.DataFrame, base: Labels, run: str) -> list[Series]:
    metric = metrics[0]
    out = []
    for stamped in stamped_values(metric, rows, base, run):
        points = sorted(zip(stamped.times, stamped.merged, strict=True))
        out.append(
            Series(
                metric.name,
                metric.type,
                help_text(metrics),
                stamped.labels,
                tuple(_as_metric(metric, points)),
            )
        )
    return sorted(out, key=lambda series: series.labels)


@dataclass(frozen=True)
class Stamped:
    """One series' value rows merged per timestamp: the timestamps (Unix ms, in the order of their
    first line), how many lines each merges, their one value (`merged`), and the values of the
    lines themselves (in line order) where more than one line was merged and for the last `keep`
    timestamps (index -> values; a single line's value is its merged one)."""

    labels: Labels
    times: list[int]
    counts: list[int]
    merged: list[float]
    lines: dict[int, list[float]]

    def values_at(self, index: int) -> list[float]:
        """The values of the lines stamped `times[index]`."""
        return self.lines.get(index) or [self.merged[index]]


def stamped_values(
    metric: Metric, rows: pl.DataFrame, base: Labels, run: str, *, keep: int = 0
) -> list[Stamped]:
    """The value rows of `group_rows` per series (see `Stamped`). Lines are grouped per timestamp
    by polars and a lone line's value taken there: Python works per timestamp of several lines
    only, never per line."""
    labels = label_columns(metric.era)
    grouped = (
        rows.sort("line_no")
        .group_by([*labels, "t_ms"], maintain_order=True)
        .agg(pl.col("value").cast(pl.Float64), pl.len().alias("_n"))
    )
    # a lone line's merged value: `merged` of one value (a sum or mean starts from 0: -0.0 is 0.0)
    lone = pl.col("value").list.first()
    lone = lone if metric.how not in ("rate_integral", "interval_sum") else lone + 0.0
    grouped = grouped.with_columns(lone.alias("_lone"))
    parts = grouped.partition_by(labels, maintain_order=True) if labels else [grouped]
    out = []
    for part in parts:
        found = part.row(0)[: len(labels)]
        named = ((label_name(k), str(v)) for k, v in zip(labels, found, strict=True) if v is not None)
        counts = part["_n"].to_list()
        values = part["_lone"].to_list()
        wanted = set(part.with_row_index().filter(pl.col("_n") > 1)["index"].to_list())
        wanted.update(range(max(0, part.height - keep), part.height))
        order = sorted(wanted)
        lines = dict(zip(order, part["value"].gather(order).to_list(), strict=True)) if order else {}
        for i in order:
            if counts[i] > 1:
                values[i] = merged(metric, lines[i])
        out.append(Stamped((*base, *named, ("run", run)), part["t_ms"].to_list(), counts, values, lines))
    return out


def base_labels(model_name: str | None) -> Labels:
    """The labels every series of a run starts with: ``model_name`` when known."""
    return (("model_name", model_name),) if model_name else ()


def _values(
    metric: Metric, rows: pl.DataFrame, version: str | None, printed: frozenset[str] = frozenset()
) -> pl.Expr | None:
    if metric.column not in rows.columns:
        return None
    col = pl.col(metric.column)
    if metric.how == "percent":
        return col / 100
    if metric.how == "hit_ratio":
        seen = pl.col("new_token") + pl.col("cached_token")
        return pl.when(seen > 0).then(pl.col("cached_token") / seen)
    if metric.absent_is_zero:
        shown = rows[metric.column].null_count() < rows.height or f"{metric.table}.{metric.column}" in printed
        return col.fill_null(0) if shown or _at_least(version, metric.first) else None
    return col


def merged(metric: Metric, values: list[float]) -> float:
    """The one sample of the values lines stamped alike gave (lines stamped in the same second
    become one sample): a gauge keeps the last line's value, a rate their mean, an interval count
    their sum, a running total the last."""
    if metric.how == "rate_integral":
        return float(sum(values) / len(values))
    if metric.how == "interval_sum":
        return float(sum(values))
    return float(values[-1])


def as_metric(metric: Metric, points: list[Point]) -> list[Point]:
    """The metric's samples from its one-per-timestamp points (counters rebuilt or summed)."""
    return _as_metric(metric, points)


def _as_metric(metric: Metric, points: list[Point]) -> list[Point]:
    if metric.how == "rate_integral":
        return integrate_rates(points, hold_over_gaps=metric.era != "sglang")
    if metric.how == "interval_sum":
        return running_sum(points)
    return points


def _exported_in(metric: Metric, version: str | None) -> bool:
    """False when the log's version is known to predate the metric or to have dropped it."""
    parsed = _parsed(version)
    if parsed is None:
        return True
    if metric.first and parsed < parse_version(metric.first):
        return False
    return not (metric.before and parsed >= parse_version(metric.before))


def _at_least(version: str | None, first: str | None) -> bool:
    parsed = _parsed(version)
    return parsed is not None and first is not None and parsed >= parse_version(first)


def _parsed(version: str | None) -> tuple[int, ...] | None:
    try:
        return None if version is None else parse_version(version)
    except ValueError:
        return None


def config_value(tables: Mapping[str, pl.DataFrame], columns: tuple[str, ...]) -> str | None:
    """The first value the log's `config` lines print of the first of `columns` it has."""
    return _config_value(tables, columns)


def _config_value(tables: Mapping[str, pl.DataFrame], columns: tuple[str, ...]) -> str | None:
    config = tables.get("config")
    for column in columns:
        if config is not None and column in config.columns:
            values = config[column].drop_nulls()
            if len(values):
                return str(values[0])
    return None
