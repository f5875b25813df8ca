"""How each line's `time` is made (the compiled core resolves it: `core/src/time.rs`), and the facts
the ingest reports about it.

Each line's `time` comes from its most complete stamp (a wrapper's date, year and zone win over the
engine's year-less stamp); `time` is a UTC instant:

* an epoch number or a stamp with a zone is exact;
* a stamp with a date but no zone is local time in `zone` (`--tz`; default UTC, whatever the
  machine's zone),
  stated in the ingest's facts;
* a stamp without a year (vLLM's `MM-DD`, syslog's `Mon DD`) takes the year of the last full date
  printed before it; a stamp without a date (old SGLang's `HH:MM:SS`) takes that date;
* before any full date, the first full date of the log, else `--year`, else the file's modification
  time: it dates the *last* line (a log is written up to its mtime), so a run across New Year's
  Eve or midnight gets the right year and day. Such dates are `inferred` (the facts say from what);
* inside a stretch of year-less stamps a step back of more than half a year is a new year; of
  date-less stamps, a step back of more than 12 hours is a new day.

The log is read as a stream: a full date met late, or an mtime anchor that says the year (date)
guessed at the start was wrong, makes the core read the log again with what is now known.
"""

from __future__ import annotations

from dataclasses import dataclass

from logparse.errors import InputError

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


def check_zone(name: str) -> str:
    """`name` when it is a time zone this machine knows (an IANA name, or UTC), else `InputError`."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name == "UTC":
        return name
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown time zone {name!r}: give an IANA name such as Europe/Berlin, or UTC"
        ) from None
    return name
