"""A run's metrics as they stand after the lines read so far, kept up to date a block at a time.

`LiveSeries.add` takes each block's new rows; `LiveSeries.series` gives every series `run_series`
would give for the lines read so far, each with one sample: the last one, the same value (the same
sums in the same order). The cost of a block is that of its own rows, whatever the run's length:
the rows a line's value depends on (the stats line before a vLLM `SpecDecoding` line, the SGLang
pool size) are carried from block to block, and a rebuilt counter carries on from its last value.
Lines stamped alike are merged per timestamp by polars (`series.stamped_values`); the Python work
is per series and timestamp, not per line, and only the recent timestamps' values are kept.
"""

from __future__ import annotations

import bisect
import operator
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from logparse.export.catalog import Metric, help_text
from logparse.export.counters import GAP_FACTOR, Point, median_of_counts
from logparse.export.series import (
    STATS_KINDS,
    Labels,
    Series,
    Stamped,
    base_labels,
    config_value,
    era_tables,
    group_rows,
    merged,
    metric_groups,
    stamped_values,
)

# Timestamps of a series whose printed values are kept, newest first: lines stamped alike merge into
# one sample, and the values of older timestamps are let go (a busy log prints thousands a second).
RECENT_STAMPS = 64


@dataclass
class _Track:
    """One series: its one-per-timestamp points and what its current value is carried from."""

    metric: Metric
    help: str
    times: list[int] = field(default_factory=list)
    points: list[float] = field(default_factory=list)  # the one value per timestamp
    counts: list[int] = field(default_factory=list)  # lines merged into each point
    values: dict[int, list[float]] = field(default_factory=dict)  # the recent timestamps' values
    gaps: Counter[int] = field(default_factory=Counter)  # between consecutive points
    carried: tuple[int | None, int, float] | None = None  # (usual interval, point index, value there)

    def extend(self, stamped: Stamped) -> None:
        """A block's lines of the series (`series.stamped_values`), after every earlier line's: its
        later timestamps are appended at once."""
        times = stamped.times
        first = 0
        while first < len(times) and self.times and times[first] <= self.times[-1]:
            self.add(times[first], stamped.values_at(first))
            first += 1
        if first == len(times):
            return
        new = times[first:]
        if not all(map(operator.lt, new, new[1:])):  # stamps stepped back in the block
            for i in range(first, len(times)):
                self.add(times[i], stamped.values_at(i))
            return
        if self.times:
            self.gaps[new[0] - self.times[-1]] += 1
        self.gaps.update(map(operator.sub, new[1:], new[:-1]))
        self.times.extend(new)
        self.counts.extend(stamped.counts[first:])
        self.points.extend(stamped.merged[first:])
        recent = range(max(first, len(times) - RECENT_STAMPS), len(times))
        self.values.update((times[i], stamped.values_at(i)) for i in recent)
        self._forget()

    def add(self, t: int, values: list[float]) -> None:
        """The values of lines stamped `t` (in line order), after those of every earlier line."""
        if not self.times or t > self.times[-1]:
            if self.times:
                self.gaps[t - self.times[-1]] += 1
            self.times.append(t)
            self.counts.append(len(values))
            self.values[t] = list(values)
            self.points.append(merged(self.metric, values))
            self._forget()
            return
        at = bisect.bisect_left(self.times, t)
        if self.times[at] == t:
            self.points[at] = self._merged_into(at, values)
            self.counts[at] += len(values)
            if at < len(self.points) - 1:
                self.carried = None
            return
        # a line stamped before the latest one (a clock stepped back): the point goes in its place
        before, after = (self.times[at - 1] if at else None), self.times[at]
        if before is not None:
            self._drop_gap(after - before)
            self.gaps[t - before] += 1
        self.gaps[after - t] += 1
        self.times.insert(at, t)
        self.counts.insert(at, len(values))
        self.values[t] = list(values)
        self.points.insert(at, merged(self.metric, values))
        self.carried = None
        self._forget()

    def _drop_gap(self, gap: int) -> None:
        self.gaps[gap] -= 1
        if not self.gaps[gap]:
            del self.gaps[gap]

    def _forget(self) -> None:
        """Let the values of all but the recent timestamps go (amortised: past twice as many)."""
        if len(self.values) > 2 * RECENT_STAMPS:
            recent = self.times[-RECENT_STAMPS:]
            self.values = {t: self.values[t] for t in recent if t in self.values}

    def _merged_into(self, at: int, values: list[float]) -> float:
        """Point `at`'s value with `values` merged in. For a timestamp older than the recent ones
        (its values let go) a rate's mean and a count's sum are carried on from the point's value
        and count, equal to the whole merge up to rounding."""
        kept = self.values.get(self.times[at])
        if kept is not None:
            kept.extend(values)
            return merged(self.metric, kept)
        old, count = self.points[at], self.counts[at]
        if self.metric.how == "rate_integral":
            return (old * count + sum(values)) / (count + len(values))
        if self.metric.how == "interval_sum":
            return old + sum(values)
        return merged(self.metric, values)

    def sample(self) -> Point:
        """The series' last sample, as `series.as_metric` gives it."""
        t, last = self.times[-1], self.points[-1]
        if self.metric.how == "interval_sum":
            return t, self._carried_value(None, self.points[0], self._summed)
        if self.metric.how == "rate_integral":
            usual = median_of_counts(self.gaps) if self.metric.era != "sglang" else None
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
        """`running_sum` from its value at point `start` to point `upto` (added in order, as
        `running_sum` adds: numpy's accumulate is sequential)."""
        return _accumulated(total, np.asarray(self.points[start + 1 : upto + 1], dtype=np.float64))

    def _integrated(self, start: int, total: float, upto: int, usual: int | None) -> float:
        """`integrate_rates` from its value at point `start` to point `upto`: the same products
        added in the same order, a block at a time."""
        gaps = np.diff(np.asarray(self.times[start : upto + 1], dtype=np.int64))
        seconds = gaps / 1000
        if usual is not None:  # the comparison `integrated` makes: an int gap against a float
            seconds = np.where(gaps.astype(np.float64) > GAP_FACTOR * usual, usual / 1000, seconds)
        rates = np.asarray(self.points[start + 1 : upto + 1], dtype=np.float64)
        return _accumulated(total, rates * seconds)


def _accumulated(total: float, increments: np.ndarray) -> float:
    """`total` with `increments` added one after the other."""
    if not len(increments):
        return total
    return float(np.add.accumulate(np.concatenate(([total], increments)))[-1])


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
            for stamped in stamped_values(metrics[0], frame, base, self.run, keep=RECENT_STAMPS):
                track = self.tracks.get((metrics[0].name, stamped.labels))
                if track is None:
                    track = self.tracks[(metrics[0].name, stamped.labels)] = _Track(
                        metrics[0], help_text(metrics)
                    )
                track.extend(stamped)
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
