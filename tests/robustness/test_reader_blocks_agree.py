"""The core's reader (`iter_lines`) against an oracle written from the documented rules, for any
bytes, any cap on line length, any block size and any way the stream hands its bytes over."""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from logparse.ingest import reader
from logparse.ingest.reader import ReadStats, iter_lines


class Dribble(io.RawIOBase):
    """A stream that hands over at most the next of `sizes` (cycled) bytes per read, like a pipe."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        super().__init__()
        self.data, self.sizes, self.pos, self.i = data, sizes, 0, 0

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        size = self.sizes[self.i % len(self.sizes)]
        self.i += 1
        chunk = self.data[self.pos:self.pos + min(size, n if n > 0 else size)]
        self.pos += len(chunk)
        return chunk

    read = read1  # type: ignore[assignment]


@dataclass
class Expected:
    """What the documented rules say a byte string reads as."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    stats: ReadStats = field(default_factory=ReadStats)


def oracle(data: bytes, limit: int) -> Expected:
    """The rules, one line at a time: split on `\\n`; a line over `limit` bytes keeps its first
    `limit`; then one trailing `\\r` goes; non-UTF-8 bytes become U+FFFD."""
    out = Expected()
    stats = out.stats
    pieces = data.split(b"\n")
    unended = pieces.pop()  # what follows the last newline: a last line without one, or nothing
    stats.truncated_last_line = bool(unended)
    for line_no, raw in enumerate(pieces + ([unended] if unended else []), 1):
        if len(raw) > limit:
            stats.long_lines += 1
            stats.long_line_bytes_skipped += len(raw) - limit
            raw = raw[:limit]
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        stats.longest_line = max(stats.longest_line, len(raw))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            stats.invalid_utf8_lines += 1
            text = raw.decode("utf-8", errors="replace")
        stats.nul_lines += "\x00" in text
        out.lines.append((line_no, text))
    stats.bytes_read = len(data)
    stats.lines = len(out.lines)
    if stats.long_lines:
        cap = f"{limit:,} bytes"  # the caps drawn here are all below 1 MiB
        stats.notes.append(f"input: {stats.long_lines} line(s) longer than {cap} cut to their first {cap} "
                           f"({stats.long_line_bytes_skipped:,} bytes skipped)")
    return out


pieces = st.sampled_from([b"\n", b"\r\n", b"\r", b"\x00", b"\xff", b"\xe2\x82", b"\xe2\x82\xac", b"\xc3\xa9",
                          b"a", b"line", b"\n\n"])
read_sizes = st.lists(st.integers(1, 30), min_size=1, max_size=6)


@st.composite
def capped_logs(draw: st.DrawFn) -> tuple[bytes, int]:
    """Bytes and a cap on line length, with runs just under, at and over the cap."""
    limit = draw(st.integers(1, 16))
    near_cap = st.sampled_from([limit - 1, limit, limit + 1]) | st.integers(1, 3 * limit + 2)
    runs = near_cap.map(lambda n: b"x" * n)
    data = b"".join(draw(st.lists(pieces | runs | st.binary(max_size=12), max_size=40)))
    return data, limit


@settings(max_examples=300)
@given(log=capped_logs(), block=st.integers(1, 24), other=st.integers(1, 64), sizes=read_sizes)
@example(log=(b"", 4), block=3, other=5, sizes=[5])
@example(log=(b"abcd\r\nabcde\r\nabcdef", 4), block=3, other=1, sizes=[1])
@example(log=(b"x" * 30 + b"\n" + b"y" * 30, 5), block=64, other=7, sizes=[64])  # long lines inside one read
def test_the_reader_follows_the_rules_whatever_the_blocks(
        log: tuple[bytes, int], block: int, other: int, sizes: list[int]) -> None:
    data, limit = log
    expected = oracle(data, limit)
    with mock.patch.object(reader, "MAX_LINE_BYTES", limit), mock.patch.object(reader, "BLOCK_SIZE", block):
        stats = ReadStats()
        got = list(iter_lines(Dribble(data, sizes), stats))  # type: ignore[arg-type]
        assert got == expected.lines
        assert stats == expected.stats
    with mock.patch.object(reader, "MAX_LINE_BYTES", limit), mock.patch.object(reader, "BLOCK_SIZE", other):
        again = ReadStats()
        assert list(iter_lines(Dribble(data, sizes[::-1]), again)) == expected.lines  # type: ignore[arg-type]
        assert again == expected.stats
