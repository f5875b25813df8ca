"""Do a wrapper's clock and the engine's own stamps agree?

A line can carry two stamps: a wrapper's (docker `--timestamps`, journald, kubectl), with a zone,
and the engine's own, without one (``ts``). The line's `time` is the wrapper's exact instant; the
engine's stamp is read in the zone of the run's other naive stamps (UTC unless `--tz`). When the
two disagree by more than a second, the engine logs in another zone than the one it is read in
(the vLLM image set `TZ=America/Los_Angeles` until vllm-project/vllm#12888, for one), or its clock
drifts: every line without the wrapper's stamp is then off by as much. The difference is the
median over the lines with both stamps, of the engine's clock time against the wrapper's instant
in that zone, taken modulo a day (the engine's stamp may print no date).
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Mapping
from typing import Any

import polars as pl

DAY_S = 86_400
TOLERANCE_S = 1.0  # an engine stamp printed to the second is up to 1 s before the wrapper's
SAMPLE_LINES = 2_000  # lines with both stamps looked at, from each kind's start
_CLOCK = r"(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?"
_ZONED = r"(?:Z|[+-]\d{2}:?\d{2})\s*$"  # an engine stamp that prints its own zone is exact already

Frame = pl.DataFrame | pl.LazyFrame


def _pairs(tables: Mapping[str, Frame]) -> pl.DataFrame:
    parts = []
    for frame in tables.values():
        lazy = frame.lazy() if isinstance(frame, pl.DataFrame) else frame
        names = lazy.collect_schema().names()
        if not {"ts", "outer_ts", "time"} <= set(names):
            continue
        parts.append(
            lazy.filter(
                pl.col("outer_ts").is_not_null()
                & pl.col("ts").is_not_null()
                & pl.col("time").is_not_null()
                & ~pl.col("ts").str.contains(_ZONED)
            )
            .select("ts", pl.col("time").dt.replace_time_zone(None).alias("time"))
            .head(SAMPLE_LINES)
            .collect()
        )
    return pl.concat(parts) if parts else pl.DataFrame(schema={"ts": pl.String(), "time": pl.Datetime("us")})


def clock_disagreement(tables: Mapping[str, Frame], *, zone: str = "UTC") -> dict[str, Any] | None:
    """``offset_s`` (the engine's clock minus the wrapper's, median, in `zone`), ``lines`` compared
    and ``message``, when they disagree by more than `TOLERANCE_S`; else None. `tables` may be
    eager or lazy; their `time` is a UTC instant."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    pairs = _pairs(tables)
    if pairs.is_empty():
        return None
    try:
        tz: dt.tzinfo = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        tz = dt.UTC
    clock = pairs.get_column("ts").str.extract_groups(_CLOCK)
    diffs = []
    for (h, m, s, frac), instant in zip(clock.struct.unnest().rows(), pairs.get_column("time"), strict=True):
        if h is None:
            continue
        engine_s = int(h) * 3600 + int(m) * 60 + int(s) + (float(f"0.{frac}") if frac else 0.0)
        local = instant.replace(tzinfo=dt.UTC).astimezone(tz)
        wrapper_s = local.hour * 3600 + local.minute * 60 + local.second + local.microsecond / 1e6
        diffs.append((engine_s - wrapper_s + DAY_S / 2) % DAY_S - DAY_S / 2)
    if not diffs:
        return None
    offset = statistics.median(diffs)
    if abs(offset) <= TOLERANCE_S:
        return None
    hours = f" ({offset / 3600:+.1f} h)" if abs(offset) >= 1800 else ""
    return {
        "offset_s": offset,
        "lines": len(diffs),
        "message": (
            f"the engine's own stamps run {offset:+,.0f} s{hours} from the wrapper's clock read in {zone} "
            f"(median of {len(diffs):,} lines with both stamps): the engine logs in another zone or its "
            "clock drifts; the wrapper's exact stamps are used, lines without one are read in "
            f"{zone} (--tz ZONE to read them in the engine's zone)"
        ),
    }


__all__ = ["TOLERANCE_S", "clock_disagreement"]
