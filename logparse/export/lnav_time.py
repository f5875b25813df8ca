"""Printed timestamps as lnav `timestamp-format` strings (a subset of strftime).

A stamp is read by the grammar's stamp shapes (`Envelope.stamps`); each part it holds becomes its
conversion: `%Y %m %d %H %M %S`, the fraction as `%L` / `%f` / `%N` (3, 6, 9 digits), a zone as
`%z` (or the literal `Z` / `UTC` lnav then reads as local time), an English month name as `%b`,
an epoch as `%s` / `%i` / `%6`. A fraction of another length ends the format at the seconds (lnav
reads the stamp's start); month names of other languages and nanosecond epochs give no format.
"""

from __future__ import annotations

from logparse.grammar import Envelope

_FRACTION = {3: "%L", 6: "%f", 9: "%N"}
_EPOCH = {10: "%s", 13: "%i", 16: "%6"}
_ENGLISH_MONTHS = frozenset(
    {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
)
_PLAIN = {"Y": "%Y", "m": "%m", "H": "%H", "M": "%M", "S": "%S"}


def lnav_format(envelope: Envelope, text: str) -> str | None:
    """The lnav timestamp format that reads `text`, or None when lnav cannot read it."""
    for shape in envelope.stamps:
        m = shape.regex.fullmatch(text)
        if m is None:
            continue
        spans = sorted(
            (m.start(name), m.end(name), name) for name in shape.regex.groupindex if m.group(name) is not None
        )
        out: list[str] = []
        at = 0
        for start, end, name in spans:
            conversion = _conversion(name, text[start:end])
            if conversion is None and name == "f":
                return "".join(out)  # lnav reads the stamp up to its seconds and ignores the rest
            if conversion is None:
                return None
            out.append(text[at:start].replace("%", "%%"))
            out.append(conversion)
            at = end
        out.append(text[at:].replace("%", "%%"))
        return "".join(out)
    return None


def _conversion(name: str, value: str) -> str | None:
    if name in _PLAIN:
        return _PLAIN[name]
    if name == "d":
        return "%d" if len(value) == 2 else "%e"
    if name == "f":
        return _FRACTION.get(len(value))
    if name == "mon":
        return "%b" if value.lower() in _ENGLISH_MONTHS else None
    if name == "tz":
        if value in ("Z", "UTC"):
            return value
        return "%z"
    if name == "epoch":
        return None if "." in value else _EPOCH.get(len(value))
    return None
