"""What is done to a line's text before and after its envelope is read: colour codes off, runaway
lines cut, the decorations a terminal or Ray leaves at the end removed."""

from __future__ import annotations

import re

# Lines longer than this are only read on their first part: no engine line is this long, and it
# bounds the time spent on hostile input. The event keeps the whole raw line.
MATCH_LIMIT = 256 * 1024
# ESC-introduced sequences; caret notation (^[[...m) as pasted from terminals; and the bare
# "[1;36m" that remains when a tool strips only the ESC byte (vLLM's process prefix colour).
ANSI_RE = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\^\[\[[0-9;]*[A-Za-z]"
    r"|\[(?:[01];)?(?:3[0-7]|9[0-7]|0|1|0;0)m",
    re.ASCII,
)
# Ray deduplicates repeated lines across a cluster and says so at the end of the line; a terminal
# pane's right border ("   │") copied with the text is not part of the message either.
RAY_REPEAT_RE = re.compile(r"[ \t]*\[repeated [0-9]{1,12}x across cluster\]\Z", re.ASCII)
BORDER = "\u2502"
BLANKS = " \t"


def strip_ansi(text: str) -> str:
    """Remove terminal colour and control sequences."""
    if "\x1b" not in text and "[" not in text:
        return text
    return ANSI_RE.sub("", text)


def clean_tail(text: str) -> str:
    """`text` without Ray's repeat note, a terminal border and trailing blanks."""
    text = text.rstrip(BLANKS)
    if text.endswith(BORDER):
        text = text[:-1].rstrip(BLANKS)
    if text.endswith(" across cluster]"):
        tail = text[-64:]
        m = RAY_REPEAT_RE.search(tail)
        if m is not None:
            text = text[: len(text) - len(tail) + m.start()].rstrip(BLANKS)
    return text
