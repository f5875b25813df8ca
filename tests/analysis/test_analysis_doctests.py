"""The Examples in the analysis modules' docstrings run and print what they show."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["samples", "phases", "windows", "degradation", "prefill", "coldstart", "fleet"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"logparse.analysis.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
