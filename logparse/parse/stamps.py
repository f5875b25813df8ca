"""Read a printed timestamp into its parts, by the grammar's stamp shapes.

A stamp may lack a year (vLLM's `MM-DD HH:MM:SS`, syslog's `Mon DD`), a date (old SGLang's
`HH:MM:SS`) or a zone; what it lacks is filled later, for the whole log, by `logparse.ingest.times`.
Stamps are ranked by how complete they are: the most complete stamp of a line gives its `time`.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass

from logparse.grammar import Envelope

EPOCH_ONLY, WITH_ZONE, WITH_YEAR, MONTH_DAY, TIME_ONLY = 5, 4, 3, 2, 1


@dataclass(frozen=True)
class StampParts:
    """The parts of one printed stamp. `year`/`month`/`day` are None when not printed; `zone` is
    the UTC offset in minutes (None: not printed); `epoch_us` is set for epoch numbers only."""

    completeness: int
    year: int | None
    month: int | None
    day: int | None
    hour: int
    minute: int
    second: int
    micro: int
    zone: int | None
    epoch_us: int | None = None


def micros(fraction: str | None) -> int:
    """Microseconds of a fraction's digits ("5" -> 500000, "123456789" -> 123456)."""
    return int((fraction or "0")[:6].ljust(6, "0"))


def zone_minutes(text: str | None) -> int | None:
    """UTC offset of "Z", "UTC", "+09:00", "-0530" in minutes; None when no zone was printed."""
    if not text:
        return None
    if text in ("Z", "UTC"):
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return sign * (int(digits[:2]) * 60 + int(digits[2:4]))


def epoch_micros(text: str) -> int | None:
    """Microseconds since 1970 of an epoch number: 10 digits are seconds, 13 ms, 16 us, 19 ns."""
    if "." in text:
        whole, frac = text.split(".", 1)
        return int(whole) * 1_000_000 + micros(frac)
    digits = len(text)
    if digits == 19:
        return int(text) // 1000
    scale = {10: 1_000_000, 13: 1_000, 16: 1}.get(digits)
    return None if scale is None else int(text) * scale


def read_stamp(envelope: Envelope, text: str) -> StampParts | None:
    """The parts of `text` by the first stamp shape that matches it whole, or None."""
    for shape in envelope.stamps:
        m = shape.regex.fullmatch(text)
        if m is None:
            continue
        return _parts(envelope, m.groupdict())
    return None


def _parts(envelope: Envelope, groups: dict[str, str | None]) -> StampParts | None:
    if groups.get("epoch"):
        value = epoch_micros(groups["epoch"] or "")
        if value is None:
            return None
        return StampParts(EPOCH_ONLY, None, None, None, 0, 0, 0, 0, 0, epoch_us=value)
    month: int | None = int(m) if (m := groups.get("m")) else None
    if groups.get("mon"):
        month = envelope.months.get((groups["mon"] or "").lower().rstrip("."))
        if month is None:
            return None
    year = int(y) if (y := groups.get("Y")) else None
    day = int(d) if (d := groups.get("d")) else None
    hour, minute, second = int(groups["H"] or 0), int(groups["M"] or 0), int(groups["S"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None:
        last = calendar.monthrange(year if year is not None else 2000, month or 1)[1]
        if not 1 <= day <= last:
            return None
    zone = zone_minutes(groups.get("tz"))
    if year is not None:
        rank = WITH_ZONE if zone is not None else WITH_YEAR
    elif month is not None:
        rank = MONTH_DAY
    else:
        rank = TIME_ONLY
    return StampParts(rank, year, month, day, hour, minute, second, micros(groups.get("f")), zone)
