"""How each line's `time` is made (issue 14): a wrapper's full UTC stamp wins over the engine's
year-less one, `time` is a UTC instant, naive stamps are read in `--tz`, the file's modification time
dates the *last* line, dates that were guessed are said so, and rollovers (midnight, New Year) count.

The engine lines are real (sglang/026.log, vllm real excerpts of `../shared/real-logs/`), with their
stamps moved to the times a case needs; the wrappers are docker's `--timestamps`.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import polars as pl
from click.testing import CliRunner

import logparse
from logparse.cli import cli

UTC = dt.UTC
SGLANG_DECODE = (
    "[{t} TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00, "
    "gen throughput (token/s): 447.31, #queue-req: 0"
)
VLLM_STATS = (
    "INFO {md} {t} metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 "
    "tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache "
    "usage: 0.0%"
)


def write(tmp_path: Path, lines: list[str], mtime: dt.datetime | None = None) -> Path:
    path = tmp_path / "server.log"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def times(result: logparse.IngestResult, kind: str) -> list[dt.datetime]:
    return result.tables[kind].sort("line_no")["time"].to_list()


def test_time_is_a_utc_instant(tmp_path: Path) -> None:
    log = write(tmp_path, [VLLM_STATS.format(md="02-28", t="21:48:18")], dt.datetime(2025, 3, 1, tzinfo=UTC))
    frame = logparse.ingest(log, engine="vllm", tz="UTC").tables["engine_stats"]
    assert frame.schema["time"] == pl.Datetime("us", "UTC")


def test_a_docker_stamp_dates_the_line_not_the_mtime(tmp_path: Path) -> None:
    lines = [
        "2026-05-12T08:01:39.331095044Z " + VLLM_STATS.format(md="05-12", t="08:01:39"),
        "2026-05-12T08:01:44.331095044Z " + VLLM_STATS.format(md="05-12", t="08:01:44"),
    ]
    log = write(tmp_path, lines, mtime=dt.datetime(2019, 6, 1, tzinfo=UTC))  # a copy touched in 2019
    result = logparse.ingest(log, engine="vllm", tz="Europe/Istanbul")  # the zone cannot matter: Z says UTC
    assert times(result, "engine_stats") == [
        dt.datetime(2026, 5, 12, 8, 1, 39, 331095, tzinfo=UTC),
        dt.datetime(2026, 5, 12, 8, 1, 44, 331095, tzinfo=UTC),
    ]
    assert result.times.year_inferred == 0 and result.times.inferred_from is None
    assert result.tables["engine_stats"]["ts"].to_list() == ["05-12 08:01:39", "05-12 08:01:44"]


def test_naive_stamps_are_read_in_the_given_zone(tmp_path: Path) -> None:
    lines = [
        "[2026-05-12 08:01:39 TP0] Decode batch. #running-req: 2, #token: 4078, token usage: 0.00, "
        "gen throughput (token/s): 447.31, #queue-req: 0"
    ]
    log = write(tmp_path, lines)
    istanbul = logparse.ingest(log, engine="sglang", tz="Europe/Istanbul")  # UTC+3
    utc = logparse.ingest(log, engine="sglang", tz="UTC")
    assert times(utc, "decode_batch") == [dt.datetime(2026, 5, 12, 8, 1, 39, tzinfo=UTC)]
    assert times(istanbul, "decode_batch") == [dt.datetime(2026, 5, 12, 5, 1, 39, tzinfo=UTC)]
    assert istanbul.times.zone == "Europe/Istanbul" and istanbul.times.naive == 1


def test_the_mtime_dates_the_last_line_across_midnight(tmp_path: Path) -> None:
    lines = [SGLANG_DECODE.format(t=t) for t in ("23:59:58", "23:59:59", "00:00:01")]
    log = write(tmp_path, lines, mtime=dt.datetime(2026, 3, 2, 0, 0, 5, tzinfo=UTC))
    result = logparse.ingest(log, engine="sglang", tz="UTC")
    assert times(result, "decode_batch") == [
        dt.datetime(2026, 3, 1, 23, 59, 58, tzinfo=UTC),
        dt.datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC),
        dt.datetime(2026, 3, 2, 0, 0, 1, tzinfo=UTC),
    ]
    assert result.times.rollovers == 1
    assert result.times.date_inferred == 3
    assert result.times.inferred_from is not None and "modification time" in result.times.inferred_from


def test_a_year_less_run_across_new_year(tmp_path: Path) -> None:
    lines = [VLLM_STATS.format(md="12-31", t="23:59:50"), VLLM_STATS.format(md="01-01", t="00:00:00")]
    log = write(tmp_path, lines, mtime=dt.datetime(2027, 1, 1, 0, 0, 3, tzinfo=UTC))
    result = logparse.ingest(log, engine="vllm", tz="UTC")
    assert [t.year for t in times(result, "engine_stats")] == [2026, 2027]
    assert result.times.year_inferred == 2 and result.times.rollovers == 1


def test_year_option_wins_over_the_mtime(tmp_path: Path) -> None:
    log = write(tmp_path, [VLLM_STATS.format(md="02-28", t="21:48:18")], dt.datetime(2019, 3, 1, tzinfo=UTC))
    result = logparse.ingest(log, engine="vllm", tz="UTC", year=2025)
    assert times(result, "engine_stats") == [dt.datetime(2025, 2, 28, 21, 48, 18, tzinfo=UTC)]
    assert result.times.inferred_from == "--year"


def test_a_full_date_later_in_the_log_dates_the_lines_before_it(tmp_path: Path) -> None:
    lines = [
        VLLM_STATS.format(md="02-28", t="21:48:18"),
        '[2024-02-28 21:48:20] INFO:     127.0.0.1:52000 - "POST /v1/completions HTTP/1.1" 200 OK',
        VLLM_STATS.format(md="02-28", t="21:48:28"),
    ]
    log = write(tmp_path, lines, mtime=dt.datetime(2026, 12, 1, tzinfo=UTC))
    result = logparse.ingest(log, engine="vllm", tz="UTC")
    assert [t.year for t in times(result, "engine_stats")] == [2024, 2024]


def test_a_last_line_before_midnight_with_an_mtime_after_it(tmp_path: Path) -> None:
    log = write(tmp_path, [SGLANG_DECODE.format(t="23:59:59")], dt.datetime(2026, 3, 2, 0, 0, 5, tzinfo=UTC))
    result = logparse.ingest(log, engine="sglang", tz="UTC")
    assert times(result, "decode_batch") == [dt.datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC)]


def test_the_headline_says_the_dates_were_inferred(tmp_path: Path) -> None:
    log = write(tmp_path, [SGLANG_DECODE.format(t="10:00:00")], dt.datetime(2026, 3, 2, 11, 0, tzinfo=UTC))
    out = CliRunner().invoke(cli, ["ingest", str(log), "--engine", "sglang", "--tz", "UTC"]).output
    assert "modification time" in out, out
