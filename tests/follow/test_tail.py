"""`ingest.tail`: a followed file hands out complete lines only, follows rotation and truncation as
`tail -F` does, ends on deletion, on stop and at the end of a pipe."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from logparse.errors import InputError
from logparse.ingest.tail import FollowedFile, FollowedPipe


def follower(path: Path, **kw: object) -> tuple[FollowedFile, threading.Event]:
    stop = threading.Event()
    return FollowedFile(path, stop=stop, poll_s=0.01, **kw), stop  # type: ignore[arg-type]


def take(stream: FollowedFile | FollowedPipe, n: int = 1 << 20) -> bytes:
    return stream.read1(n)


def test_only_complete_lines_are_handed_out(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"one\ntw")
    stream, stop = follower(log)
    assert take(stream) == b"one\n"
    with log.open("ab") as f:
        f.write(b"o\nthree")
    assert take(stream) == b"two\n"
    stop.set()
    assert take(stream) == b""
    assert any("unfinished last line" in n for n in stream.notes)


def test_a_read_of_n_bytes_gives_at_most_n(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"abcdef\n")
    stream, _ = follower(log)
    assert take(stream, 2) == b"ab" and take(stream, 100) == b"cdef\n"


def test_rotation_is_followed_and_the_old_last_line_is_ended(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"old 1\nold 2 unfinished")
    stream, _ = follower(log)
    assert take(stream) == b"old 1\n"
    log.rename(tmp_path / "a.log.1")
    log.write_bytes(b"new 1\n")
    assert take(stream) + take(stream) == b"old 2 unfinished\nnew 1\n"
    assert any("rotated" in n for n in stream.notes)
    with log.open("ab") as f:
        f.write(b"new 2\n")
    assert take(stream) == b"new 2\n"


def test_lines_written_to_the_old_file_before_the_rotation_are_read(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"1\n")
    stream, _ = follower(log)
    assert take(stream) == b"1\n"
    with log.open("ab") as f:
        f.write(b"2\n")
    log.rename(tmp_path / "a.log.1")
    log.write_bytes(b"3\n")
    assert take(stream) == b"2\n"
    assert take(stream) == b"3\n"


def test_a_file_moved_away_is_waited_for(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"1\n")
    stream, _ = follower(log)
    assert take(stream) == b"1\n"
    log.rename(tmp_path / "a.log.1")
    timer = threading.Timer(0.2, lambda: log.write_bytes(b"2\n"))
    timer.start()
    assert take(stream) == b"2\n"
    timer.join()
    assert any("moved away" in n for n in stream.notes) and any("rotated" in n for n in stream.notes)


def test_truncation_reads_from_the_start_again(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"first run line 1\nfirst run line 2\n")
    stream, _ = follower(log)
    assert take(stream) == b"first run line 1\nfirst run line 2\n"
    with log.open("r+b") as f:
        f.truncate(0)
    with log.open("ab") as f:
        f.write(b"again\n")
    assert take(stream) == b"again\n"
    assert any("truncated" in n for n in stream.notes)


def test_a_deleted_file_ends_with_its_last_line(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"1\nlast without newline")
    stream, _ = follower(log)
    assert take(stream) == b"1\n"
    log.unlink()
    assert take(stream) == b"last without newline"
    assert take(stream) == b""
    assert any("deleted" in n for n in stream.notes)


def test_stop_ends_a_wait(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"")
    stream, stop = follower(log)
    threading.Timer(0.1, stop.set).start()
    assert take(stream) == b""


def test_a_pipe_is_read_to_its_end(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    stop = threading.Event()
    with os.fdopen(read_end, "rb", buffering=0) as reader:
        stream = FollowedPipe(reader, stop=stop, poll_s=0.01)
        os.write(write_end, b"a\nb")
        assert take(stream) == b"a\n"
        os.write(write_end, b"c\nlast")
        os.close(write_end)
        got = take(stream)
        got += take(stream)
        assert got == b"bc\nlast"
        assert take(stream) == b""
    assert stream.notes[-1] == "standard input ended"


def test_head_lines_read_without_consuming(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"1\n2\n3\npartial")
    stream, _ = follower(log)
    assert stream.head_lines(2) == ["1", "2", "3"]  # read a read at a time: all there is
    assert stream.head_lines(10) == ["1", "2", "3"]
    assert take(stream) == b"1\n2\n3\n"


@pytest.mark.parametrize("make", ["missing", "folder"])
def test_what_cannot_be_followed_is_one_clear_error(tmp_path: Path, make: str) -> None:
    target = tmp_path / "x"
    if make == "folder":
        target.mkdir()
    with pytest.raises(InputError, match="no such file|is a directory"):
        follower(target)
