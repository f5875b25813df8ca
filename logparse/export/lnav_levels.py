"""logparse's levels as lnav's: the `level` map of a format and the level of a sample line.

logparse records a level as printed, in upper case, with the grammar's `[levels]` table for the
ones printed as a number or a letter (syslog priorities, glog letters). lnav has a fixed set of
levels; each word logparse records is given the lnav level of the same meaning.
"""

from __future__ import annotations

from logparse.grammar import Envelope

# The level words logparse records (the envelope's level tokens print them) and lnav's level
# of the same meaning. "DEFAULT" (Google Cloud Logging's "no level") has none.
LNAV_LEVELS: dict[str, str] = {
    "TRACE": "trace",
    "DEBUG": "debug",
    "INFO": "info",
    "NOTICE": "notice",
    "WARN": "warning",
    "WARNING": "warning",
    "ERR": "error",
    "ERROR": "error",
    "SEVERE": "error",
    "CRIT": "critical",
    "CRITICAL": "critical",
    "ALERT": "critical",
    "FATAL": "fatal",
    "EMERG": "fatal",
    "EMERGENCY": "fatal",
}


def lnav_level(recorded: str | None) -> str | None:
    """The lnav level of a level as logparse records it (None: no lnav level means it)."""
    return LNAV_LEVELS.get(recorded or "")


def level_map(envelope: Envelope) -> dict[str, str]:
    """lnav's `level` property: per lnav level, an anchored, case-insensitive regex of every way
    it is printed (the words, and the numbers and letters of `[levels]`)."""
    spellings: dict[str, list[str]] = {}
    for word, level in LNAV_LEVELS.items():
        spellings.setdefault(level, []).append(word)
    for printed, recorded in envelope.levels.items():
        mapped = LNAV_LEVELS.get(recorded)
        if mapped is not None and printed not in spellings[mapped]:
            spellings[mapped].append(printed)
    return {
        level: "(?i)^(?:" + "|".join(sorted(words, key=lambda w: (-len(w), w))) + ")$"
        for level, words in spellings.items()
    }


def printed_level(envelope: Envelope, printed: str | None) -> str | None:
    """The lnav level lnav gives a captured level text (as `level_map` reads it: a word in any
    case, or a number or letter of `[levels]`)."""
    if not printed:
        return None
    upper = printed.strip().upper()
    return lnav_level(envelope.levels.get(upper, upper))
