"""Shared test set-up: hypothesis profiles and paths."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=5_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("LOGPARSE_HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite fixtures/**/*.events from the current parser (tests/test_goldens.py)")


SHARED = ROOT.parent / "shared"
REAL_LOGS = SHARED / "real-logs"
FIXTURES = ROOT / "fixtures"


@pytest.fixture(scope="session")
def grammar():  # type: ignore[no-untyped-def]
    from logparse.grammar import load_grammar

    return load_grammar()
