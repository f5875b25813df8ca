"""A run's metrics as they stand after the lines read so far, kept up to date a block at a time.

`LiveSeries.add` takes each block's new rows; `LiveSeries.series` gives every series `run_series`
would give for the lines read so far, each with one sample: the last one, the same value (the same
sums in the same order). The cost of a block is that of its own rows, whatever the run's length:
the rows a line's value depends on (the stats line before a vLLM `SpecDecoding` line, the SGLang
pool size) are carried from block to block, and a rebuilt counter carries on from its last value.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import polars as pl

from logparse.export.catalog import Metric, help_text
from logparse.export.counters import Point, integrated, median_gap
from logparse.export.series import (
    STATS_KINDS,
    Labels,
    Series,
    base_labels,
    config_value,
    era_tables,
    group_rows,
    labelled_points,
    merged,
    metric_groups,
)


@dataclass
class _Track:
    """One series: its one-per-timestamp points and what its current value is carried from."""

    metric: Metric
    help: str
    times: list[int] = field(default_factory=list)
    values: dict[int, list[float]] = field(default_factory=dict)  # the printed values per timestamp
    points: list[Point] = field(default_factory=list)
    gaps: list[int] = field(default_factory=list)  # between consecutive points, sorted
    carried: tuple[int | None, int, float] | None = None  # (usual interval, point index, value there)

    def add(self, t: int, value: float) -> None:
        if not self.times or t > self.times[-1]:
            if self.times:
                bisect.insort(self.gaps, t - self.times[-1])
            self.times.append(t)
            self.values[t] = [value]
            self.points.append((t, merged(self.metric, [value])))
            return
        if t in self.values:
            self.values[t].append(value)
            at = bisect.bisect_left(self.times, t)
            self.points[at] = (t, merged(self.metric, self.values[t]))
            if at < len(self.points) - 1:
                self.carried = None
            return
        # a line stamped before the latest one (a clock stepped back): the point goes in its place
        at = bisect.bisect_left(self.times, t)
        before, after = (self.times[at - 1] if at else None), self.times[at]
        if before is not None:
            del self.gaps[bisect.bisect_left(self.gaps, after - before)]
            bisect.insort(self.gaps, t - before)
        bisect.insort(self.gaps, after - t)
        self.times.insert(at, t)
        self.values[t] = [value]
        self.points.insert(at, (t, merged(self.metric, [value])))
        self.carried = None

    def sample(self) -> Point:
        """The series' last sample, as `series.as_metric` gives it."""
        t, last = self.points[-1]
        if self.metric.how == "interval_sum":
            return t, self._carried_value(None, self.points[0][1], self._summed)
        if self.metric.how == "rate_integral":
            usual = median_gap(self.gaps) if self.metric.era != "sglang" else None
            return t, self._carried_value(usual, 0.0, self._integrated)
        return t, last

    def _carried_value(self, usual: int | None, first: float, fold: Fold) -> float:
        """The counter at the last point, carried on from its value at the point before (which is
        kept: lines stamped like the last one may still merge into it)."""
        last = len(self.points) - 1
        if last == 0:
            return first
        if self.carried is None or self.carried[0] != usual:
            start, total = 0, first
        else:
            _, start, total = self.carried
        if start < last - 1:
            total, start = fold(start, total, last - 1, usual), last - 1
        self.carried = (usual, start, total)
        return fold(start, total, last, usual)

    def _summed(self, start: int, total: float, upto: int, usual: int | None) -> float:
        """`running_sum` from its value at point `start` to point `upto`."""
        for _, value in self.points[start + 1 : upto + 1]:
            total += value
        return total

    def _integrated(self, start: int, total: float, upto: int, usual: int | None) -> float:
        """`integrate_rates` from its value at point `start` to point `upto`."""
        return integrated(self.points[start : upto + 1], usual, total)[-1][1]


Fold = Callable[[int, float, int, "int | None"], float]


@dataclass
class LiveSeries:
    """Every metric series of one run, updated with each block's rows (see the module's docstring)."""

    engine: str
    run: str
    model_name: str | None = None  # overrides the model the log names
    version: str | None = None
    named_model: str | None = None
    done_line: int = 0
    printed: frozenset[str] = frozenset()
    carry: dict[str, pl.DataFrame] = field(default_factory=dict)
    tracks: dict[tuple[str, Labels], _Track] = field(default_factory=dict)

    def add(self, tables: Mapping[str, pl.DataFrame]) -> None:
        """Take one block's rows (kind -> frame, in line order, after every earlier block's)."""
        config = tables.get("config")
        if config is not None and not config.is_empty():
            self.version = self.version or config_value(tables, ("version",))
            self.named_model = self.named_model or config_value(tables, ("served_model_name", "model"))
        if not any(kind in tables and not tables[kind].is_empty() for kind in (*STATS_KINDS, "kv_pool")):
            return
        context = self._context(tables)
        base = base_labels(self.model_name or self.named_model)
        by_era: dict[str, dict[str, pl.DataFrame]] = {}
        for era, metrics in metric_groups(self.engine, self.version):
            if era not in by_era:
                by_era[era] = era_tables(context, era)
            rows = by_era[era]
            frame = group_rows(metrics, rows, self.version, self.printed)
            if frame is None:
                continue
            frame = frame.filter(pl.col("line_no") > self.done_line)
            for key, (t, value) in labelled_points(metrics[0], frame, base, self.run):
                track = self.tracks.get((metrics[0].name, key))
                if track is None:
                    track = self.tracks[(metrics[0].name, key)] = _Track(metrics[0], help_text(metrics))
                track.add(t, value)
        self.printed |= _printed_fields(self.engine, tables)
        self.done_line = max(self.done_line, _last_line(tables))
        self._keep_carry(context)

    def _context(self, tables: Mapping[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
        """The block's stats rows, with the earlier rows their values depend on before them."""
        out: dict[str, pl.DataFrame] = {}
        for kind in (*STATS_KINDS, "kv_pool"):
            parts = [
                f for f in (self.carry.get(kind), tables.get(kind)) if f is not None and not f.is_empty()
            ]
            if parts:
                out[kind] = pl.concat(parts, how="diagonal_relaxed") if len(parts) > 1 else parts[0]
        return out

    def _keep_carry(self, context: Mapping[str, pl.DataFrame]) -> None:
        # a V1 SpecDecoding line takes the engine of the stats line before it; SGLang's decode lines
        # carry the pool size the last allocation line printed
        stats = context.get("engine_stats")
        if stats is not None and {"swapped", "engines_aggregated"} <= set(stats.columns):
            per_engine = stats.filter(pl.col("swapped").is_null() & pl.col("engines_aggregated").is_null())
            if per_engine.height:
                self.carry["engine_stats"] = per_engine.sort("line_no").tail(1)
        pool = context.get("kv_pool")
        if pool is not None and "tokens" in pool.columns:
            self.carry["kv_pool"] = pool.filter(pl.col("tokens").is_not_null()).sort("line_no").tail(1)

    def series(self) -> list[Series]:
        """Every series so far, each with its last sample."""
        return [
            Series(t.metric.name, t.metric.type, t.help, labels, (t.sample(),))
            for (_, labels), t in sorted(self.tracks.items())
        ]


def _printed_fields(engine: str, tables: Mapping[str, pl.DataFrame]) -> frozenset[str]:
    """The `absent_is_zero` fields (``table.column``) the block's lines print."""
    out = set()
    for _, metrics in metric_groups(engine, None):
        for m in metrics:
            frame = tables.get(m.table)
            shown = (
                frame is not None
                and m.column in frame.columns
                and frame[m.column].null_count() < frame.height
            )
            if m.absent_is_zero and shown:
                out.add(f"{m.table}.{m.column}")
    return frozenset(out)


def _last_line(tables: Mapping[str, pl.DataFrame]) -> int:
    ends = [
        f.select(pl.col("line_no").max()).item()
        for f in tables.values()
        if "line_no" in f.columns and f.height
    ]
    return max((int(e) for e in ends if e is not None), default=0)


__all__ = ["LiveSeries"]
