"""`logparse unknown`: templates of the unparsed lines, and the rules it suggests from them."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from logparse.cli import cli
from logparse.mining.drain import TemplateMiner
from logparse.mining.masking import mask_body
from logparse.ingest import ingest

REAL_LOGS = Path(__file__).resolve().parents[3] / "shared" / "real-logs"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), color=True)


def most_unparsed(engine: str) -> Path:
    """The excerpt whose labels keep the most lines `unparsed` (tracebacks, routes, NCCL...)."""
    labels = REAL_LOGS / engine / "labels.jsonl"
    if not labels.exists():
        pytest.skip(f"{labels} is not here")
    rows = labels.read_text(encoding="utf-8").splitlines()
    totals = [json.loads(line) for line in rows if '"totals"' in line]
    best = max(totals, key=lambda t: (t["totals"].get("unparsed", 0), t["file"]))
    return REAL_LOGS / engine / best["file"]


@pytest.fixture(params=["vllm", "sglang"])
def excerpt(request: pytest.FixtureRequest) -> tuple[str, Path]:
    return request.param, most_unparsed(request.param)


def test_template_counts_add_up_to_the_unparsed_count(excerpt: tuple[str, Path]) -> None:
    engine, log = excerpt
    unparsed = ingest(log, engine=engine).counts.get("unparsed", 0)
    assert unparsed >= 5, f"{log} was chosen for its unparsed lines"
    result = run("unknown", str(log), "--engine", engine, "--top", "0")
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    assert header.startswith(f"{log}: {unparsed} of ") and f"({engine})" in header
    counts = [int(m[1].replace(",", "")) for row in rows if (m := re.match(r"\s*([\d,]+)\s+(\d+)\s\s", row))]
    assert sum(counts) == unparsed and len(counts) == int(header.split("; ")[1].split()[0])
    assert all("e.g. " in row for row in rows[2::2])

    data = json.loads(run("unknown", str(log), "--engine", engine, "--top", "2", "--format", "json").stdout)
    assert sum(t["count"] for t in data["templates"]) + data["more_lines"] == unparsed == data["unparsed"]
    assert [t["count"] for t in data["templates"]] == sorted(counts, reverse=True)[:2]
    assert all(t["first_line"] >= 1 and t["example"] for t in data["templates"])


def test_suggested_rules_pass_the_check_and_type_the_lines(excerpt: tuple[str, Path], tmp_path: Path) -> None:
    engine, log = excerpt
    result = CliRunner().invoke(cli, ["unknown", str(log), "--engine", engine, "--rule", "--top", "0"])
    assert result.exit_code == 0, result.output
    rules_file = tmp_path / "suggested.toml"
    rules_file.write_text(result.stdout, encoding="utf-8")
    grammar = tomllib.loads(result.stdout)
    assert grammar["engine"] == engine and grammar["rule"]
    for rule in grammar["rule"]:
        assert rule["kind"] in grammar["kinds"] and rule["kind"] != "unparsed"
        assert rule["anchor"] and rule["sample"][0]["line"]
        assert set(rule["sample"][0]["expect"]) == set(rule.get("types", {}))
    check = run("patterns", "check", str(rules_file))
    assert check.exit_code == 0, check.output
    before = ingest(log, engine=engine).counts["unparsed"]
    after = ingest(log, engine=engine, patterns=[rules_file])
    assert after.counts.get("unparsed", 0) < before
    assert set(after.tables) >= {rule["kind"] for rule in grammar["rule"]}


def test_masks() -> None:
    body = ("Received request chatcmpl-3f2a9b1c8d7e: at 2025-02-27 04:46:39.123 from 10.0.0.1:5000 "
            "/opt/models/llama/config.json uuid 123e4567-e89b-12d3-a456-426614174000 v0.8.5.post1 "
            "comm 0x26a187b0 took 1.29s count 42, hash deadbeef12")
    assert mask_body(body).keys() == (
        "Received", "request", "<ID>:", "at", "<TS>", "from", "<IP>", "<PATH>", "uuid", "<UUID>", "<VERSION>",
        "comm", "<HEX>", "took", "<NUM>s", "count", "<NUM>,", "hash", "<HEX>")
    assert mask_body("  a\tb  ").spaces == ("  ", "\t", "  ")


def test_drain_merges_lines_that_differ_in_values() -> None:
    miner = TemplateMiner()
    for i, path in enumerate(["/docs,", "/load,", "/health,"]):
        miner.add(i + 1, f"x {path}", f"Route: {path} Methods: GET")
    miner.add(4, "y", "Traceback (most recent call last):")
    first, second = miner.clusters()
    assert (first.count, first.first_line, first.text()) == (3, 1, "Route: <*> Methods: GET")
    assert (second.count, second.text()) == (1, "Traceback (most recent call last):")


@given(st.lists(st.text(max_size=60), max_size=40))
def test_every_line_lands_in_exactly_one_template(bodies: list[str]) -> None:
    miner = TemplateMiner(max_clusters=5)
    for i, body in enumerate(bodies):
        miner.add(i + 1, body, body)
    clusters = miner.clusters()
    assert sum(c.count for c in clusters) == len(bodies) == miner.lines
    assert [c.count for c in clusters] == sorted((c.count for c in clusters), reverse=True)
    assert len(clusters) <= 6  # five, and one for the lines beyond the limit
