"""Take the envelope off a line, from the outside in, and find the message it carries.

`peel` reads a line (colour codes already removed) into a `Frame`:

1. At each position, after blanks: a JSON record (`container.read_record`) gives its message, which
   is read in turn from its start; otherwise the first grammar token that matches there is taken
   (with its separator) and what it tells (`ts`, `level`, `rank`, `pid`, `task`) is noted.
2. When no token matches, the rest is the message. If it holds `\\r` (tqdm redraws), its last
   non-blank segment is what a terminal shows: that segment is peeled again.
3. The message and the text it was found in lose Ray's repeat note, a terminal border and
   trailing blanks (`text.clean_tail`).

`scan` reads the text before a message found by searching (see `logparse.parse.line`): tokens from
its start as `peel` takes them, then tokens wherever they begin a word; what no token explains is
the event's `prefix`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import regex

from logparse.grammar import Envelope, Token
from logparse.parse.container import read_record
from logparse.parse.text import BLANKS, clean_tail, strip_ansi
from logparse.parse.values import int64

MAX_TOKENS = 32  # an envelope is never this deep; bounds the work on hostile input
MAX_RECORDS = 4  # JSON records inside JSON records


@dataclass(frozen=True)
class Note:
    """What one token or record told about the line."""

    ts: str | None = None
    level: str | None = None
    rank: str | None = None
    pid: int | None = None
    task: str | None = None
    source: str = ""  # the token (or "record") that told it


@dataclass
class Frame:
    """A line with its envelope read: the notes of every layer, outermost first, and the message."""

    notes: list[Note] = field(default_factory=list)
    body: str = ""
    text: str = ""  # the text the message was found in (its last layer), for searching
    outer: int = 0  # how many notes belong to layers outside `text` (records, the part before a \r)
    partial: bool = False  # a CRI "P" line: the record continues on the next line
    pending: str | None = None  # a partial line's text so far, for the next line


def note_of(token: Token, m: regex.Match[str], levels: dict[str, str] | None = None) -> Note:
    """The note of a token's match (`pid` as an int, `level` as the grammar records it)."""
    groups = m.groupdict()
    pid = groups.get("pid")
    return Note(
        ts=groups.get("ts") or None,
        level=normal_level(groups.get("level"), levels),
        rank=groups.get("rank"),
        pid=int64(int(pid)) if pid else None,
        task=groups.get("task"),
        source=token.name,
    )


def normal_level(level: str | None, levels: dict[str, str] | None) -> str | None:
    """A printed level in upper case, mapped by the grammar's `[levels]` (WARN -> WARNING)."""
    if not level:
        return None
    upper = level.strip().upper()
    return (levels or {}).get(upper, upper)


class Peeler:
    """Peels envelopes with one grammar's tokens. Build once, call `peel` per line."""

    def __init__(self, envelope: Envelope) -> None:
        self.envelope = envelope
        self.tokens = envelope.tokens
        self.levels = dict(envelope.levels)
        self._matchers = [(t, t.regex) for t in self.tokens]

    def match_token(
        self, text: str, pos: int, end: int | None = None
    ) -> tuple[Token, regex.Match[str]] | None:
        """The first token (grammar order) that matches at `pos`, within `text[:end]`."""
        stop = len(text) if end is None else end
        for token, pattern in self._matchers:
            m = pattern.match(text, pos, stop)
            if m is not None and m.end() > pos:
                return token, m
        return None

    def peel(self, text: str, pending: str | None = None) -> Frame:
        """The frame of a line whose colour codes are already removed. `pending` is the text of a
        CRI partial line before this one: this line's text continues it."""
        frame = Frame(pending=pending)
        records = 0
        while True:
            text, pos, records, again = self._take_tokens(frame, text, records)
            if frame.partial:
                return frame
            if not again:
                break
        rest = text[pos:]
        if "\r" in rest:
            segments = [s for s in rest.split("\r") if s.strip()]
            rest = segments[-1] if segments else ""
            frame.outer = len(frame.notes)
            text, pos, records, _ = self._take_tokens(frame, rest, records, records_allowed=False)
            rest = text[pos:]
        frame.text = clean_tail(text)
        frame.body = clean_tail(rest)
        frame.pending = None
        return frame

    def _take_tokens(
        self, frame: Frame, text: str, records: int, *, records_allowed: bool = True
    ) -> tuple[str, int, int, bool]:
        """Take tokens off `text` from its start. Returns (text, position reached, records read,
        whether a JSON record replaced the text, to be peeled from its start)."""
        pos = 0
        for _ in range(MAX_TOKENS):
            while pos < len(text) and text[pos] in BLANKS:
                pos += 1
            if pos >= len(text):
                break
            if text[pos] == "{" and records_allowed and records < MAX_RECORDS:
                record = read_record(text[pos:].rstrip(BLANKS), self.envelope.container)
                if record is not None:
                    frame.notes.append(
                        Note(
                            ts=record.ts,
                            level=normal_level(record.level, self.levels),
                            rank=record.rank,
                            pid=record.pid,
                            source="record",
                        )
                    )
                    frame.outer = len(frame.notes)
                    message = record.message.replace("\r\n", "\r").replace("\n", "\r")
                    return strip_ansi(message), 0, records + 1, True
            found = self.match_token(text, pos)
            if found is None:
                break
            token, m = found
            frame.notes.append(note_of(token, m, self.levels))
            pos = m.end()
            if token.partial_group is not None:
                rest = (frame.pending or "") + text[pos:]
                frame.pending = None
                if m.group(token.partial_group) == "P":
                    frame.partial, frame.pending = True, rest
                    return rest, 0, records, False
                # the runtime's layer is outside the text that is searched from now on
                frame.outer = len(frame.notes)
                text, pos = rest, 0
        return text, pos, records, False

    def scan(self, text: str) -> tuple[list[Note], str | None]:
        """The notes of the text before a found message, and what no token explains (stripped; None
        when nothing is left). Tokens are taken from the start, then wherever one begins a word."""
        notes: list[Note] = []
        pos = 0
        while True:
            while pos < len(text) and text[pos] in BLANKS:
                pos += 1
            found = self.match_token(text, pos) if pos < len(text) else None
            if found is None:
                break
            notes.append(note_of(found[0], found[1], self.levels))
            pos = found[1].end()
        leftover: list[str] = []
        run_start = pos
        while pos < len(text):
            at_word = pos == 0 or not _is_word(text[pos - 1])
            found = self.match_token(text, pos) if at_word and text[pos] not in BLANKS else None
            if found is None:
                pos += 1
                continue
            leftover.append(text[run_start:pos])
            notes.append(note_of(found[0], found[1], self.levels))
            pos = found[1].end()
            run_start = pos
        leftover.append(text[run_start:])
        prefix = " ".join(part.strip(BLANKS) for part in leftover if part.strip(BLANKS))
        return notes, prefix or None


def _is_word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")
