"""Engine detection: a score in [0, 1] per engine that never raises."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logparse.ingest.detect import detect_engine, score
from logparse.errors import EngineNotDetected

from conftest import FIXTURES, REAL_LOGS


def _head(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").split("\n")[:400]


def _corpus() -> list[tuple[str, Path]]:
    found = []
    for engine in ("vllm", "sglang"):
        for folder in (FIXTURES / engine, REAL_LOGS / engine):
            found.extend((engine, p) for p in sorted(folder.glob("*.log")))
    return found


@given(st.lists(st.text(max_size=300), max_size=20) | st.lists(st.binary(max_size=200).map(
    lambda b: b.decode("utf-8", "replace")), max_size=20))
def test_score_is_in_unit_interval_and_never_raises(grammar, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
    for engine in grammar.engines:
        assert 0.0 <= score(grammar, engine, lines) <= 1.0


def test_empty_input_scores_zero(grammar) -> None:  # type: ignore[no-untyped-def]
    assert all(score(grammar, e, []) == 0.0 for e in grammar.engines)
    with pytest.raises(EngineNotDetected, match="--engine"):
        detect_engine(grammar, ["just some text", "nothing engine-like"])


@pytest.mark.parametrize(("engine", "path"), _corpus(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_fixtures_and_real_logs_are_detected(grammar, engine: str, path: Path) -> None:  # type: ignore[no-untyped-def]
    head = _head(path)
    try:
        found, scores = detect_engine(grammar, head, name=path.name)
    except EngineNotDetected:
        # Excerpts made only of lines both engines print (a traceback, an access log) carry no
        # evidence; detection may refuse them but must never pick the wrong engine.
        return
    assert found == engine, scores
