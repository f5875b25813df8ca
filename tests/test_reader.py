"""Reading logs: every byte sequence gives numbered lines, never an exception."""
from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logparse.errors import InputError
from logparse.ingest.reader import ReadStats, iter_lines, read_lines


class Dribble(io.RawIOBase):
    """A stream that returns its data in the chunk sizes it is given (cycled)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.pos, self.i = data, sizes or [1], 0, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        size = max(1, self.sizes[self.i % len(self.sizes)])
        self.i += 1
        chunk = self.data[self.pos:self.pos + min(size, n if n > 0 else size)]
        self.pos += len(chunk)
        return chunk


def lines_of(data: bytes) -> list[tuple[int, str]]:
    return list(iter_lines(io.BytesIO(data)))


def test_split_on_newline_only_and_drop_one_cr() -> None:
    got = lines_of(b"a\r\nb\rc\n\nlast")
    assert got == [(1, "a"), (2, "b\rc"), (3, ""), (4, "last")]


def test_trailing_newline_adds_no_line_and_truncation_is_noted() -> None:
    stats = ReadStats()
    assert list(iter_lines(io.BytesIO(b"x\ny\n"), stats)) == [(1, "x"), (2, "y")]
    assert not stats.truncated_last_line
    stats = ReadStats()
    list(iter_lines(io.BytesIO(b"x\ny"), stats))
    assert stats.truncated_last_line


def test_invalid_utf8_and_nul_are_counted_not_fatal() -> None:
    stats = ReadStats()
    got = list(iter_lines(io.BytesIO(b"ok\n\xff\xfe\x00junk\n"), stats))
    assert got[1][1] == "\ufffd\ufffd\x00junk"
    assert stats.invalid_utf8_lines == 1 and stats.nul_lines == 1


def test_empty_input_has_no_lines() -> None:
    assert lines_of(b"") == []


def test_one_megabyte_line() -> None:
    big = b"x" * (1 << 20)
    got = lines_of(b"a\n" + big + b"\nb\n")
    assert [n for n, _ in got] == [1, 2, 3] and len(got[1][1]) == 1 << 20


@given(st.binary(max_size=3000), st.lists(st.integers(1, 700), min_size=1, max_size=8))
def test_chunking_never_changes_lines(data: bytes, sizes: list[int]) -> None:
    whole = lines_of(data)
    dribbled = list(iter_lines(Dribble(data, sizes)))  # type: ignore[arg-type]
    assert dribbled == whole
    assert [n for n, _ in whole] == list(range(1, len(whole) + 1))
    # as `sed -n Np` counts: one line per \n, plus a last line without \n
    assert len(whole) == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def test_gzip_is_read_transparently(tmp_path: Path) -> None:
    path = tmp_path / "server.log.gz"
    path.write_bytes(gzip.compress(b"one\ntwo\n"))
    assert list(read_lines(path)) == [(1, "one"), (2, "two")]


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    path = tmp_path / "cut.log.gz"
    data = gzip.compress(b"".join(b"line %d\n" % i for i in range(5000)))
    path.write_bytes(data[: len(data) // 2])
    stats = ReadStats()
    got = list(read_lines(path, stats))
    assert 0 < len(got) < 5000
    assert any("ends early" in note for note in stats.notes)


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p / "missing.log", "no such file"),
    (lambda p: p, "is a directory"),
])
def test_unreadable_inputs_raise_input_error(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=message):
        list(read_lines(make(tmp_path)))
