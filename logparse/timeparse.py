"""Turn printed timestamps (`ts`) into datetimes (`time`).

Engines print many shapes: vLLM `MM-DD HH:MM:SS` (no year), SGLang `YYYY-mm-dd HH:MM:SS[.fff]`,
old SGLang `HH:MM:SS`, docker `…T…Z`, journald `Mon DD HH:MM:SS`, FlashInfer `…,mmm`. A year-less
stamp takes its year from the log itself (any full date in it), else `--year`, else the file's
modification time; a date-less stamp takes the date likewise. Times run forward: when a stamp
goes back by more than half a year (or a day, for date-less stamps) the year (day) rolls over.

`TimeParser` reads stamps one by one; `logparse.fastpath.times.StreamTimes` applies the same rules
to whole columns (the streaming ingest), and must be kept in step with it.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

import re

_FULL = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})"
    r"(?:[.,](?P<frac>[0-9]{1,9}))?"
)
_MONTH_DAY = re.compile(r"(?P<mo>[0-9]{2})-(?P<d>[0-9]{2}) (?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})")
_SYSLOG = re.compile(r"(?P<mon>[A-Za-z]{3})\.? +(?P<d>[0-9]{1,2}) (?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})")
_TIME_ONLY = re.compile(r"(?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:[.,](?P<frac>[0-9]{1,9}))?")
_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
HALF_YEAR = dt.timedelta(days=183)


def infer_year(stamps: Iterable[str | None]) -> int | None:
    """The year of the first stamp in the log that prints one."""
    for ts in stamps:
        if ts:
            m = _FULL.search(ts)
            if m:
                return int(m["y"])
    return None


def infer_date(stamps: Iterable[str | None]) -> dt.date | None:
    """The date of the first stamp in the log that prints a valid one (for time-only stamps)."""
    for ts in stamps:
        if ts:
            m = _FULL.search(ts)
            if m:
                try:
                    return dt.date(int(m["y"]), int(m["mo"]), int(m["d"]))
                except ValueError:  # a damaged stamp (02-30): the next full date decides
                    continue
    return None


def _micro(frac: str | None) -> int:
    return int((frac or "0")[:6].ljust(6, "0"))


class TimeParser:
    """Stateful parser for one log's stamps, in line order (for year and day rollover)."""

    def __init__(self, *, year: int, date: dt.date) -> None:
        self.year = year
        self.date = date
        self._last: dt.datetime | None = None
        self._cache: dict[str, dt.datetime | None] = {}

    def parse(self, ts: str | None) -> dt.datetime | None:
        """The datetime for `ts`, or None when it cannot be read."""
        if not ts:
            return None
        cached = self._cache.get(ts)
        if cached is not None:
            self._last = cached  # a cache hit reads the stamp as a miss would
            return cached
        value = self._parse(ts)
        if value is not None:
            if self._last is not None and _FULL.search(ts) is None:
                value = self._roll_forward(ts, value)
            self._last = value
            if _FULL.search(ts) is not None:
                self._cache[ts] = value
        return value

    def _roll_forward(self, ts: str, value: dt.datetime) -> dt.datetime:
        assert self._last is not None
        if _TIME_ONLY.fullmatch(ts) and value < self._last - dt.timedelta(hours=12):
            self.date += dt.timedelta(days=1)
            return value + dt.timedelta(days=1)
        if value < self._last - HALF_YEAR:
            self.year += 1
            try:
                return value.replace(year=self.year)
            except ValueError:
                return value
        return value

    def _parse(self, ts: str) -> dt.datetime | None:
        try:
            m = _FULL.search(ts)
            if m:
                return dt.datetime(int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]),
                                   int(m["s"]), _micro(m["frac"]))
            m = _MONTH_DAY.search(ts)
            if m:
                return dt.datetime(self.year, int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]))
            m = _SYSLOG.search(ts)
            if m and m["mon"].lower() in _MONTHS:
                return dt.datetime(self.year, _MONTHS[m["mon"].lower()], int(m["d"]), int(m["h"]),
                                   int(m["mi"]), int(m["s"]))
            m = _TIME_ONLY.fullmatch(ts)
            if m:
                return dt.datetime.combine(self.date, dt.time(int(m["h"]), int(m["mi"]), int(m["s"]),
                                                              _micro(m["frac"])))
        except ValueError:  # e.g. 02-30 in a damaged line
            return None
        return None


def parse_times(stamps: Sequence[str | None], *, year: int | None = None,
                fallback: dt.datetime | None = None) -> list[dt.datetime | None]:
    """Datetimes for a log's stamps in line order; see the module docstring for the rules."""
    default = fallback or dt.datetime.now()
    found_year = infer_year(stamps)
    found_date = infer_date(stamps)
    parser = TimeParser(year=year or found_year or default.year, date=found_date or default.date())
    return [parser.parse(ts) for ts in stamps]
