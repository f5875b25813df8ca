"""What `ingest` tells a user (issue 22): one row per log when there are several, warnings for a
damaged input (and a failing exit with --strict), every engine start, the KV pool's mark and range,
the engine of an ambiguous log, and an `IngestResult` that works with `in` and `for`."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import logparse
from logparse.analysis.analyze import analyze_log
from logparse.cli import cli

from ingest_helpers import FIXTURES

REAL_VLLM = Path(__file__).resolve().parents[2].parent / "shared" / "real-logs" / "vllm"
V64 = FIXTURES / "vllm" / "gpustack-64k.log"
S64 = FIXTURES / "sglang" / "gpustack-64k.log"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def test_an_ingest_result_supports_in_and_iteration_over_kinds() -> None:
    result = logparse.ingest(V64)
    assert "engine_stats" in result and "decode_batch" not in result
    assert list(result) == list(result.tables) and len(list(result)) > 3
    assert {kind: result[kind].height for kind in result} == result.counts


@pytest.fixture()
def truncated_gz(tmp_path: Path) -> Path:
    data = gzip.compress(V64.read_bytes())
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


def test_a_truncated_gz_is_a_warning_on_stderr_and_fails_with_strict(truncated_gz: Path) -> None:
    loose = run("ingest", str(truncated_gz))
    assert loose.exit_code == 0, loose.output
    assert "warning: " in loose.stderr and "ends early or is corrupt" in loose.stderr
    strict = run("ingest", str(truncated_gz), "--strict")
    assert strict.exit_code == 1
    assert "had problems reading the input (--strict)" in strict.stderr
    clean = run("ingest", str(V64), "--strict")
    assert clean.exit_code == 0 and clean.stderr == ""


def test_many_logs_print_one_row_each_and_say_why_one_was_skipped(truncated_gz: Path, tmp_path: Path) -> None:
    unreadable = tmp_path / "missing.log"
    out = run("ingest", str(V64), str(S64), str(truncated_gz), str(unreadable))
    assert out.exit_code == 1
    assert "lines per kind" not in out.stdout  # no full headline
    rows = {line.split()[0]: line for line in out.stdout.splitlines()[2:] if line.strip()}
    assert rows[str(V64)].split()[1:3] == ["vllm", "0.26.0"] and "88.8%" in rows[str(V64)]
    assert rows[str(S64)].split()[1] == "sglang"
    assert rows[str(truncated_gz)].rstrip().endswith("input damaged")
    assert rows[str(unreadable)].rstrip().endswith("no such file")
    assert "1 of 4 logs were skipped: 1 could not be read" in out.stderr


def test_a_log_whose_engine_is_not_detected_was_read_not_unreadable(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("not a log\n")
    out = run("ingest", str(V64), str(notes))
    assert out.exit_code == 1
    assert "not recognised as an engine's log" in out.stderr and "could not be read" not in out.stderr


@pytest.mark.parametrize(("head_of", "marker_of"), [("sglang", "vllm"), ("vllm", "sglang")])
def test_an_ambiguous_log_is_typed_with_the_engine_that_types_more_of_it(
    tmp_path: Path, head_of: str, marker_of: str
) -> None:
    """A log of one engine (its head and a stats line, its marker) with a stats line of the other's
    (a second server's output in the same file): both score 1.0; the grammar that types more of the
    lines wins, and says so."""
    markers = {
        "vllm": next(line for line in V64.read_text().splitlines() if "Avg prompt throughput:" in line),
        "sglang": next(line for line in S64.read_text().splitlines() if "Decode batch" in line),
    }
    own = (V64 if head_of == "vllm" else S64).read_text().splitlines()[:120]
    path = tmp_path / "mixed.log"
    path.write_text("\n".join([markers[marker_of], markers[head_of], *own]) + "\n")
    facts = json.loads(run("ingest", str(path), "--json").stdout)
    assert facts["engine"] == head_of
    assert facts["engine_scores"][head_of] == facts["engine_scores"][marker_of] == 1.0
    text = run("ingest", str(path)).stdout
    assert f"ambiguous: the engines score alike" in text and f"read as {head_of}" in text


@pytest.mark.slow
def test_the_headline_names_every_engine_start(tmp_path: Path) -> None:
    path = tmp_path / "restarted.log"
    path.write_bytes(V64.read_bytes() + (FIXTURES / "vllm" / "gpustack-200k.log").read_bytes())
    facts = json.loads(run("ingest", str(path), "--json").stdout)
    segments = analyze_log(path).segments  # the post-mortem's own split
    assert [(s["first_line"], s["last_line"]) for s in facts["starts"]] == segments.select(
        "first_line", "last_line").rows()
    assert len(facts["starts"]) == 2 and facts["starts"][-1]["last_line"] == path.read_bytes().count(b"\n")
    text = run("ingest", str(path)).stdout
    second = facts["starts"][1]["first_line"]
    assert f"engine starts  2 (lines 1-{second - 1}, {second}-" in text
    single = json.loads(run("ingest", str(V64), "--json").stdout)
    assert len(single["starts"]) == 1 and "engine starts" not in run("ingest", str(V64)).stdout


def test_a_guessed_kv_pool_keeps_its_question_mark_in_the_headline() -> None:
    excerpt = REAL_VLLM / "005.log"  # vLLM V0: `# GPU blocks` only, the block size not printed
    if not excerpt.exists():
        pytest.skip("the shared real excerpts are not here")
    text = run("ingest", str(excerpt), "--engine", "vllm").stdout
    row = next(line for line in text.splitlines() if line.startswith("KV pool"))
    assert "?160,624 tokens" in row and "block size" in row
    summary = run("summary", str(excerpt), "--engine", "vllm").stdout
    assert "?160,624 tokens" in summary


def test_ranks_with_different_kv_pools_show_the_range_and_the_binding_minimum(tmp_path: Path) -> None:
    """The SGLang fixture with one rank's pool line edited to a smaller pool."""
    text = S64.read_text().replace(
        "TP3] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 916672",
        "TP3] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 900000",
    )
    path = tmp_path / "uneven.log"
    path.write_text(text)
    facts = json.loads(run("ingest", str(path), "--json").stdout)
    assert facts["startup"]["kv_pool_tokens"] == 900_000
    assert facts["startup"]["kv_pool_range"] == {"min": 900_000, "max": 916_672, "binding": ["TP3"]}
    # the fixture is hybrid (a Mamba pool too): its full pool is the binding rank's, not the first's
    full = next(p for p in facts["startup"]["kv_pools"] if p["pool"] == "full")
    assert full["tokens"] == 900_000
    note = "the ranks print 900,000-916,672 tokens; the smallest (TP3) binds"
    assert note in run("ingest", str(path)).stdout
    assert note in run("summary", str(path)).stdout
    assert "kv_pool_range" in facts["startup"] and json.loads(run("ingest", str(S64), "--json").stdout)[
        "startup"]["kv_pool_range"] is None
