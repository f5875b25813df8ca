"""`time` for every line, from the stamp parts the parsers give, in line order.

Each line's `time` comes from its most complete stamp (a wrapper's date, year and zone win over the
engine's year-less stamp); `time` is a UTC instant:

* an epoch number or a stamp with a zone is exact;
* a stamp with a date but no zone is local time in `zone` (`--tz`), UTC unless told: the same
  log gives the same times on every machine, whatever its `TZ`; stated in the ingest's facts;
* a stamp without a year (vLLM's `MM-DD`, syslog's `Mon DD`) takes the year of the last full date
  printed before it; a stamp without a date (old SGLang's `HH:MM:SS`) takes that date;
* before any full date, the first full date of the log, else `--year`, else the file's modification
  time: it dates the *last* line (a log is written up to its mtime), so a run across New Year's
  Eve or midnight gets the right year and day. Such dates are `inferred` (the facts say from what);
* inside a stretch of year-less stamps a step back of more than half a year is a new year; of
  date-less stamps, a step back of more than 12 hours is a new day.

The log is read as a stream: a full date met late, or an mtime anchor that says the year (date)
guessed at the start was wrong, raises `Restart` and the log is read again with what is now known.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl
import pyarrow as pa

from logparse.parse.stamps import EPOCH_ONLY, MONTH_DAY, TIME_ONLY, WITH_YEAR, WITH_ZONE

HALF_YEAR_US = 183 * 86_400_000_000
HALF_DAY_US = 12 * 3_600_000_000
DAY_US = 86_400_000_000
SLACK_US = 86_400_000_000  # a last line stamped up to a day after the mtime is not a wrong year
# A date-less last line more than half a day after the mtime (read in the stamps' zone) belongs to
# the day before: the mtime is written after the last line, and half a day covers a wrong zone.
DATE_SLACK_US = HALF_DAY_US
_EPOCH = dt.datetime(1970, 1, 1)


class Restart(Exception):
    """Lines were dated with a year or date the log itself later contradicts."""

    def __init__(self, year: int | None, date: dt.date | None, why: str) -> None:
        super().__init__(why)
        self.year = year
        self.date = date


DEFAULT_ZONE = "UTC"  # stamps without a zone, unless --tz: the same times on every machine


@dataclass
class TimeFacts:
    """How a log's times were made: for the headline, the JSON and the report."""

    zone: str = "UTC"
    zone_assumed: bool = False  # naive stamps were read as `zone` (nothing on the line said)
    exact: int = 0  # lines whose time came from a stamp with a zone or an epoch
    naive: int = 0  # with a date, no zone
    year_inferred: int = 0  # no year printed
    date_inferred: int = 0  # no date printed
    inferred_from: str | None = None  # "the log's full dates", "--year", "the file's modification time"
    anchor: str | None = None  # the mtime used, ISO
    rollovers: int = 0

    def as_dict(self) -> dict[str, object]:
        """The facts as plain data."""
        return dict(self.__dict__)


@dataclass
class TimeResolver:
    """Turns each block's stamp parts into `time` (UTC microseconds), carrying state across blocks."""

    year: int | None = None  # --year
    mtime: dt.datetime | None = None  # the file's modification time, UTC-aware
    zone: str | None = None  # --tz
    known_year: int | None = None  # from a restart
    known_date: dt.date | None = None
    facts: TimeFacts = field(default_factory=TimeFacts)
    _year: int | None = None  # the year for year-less stamps now
    _date: dt.date | None = None  # the date for date-less stamps now
    _full_seen: bool = False
    _guessed: str | None = None  # "mtime" / "year" when the first stamps were dated by a guess
    _guess_used: bool = False
    _last_md: int | None = None  # last year-less stamp, in its base-year microseconds
    _last_to: int | None = None  # last date-less stamp, microseconds of its day
    _last_value: int | None = None  # the last year-less or date-less time given, UTC us

    def __post_init__(self) -> None:
        zone = self.zone or DEFAULT_ZONE
        self.facts.zone = zone
        self._local = self.mtime.astimezone(_zoneinfo(zone)).replace(tzinfo=None) if self.mtime else None
        if self.known_year is not None or self.year is not None:
            self._year = self.known_year if self.known_year is not None else self.year
            self._guessed = None if self.known_year is not None else "year"
        elif self._local is not None:
            self._year, self._guessed = self._local.year, "mtime"
        else:
            self._year, self._guessed = self._now(zone).year, "now"
        if self.known_date is not None:
            self._date = self.known_date
        elif self._local is not None:
            self._date = self._local.date()
        else:
            self._date = self._now(zone).date()

    @staticmethod
    def _now(zone: str) -> dt.datetime:
        """Now in `zone` (not in this machine's zone: stdin's dates do not depend on `TZ`)."""
        return dt.datetime.now(dt.UTC).astimezone(_zoneinfo(zone)).replace(tzinfo=None)

    @property
    def settled(self) -> bool:
        """No `Restart` can come any more: a full date was read (what was given stays given)."""
        return self._full_seen

    # -- one block ---------------------------------------------------------------------------------
    def feed(self, stamps: pa.RecordBatch) -> pa.Array:
        """`time` of a block's lines (UTC microseconds; null where no stamp reads)."""
        parts = pl.from_arrow(pa.Table.from_batches([stamps]))
        assert isinstance(parts, pl.DataFrame)
        rank = parts["completeness"].to_list()
        out: list[int | None] = [None] * len(rank)
        naive_rows: list[int] = []
        cols = {name: parts[name].to_list() for name in parts.columns}
        for i, kind in enumerate(rank):
            if kind == 0:
                continue
            if kind == EPOCH_ONLY:
                out[i] = cols["epoch_us"][i]
                self.facts.exact += 1
                continue
            if kind in (WITH_ZONE, WITH_YEAR):
                value = _micros(cols["year"][i], cols["month"][i], cols["day"][i], cols, i)
                if value is None:
                    continue
                self._see_full(cols["year"][i], dt.date(cols["year"][i], cols["month"][i], cols["day"][i]))
                if kind == WITH_ZONE:
                    out[i] = value - cols["zone"][i] * 60_000_000
                    self.facts.exact += 1
                else:
                    out[i] = value
                    naive_rows.append(i)
                    self.facts.naive += 1
            elif kind == MONTH_DAY:
                out[i] = self._month_day(cols, i)
                if out[i] is not None:
                    naive_rows.append(i)
            elif kind == TIME_ONLY:
                out[i] = self._time_only(cols, i)
                if out[i] is not None:
                    naive_rows.append(i)
        return self._to_utc(out, naive_rows)

    def _see_full(self, year: int, date: dt.date) -> None:
        if not self._full_seen and self._guess_used and (year != self._year or date != self._date):
            raise Restart(
                year, date, f"the log's first full date ({date}) says the earlier lines were misdated"
            )
        self._full_seen = True
        self._guessed = None
        self._year, self._date = year, date
        self._last_md = self._last_to = None

    def _month_day(self, cols: dict[str, list], i: int) -> int | None:
        base = _micros(2000, cols["month"][i], cols["day"][i], cols, i)
        if base is None:
            return None
        if self._last_md is not None and base < self._last_md - HALF_YEAR_US:
            assert self._year is not None
            self._year += 1
            self.facts.rollovers += 1
        self._last_md = base
        self._note_guess()
        self.facts.year_inferred += 1
        value = _micros(self._year, cols["month"][i], cols["day"][i], cols, i)
        self._last_value = value
        return value

    def _time_only(self, cols: dict[str, list], i: int) -> int | None:
        of_day = ((cols["hour"][i] * 60 + cols["minute"][i]) * 60 + cols["second"][i]) * 1_000_000 + cols[
            "micro"
        ][i]
        if self._last_to is not None and of_day < self._last_to - HALF_DAY_US:
            assert self._date is not None
            self._date += dt.timedelta(days=1)
            self.facts.rollovers += 1
        self._last_to = of_day
        self._note_guess()
        self.facts.date_inferred += 1
        assert self._date is not None
        value = (dt.datetime.combine(self._date, dt.time()) - _EPOCH) // dt.timedelta(microseconds=1) + of_day
        self._last_value = value
        return value

    def _note_guess(self) -> None:
        if self._guessed is not None:
            self._guess_used = True
        if self.facts.inferred_from is None:
            self.facts.inferred_from = {
                "mtime": "the file's modification time",
                "year": "--year",
                "now": "today (stdin has no mtime)",
                None: "the log's full dates",
            }[self._guessed]
            if self._guessed == "mtime" and self.mtime is not None:
                self.facts.anchor = self.mtime.isoformat()

    def _to_utc(self, values: list[int | None], naive_rows: list[int]) -> pa.Array:
        if naive_rows:
            self.facts.zone_assumed = True
        zone = self.facts.zone
        series = pl.Series("time", values, dtype=pl.Int64).cast(pl.Datetime("us"))
        if naive_rows and zone != "UTC":
            mask = pl.Series([False] * len(values))
            mask[naive_rows] = True
            local = series.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
            series = pl.select(
                pl.when(mask)
                .then(local.dt.convert_time_zone("UTC").dt.replace_time_zone(None))
                .otherwise(series)
            ).to_series()
        return series.dt.replace_time_zone("UTC").to_arrow()

    # -- the end -----------------------------------------------------------------------------------
    def finish(self) -> None:
        """Check the guess against the anchor: an mtime dates the last line (Restart when it must move)."""
        if (
            self._guessed != "mtime"
            or not self._guess_used
            or self._last_value is None
            or self._local is None
        ):
            return
        last = _EPOCH + dt.timedelta(microseconds=self._last_value)
        slack = SLACK_US if self.facts.year_inferred else DATE_SLACK_US
        if last <= self._local + dt.timedelta(microseconds=slack):
            return
        assert self._year is not None and self._date is not None
        start_year = self.known_year or self._local.year
        if self.facts.year_inferred:
            years_over = (
                last.year
                - self._local.year
                + (0 if last.replace(year=self._local.year) <= self._local else 1)
            )
            raise Restart(
                start_year - max(1, years_over),
                None,
                "the file's modification time dates the last line a year earlier",
            )
        days_over = (last - self._local).days + 1
        start_date = self.known_date or self._local.date()
        raise Restart(
            None,
            start_date - dt.timedelta(days=days_over),
            "the file's modification time dates the last line a day earlier",
        )


def _micros(
    year: int | None, month: int | None, day: int | None, cols: dict[str, list], i: int
) -> int | None:
    if year is None or month is None or day is None:
        return None
    try:
        value = dt.datetime(
            year, month, day, cols["hour"][i], cols["minute"][i], cols["second"][i], cols["micro"][i]
        )
    except ValueError:  # 02-29 of a year that has none
        return None
    return (value - _EPOCH) // dt.timedelta(microseconds=1)


def _zoneinfo(name: str) -> dt.tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC
