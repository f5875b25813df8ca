"""Threads and blocks cannot change the output: any split of a log into blocks, parsed on any number
of threads, gives exactly the tables, counts and read statistics of the log read as one block on one
thread, and one row per line.

Checked on every fixture and real-log excerpt, on every sample line of the grammars, and on
hypothesis-generated logs mixing real lines, mutated lines (new numbers and timestamps, wrappers,
colour codes, `\\r`, trailing blanks, non-ASCII, Ray suffixes, JSON and CRI containers) and junk,
read in tiny blocks so that lines meet block boundaries everywhere. (What the tables hold is checked
by the goldens, the grammar samples' expected values and the real corpora.)
"""
from __future__ import annotations

import functools
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.engine import core_available
from logparse.ingest import ingest

from ingest_helpers import assert_same_ingest, assert_same_tables, corpus, corpus_lines, sample_lines, streamed, whole

pytestmark = pytest.mark.skipif(not core_available(), reason="the compiled core is not built")


@pytest.mark.parametrize(("engine", "path"), corpus(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_fixture_and_real_log(engine: str, path: Path) -> None:
    want = whole(path, engine)
    got = ingest(path, engine=engine)
    assert_same_ingest(want, got, str(path))
    assert got.lines == sum(got.counts.values()) == got.stats.lines  # one event per line


def test_the_corpus_in_small_blocks_on_two_threads() -> None:
    typed = 0
    for engine, path in corpus():
        want = whole(path, engine)
        outcome, tables = streamed(path, engine, block_bytes=1024, workers=2)
        assert dict(outcome.counts) == dict(want.counts), path
        assert outcome.stats == want.stats, path
        assert_same_tables(want.tables, tables, str(path))
        typed += want.typed_lines
    assert typed > 1000  # the comparison is not vacuous


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_every_sample_line_of_the_grammar(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "samples.log"
    path.write_text("\n".join(sample_lines(engine)) + "\n", encoding="utf-8")
    want = whole(path, engine)
    outcome, tables = streamed(path, engine, block_bytes=257, workers=2)
    assert_same_tables(want.tables, tables, engine)
    assert want.typed_lines > len(sample_lines(engine)) // 2


# -- generated logs -----------------------------------------------------------------------------
@functools.cache
def _pool(engine: str) -> tuple[str, ...]:
    return tuple(corpus_lines(engine))


_WRAPPERS = ["2025-04-06T07:55:21.108632509Z ", "[2025-08-12T08:42:32Z] ", "vllm-1  | ", "sglang-1  | ",
             "(APIServer pid=1) ", "(EngineCore_DP0 pid=72) ", "(A pid=1) (B pid=2) ", "    ",
             "Apr 05 18:07:38 gpu4090d bash[59857]: ", "(Worker pid=3)"]
_ANSI = ["\x1b[1;36m", "\x1b[0m", "\x1b[0;0m", "[1;36m", "[0m", "^[[32m", "\x1b[2K"]
_ODD = ["\r", "\r  \r", " ", "\t", "é", "█", "\x00", " DEBUG 01-02 03:04:05 [x.py:1] ",
        " [repeated 3x across cluster]", "1,234", "nan", "-0", "99999999999999999999", "1.0", "INFO 06-05 14:58:46 ",
        "{", "}", '"', "\\", ": ", ", ", ",", ":", "\u2502", "2025-02-30 25:61:00 "]
_CONTAINERS = [
    lambda line: json.dumps({"log": line + "\n", "stream": "stdout", "time": "2026-05-12T08:01:39.331095044Z"}),
    lambda line: json.dumps({"message": line, "level": "warning", "@timestamp": 1778573299331}),
    lambda line: json.dumps({"textPayload": line, "severity": "INFO"})[:-1],  # a cut JSON record
    lambda line: f"2026-05-12T08:01:39.331095044Z stdout F {line}",
    lambda line: f"2026-05-12T08:01:39.331095044Z stdout P {line[:20]}\n2026-05-12T08:01:39.33Z stdout F {line[20:]}",
]


def _mutate(line: str, rnd: random.Random) -> str:
    how = rnd.randrange(10)
    if how == 0:  # new numbers (timestamps too: rollovers, impossible dates)
        return re.sub(r"[0-9]+", lambda m: str(rnd.randrange(10 ** len(m[0]))).zfill(len(m[0])), line)
    if how == 1:
        return rnd.choice(_WRAPPERS) + line
    if how == 2:
        pos = rnd.randrange(len(line) + 1)
        return line[:pos] + rnd.choice(_ANSI) + line[pos:]
    if how == 3:
        return line + rnd.choice([" ", "  ", "\t", " \t"])
    if how == 4:
        pos = rnd.randrange(len(line) + 1)
        return line[:pos] + rnd.choice(_ODD) + line[pos:]
    if how == 5:
        return line[: rnd.randrange(len(line) + 1)]
    if how == 7:
        return rnd.choice(_CONTAINERS)(line)
    if how == 6:  # one number replaced by an odd spelling of a number
        numbers = list(re.finditer(r"[0-9]+(?:\.[0-9]+)?", line))
        if numbers:
            m = rnd.choice(numbers)
            return line[: m.start()] + rnd.choice(["1,234", "nan", "inf", "-1", "1e5", "007", "1.0", "0.5"]) + line[m.end():]
        return line
    return line


@st.composite
def generated_log(draw: st.DrawFn, engine: str) -> bytes:
    pool = _pool(engine)
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["real", "real", "real", "mutated", "mutated", "junk", "bytes"]))
        if kind == "real":
            parts.append(rnd.choice(pool).encode())
        elif kind == "mutated":
            parts.append(_mutate(rnd.choice(pool), rnd).encode())
        elif kind == "junk":
            parts.append(draw(st.text(max_size=60)).replace("\n", " ").encode("utf-8", "surrogatepass"))
        else:
            parts.append(draw(st.binary(max_size=40)).replace(b"\n", b" "))
    text = b"\n".join(parts)
    if parts and draw(st.booleans()):
        text += b"\n"
    return text


def _check_generated(engine: str, data: bytes, block: int, year: int | None, tmp_path: Path) -> None:
    path = tmp_path / f"gen-{engine}.log"
    path.write_bytes(data)
    want = whole(path, engine, year)
    outcome, tables = streamed(path, engine, year=year, block_bytes=block, workers=2)
    assert sum(outcome.counts.values()) == outcome.stats.lines == data.count(b"\n") + (
        1 if data and not data.endswith(b"\n") else 0)
    assert dict(outcome.counts) == dict(want.counts)
    assert outcome.stats == want.stats
    assert_same_tables(want.tables, tables, engine)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(data=generated_log("sglang"), block=st.integers(32, 4096), year=st.sampled_from([None, None, 2019]))
def test_generated_sglang_logs(tmp_path: Path, data: bytes, block: int, year: int | None) -> None:
    _check_generated("sglang", data, block, year, tmp_path)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(data=generated_log("vllm"), block=st.integers(32, 4096), year=st.sampled_from([None, None, 2019]))
def test_generated_vllm_logs(tmp_path: Path, data: bytes, block: int, year: int | None) -> None:
    _check_generated("vllm", data, block, year, tmp_path)


@pytest.mark.parametrize("code", ["\x1b[0m", "[1;36m", "[0m"])
def test_a_colour_code_inside_an_anchor_still_types_the_line(code: str, tmp_path: Path) -> None:
    # The anchor is not in the line's bytes, only in its text once the colour code is removed.
    line = ("(APIServer pid=719) INFO 06-05 14:58:56 [loggers.py:271] Engine 000: Avg prompt throughput: "
            "2870.5 tokens/s, Avg generation throughput: 0.8 tokens/s, Running: 10 reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: 20.8%, Prefix cache hit rate: 0.0%")
    split = line.replace("Avg prompt throughput", f"Avg prompt{code} throughput")
    split = split.replace("Waiting: ", f"Wait{code}ing: ")
    path = tmp_path / "coloured.log"
    path.write_text(f"plain text\n{split}\n", encoding="utf-8")
    outcome, tables = streamed(path, "vllm")
    assert outcome.counts == {"engine_stats": 1, "unparsed": 1}
    assert tables["engine_stats"]["waiting"].to_list() == [0]
