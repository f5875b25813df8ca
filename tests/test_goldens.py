"""Every bundled fixture log against its golden event file (`goldens.py`); one test per log.

A changed grammar or parser that changes any event of any fixture fails here with the first lines
that differ; `pytest tests/test_goldens.py --update-goldens` accepts the new events (review the diff).
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from conftest import FIXTURES
from goldens import events_text, golden_path

LOGS = sorted([*FIXTURES.glob("vllm/*.log"), *FIXTURES.glob("sglang/*.log"), *FIXTURES.glob("real/*/*.log")])


def test_every_fixture_log_is_collected() -> None:
    assert len(LOGS) >= 20, LOGS


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(FIXTURES)) for p in LOGS])
def test_events_match_the_golden_file(log: Path, request: pytest.FixtureRequest) -> None:
    got = events_text(log)
    golden = golden_path(log)
    if request.config.getoption("--update-goldens"):
        golden.write_text(got, encoding="utf-8")
        return
    assert golden.is_file(), f"no golden file {golden}: run `pytest {__file__} --update-goldens`"
    want = golden.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(
            list(difflib.unified_diff(want.splitlines(True), got.splitlines(True), str(golden), "now"))[:40]
        )
        pytest.fail(
            f"events of {log.name} differ from {golden.name}:\n{diff}\n"
            f"if the change is meant: pytest {__file__} --update-goldens",
            pytrace=False,
        )
