"""`time` from `ts` for a log read block by block: `timeparse.TimeParser`'s rules on whole columns.

The reference reads every stamp in line order with a little state: the year (for `MM-DD` and
syslog stamps), the date (for time-only stamps) and the last time read (a year-less stamp that
goes back more than half a year rolls the year over; a time-only stamp that goes back more than
12 hours rolls the day over). Full dates need no state.

Here a block is read in one vectorised pass that assumes no rollover; the first stamp where a
rollover happens is then applied as the reference would, and the rest of the block is read again
with the new state. Rollovers are rare (a new year, a new day), so this stays vectorised.

Year and date come from the first full date in the log. A streaming reader learns it only when it
gets there: blocks before it were read with `--year` or the file's modification time, which is
right unless they held year-less (date-less) stamps and the date found says otherwise. Then
`Restart` is raised, with the year and date now known; the caller reads the log again from the
start (what `ingest` does), so `time` is always what the reference gives.
"""
from __future__ import annotations

import datetime as dt

import polars as pl

from logparse.timeparse import _MONTHS, HALF_YEAR

FULL = r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]{1,9}))?"
MONTH_DAY = r"([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})"
SYSLOG = r"([A-Za-z]{3})\.? +([0-9]{1,2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})"
TIME_ONLY = r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]{1,9}))?$"
NONE, FULL_KIND, MD_KIND, SYS_KIND, TO_KIND = 0, 1, 2, 3, 4
_US_DAY = 86_400_000_000
_HALF_YEAR_US = int(HALF_YEAR / dt.timedelta(microseconds=1))
_HALF_DAY_US = 12 * 3_600_000_000
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


class Restart(Exception):  # noqa: N818 - a signal, not an error
    """Earlier blocks were read with a year or date that the log itself contradicts."""

    def __init__(self, year: int | None, date: dt.date | None) -> None:
        super().__init__(f"the log's first full date says year {year}, date {date}")
        self.year = year
        self.date = date


def _us(value: dt.datetime) -> int:
    return (value - _EPOCH) // dt.timedelta(microseconds=1)


def _from_us(value: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=value)


def _components(stamps: pl.Series) -> pl.DataFrame:
    """Kind and numeric parts of each distinct stamp, as `TimeParser._parse` finds them."""
    def groups(pattern: str, names: list[str]) -> pl.DataFrame:
        got = stamps.str.extract_groups(pattern).struct.unnest()
        got.columns = names
        return got

    full = groups(FULL, ["y", "mo", "d", "h", "mi", "s", "frac"])
    md = groups(MONTH_DAY, ["mo", "d", "h", "mi", "s"])
    sy = groups(SYSLOG, ["mon", "d", "h", "mi", "s"])
    to = groups(TIME_ONLY, ["h", "mi", "s", "frac"])
    month_of = {k: v for k, v in _MONTHS.items()}
    sy_month = sy.get_column("mon").str.to_lowercase().replace_strict(month_of, default=None, return_dtype=pl.Int64)
    is_full = full.get_column("y").is_not_null()
    is_md = ~is_full & md.get_column("mo").is_not_null()
    is_sy = ~is_full & ~is_md & sy_month.is_not_null()
    is_to = ~is_full & ~is_md & ~is_sy & to.get_column("h").is_not_null()

    def pick(name: str, sources: list[tuple[pl.Series, pl.DataFrame | pl.Series]]) -> pl.Series:
        expr = pl.lit(None, dtype=pl.Int64)
        for mask, frame in reversed(sources):
            col = frame if isinstance(frame, pl.Series) else frame.get_column(name)
            expr = pl.when(pl.lit(mask)).then(pl.lit(col).cast(pl.Int64, strict=False)).otherwise(expr)
        return pl.select(expr).to_series().alias(name)

    frac = pl.select(pl.when(pl.lit(is_full)).then(pl.lit(full.get_column("frac")))
                     .otherwise(pl.lit(to.get_column("frac")))).to_series()
    micro = frac.fill_null("0").str.slice(0, 6).str.pad_end(6, "0").cast(pl.Int64)
    kind = pl.select(pl.when(pl.lit(is_full)).then(FULL_KIND).when(pl.lit(is_md)).then(MD_KIND)
                     .when(pl.lit(is_sy)).then(SYS_KIND).when(pl.lit(is_to)).then(TO_KIND)
                     .otherwise(NONE)).to_series().cast(pl.Int8)
    return pl.DataFrame({
        "stamp": stamps,
        "kind": kind,
        "y": pick("y", [(is_full, full)]),
        "mo": pick("mo", [(is_full, full), (is_md, md), (is_sy, sy_month)]),
        "d": pick("d", [(is_full, full), (is_md, md), (is_sy, sy)]),
        "h": pick("h", [(is_full, full), (is_md, md), (is_sy, sy), (is_to, to)]),
        "mi": pick("mi", [(is_full, full), (is_md, md), (is_sy, sy), (is_to, to)]),
        "s": pick("s", [(is_full, full), (is_md, md), (is_sy, sy), (is_to, to)]),
        "us": pl.select(pl.when(pl.lit(is_full | is_to)).then(pl.lit(micro)).otherwise(0)).to_series(),
    })


def _values(rows: pl.DataFrame, year: int, date: dt.date) -> pl.Series:
    """Microseconds since 1970 of each row read with `year`/`date` and no rollover (null: unreadable)."""
    kind = pl.col("kind")
    y = (pl.when(kind == FULL_KIND).then(pl.col("y")).when(kind == TO_KIND).then(pl.lit(date.year, dtype=pl.Int64))
         .otherwise(pl.lit(year, dtype=pl.Int64)))
    mo = pl.when(kind == TO_KIND).then(pl.lit(date.month, dtype=pl.Int64)).otherwise(pl.col("mo"))
    d = pl.when(kind == TO_KIND).then(pl.lit(date.day, dtype=pl.Int64)).otherwise(pl.col("d"))
    y_, mo_, d_ = pl.col("_y"), pl.col("_mo"), pl.col("_d")
    leap = ((y_ % 4 == 0) & (y_ % 100 != 0)) | (y_ % 400 == 0)
    dim = (pl.when(mo_ == 2).then(pl.when(leap).then(29).otherwise(28))
           .when(mo_.is_in([4, 6, 9, 11])).then(30).otherwise(31))
    valid = ((kind != NONE) & y_.is_between(1, 9999) & mo_.is_between(1, 12) & d_.is_between(1, 31)
             & (d_ <= dim) & pl.col("h").is_between(0, 23) & pl.col("mi").is_between(0, 59)
             & pl.col("s").is_between(0, 59))
    safe_y = pl.when(pl.col("_ok")).then(y_).otherwise(1970)
    safe_mo = pl.when(pl.col("_ok")).then(mo_).otherwise(1)
    safe_d = pl.when(pl.col("_ok")).then(d_).otherwise(1)
    days = pl.date(safe_y, safe_mo, safe_d).cast(pl.Int64)
    value = (days * _US_DAY + pl.col("h") * 3_600_000_000 + pl.col("mi") * 60_000_000
             + pl.col("s") * 1_000_000 + pl.col("us"))
    return (rows.lazy()
            .with_columns(_y=y, _mo=mo, _d=d)
            .with_columns(_ok=valid.fill_null(False))
            .select(pl.when(pl.col("_ok")).then(value).otherwise(None).alias("v"))
            .collect().to_series())


class StreamTimes:
    """Reads `ts` columns block after block, in line order, into `time` columns."""

    def __init__(self, *, year: int | None, fallback: dt.datetime | None,
                 known_year: int | None = None, known_date: dt.date | None = None) -> None:
        self.default = fallback or dt.datetime.now()
        self.cli_year = year
        self.found_year = known_year
        self.found_date = known_date
        self.year = year or known_year or self.default.year
        self.date = known_date or self.default.date()
        self.last: int | None = None  # microseconds since 1970 of the last stamp read
        self.used_year = False  # year-less stamps were read before the log's year was known
        self.used_date = False  # date-less stamps were read before the log's date was known

    def feed(self, ts: pl.Series) -> pl.Series:
        """`time` (Datetime us) for `ts`, the stamps of the next lines of the log."""
        n = len(ts)
        frame = pl.DataFrame({"stamp": ts}).with_row_index("pos")
        stamped = frame.filter(pl.col("stamp").is_not_null() & (pl.col("stamp") != ""))
        if stamped.height == 0:
            return pl.repeat(None, n, dtype=pl.Datetime("us"), eager=True).alias("time")
        # A stamp right after the same stamp reads the same and changes nothing: read runs once.
        stamped = stamped.with_columns(run=(pl.col("stamp") != pl.col("stamp").shift(1)).fill_null(True).cum_sum() - 1)
        rows = stamped.filter(pl.col("stamp") != pl.col("stamp").shift(1).fill_null(""))
        distinct = rows.get_column("stamp").unique()
        comps = _components(distinct)
        rows = rows.join(comps, on="stamp", how="left", maintain_order="left")
        self._discover(rows)
        kinds = rows.get_column("kind")
        values = self._read(rows)
        if self.found_year is None:
            self.used_year = self.used_year or bool(kinds.is_in([MD_KIND, SYS_KIND]).any())
        if self.found_date is None:
            self.used_date = self.used_date or bool((kinds == TO_KIND).any())
        out = pl.repeat(None, n, dtype=pl.Int64, eager=True)
        out = out.scatter(stamped.get_column("pos"), values.gather(stamped.get_column("run")))
        return out.cast(pl.Datetime("us")).alias("time")

    def _discover(self, rows: pl.DataFrame) -> None:
        if self.found_year is not None and self.found_date is not None:
            return
        full = rows.filter(pl.col("kind") == FULL_KIND)
        if full.height == 0:
            return
        if self.found_year is None:
            year = int(full.get_column("y")[0])
            if self.used_year and self.cli_year is None and year != self.year_assumed:
                raise Restart(year, self._first_date(full))
            self.found_year = year
            if not self.used_year:
                self.year = self.cli_year or year
        if self.found_date is None:
            date = self._first_date(full)
            if date is not None:
                if self.used_date and date != self.default.date():
                    raise Restart(self.found_year, date)
                self.found_date = date
                if not self.used_date:
                    self.date = date

    @property
    def year_assumed(self) -> int:
        return self.default.year

    @staticmethod
    def _first_date(full: pl.DataFrame) -> dt.date | None:
        for y, mo, d in full.select("y", "mo", "d").iter_rows():
            try:
                return dt.date(y, mo, d)
            except (ValueError, TypeError):
                continue
        return None

    def _read(self, rows: pl.DataFrame) -> pl.Series:
        parts: list[pl.Series] = []
        while rows.height:
            values = _values(rows, self.year, self.date)
            previous = values.shift(1).forward_fill()
            if self.last is not None:
                previous = previous.fill_null(self.last)
            kind = rows.get_column("kind")
            trigger = (((kind == MD_KIND) | (kind == SYS_KIND)) & (values < previous - _HALF_YEAR_US)) | (
                (kind == TO_KIND) & (values < previous - _HALF_DAY_US))
            trigger = trigger.fill_null(False)
            if not trigger.any():
                parts.append(values)
                last = values.drop_nulls()
                if len(last):
                    self.last = int(last[-1])
                break
            j = int(trigger.arg_true()[0])
            if j:
                parts.append(values.head(j))
            row = rows.row(j, named=True)
            value = self._roll(row, int(values[j]))
            self.last = value
            parts.append(pl.Series([value], dtype=pl.Int64))
            rows = rows.slice(j + 1)
        return pl.concat(parts) if len(parts) > 1 else (parts[0] if parts else pl.Series([], dtype=pl.Int64))

    def _roll(self, row: dict[str, object], value_us: int) -> int:
        """`TimeParser._roll_forward` on one stamp that went back (its value read without rolling)."""
        value = _from_us(value_us)
        if row["kind"] == TO_KIND:
            self.date += dt.timedelta(days=1)
            return _us(value + dt.timedelta(days=1))
        self.year += 1
        try:
            return _us(value.replace(year=self.year))
        except ValueError:
            return value_us


__all__ = ["Restart", "StreamTimes"]
