"""Score logparse against the labelled real-log excerpts in ../shared (when present) and the project's
own labelled corpus (fixtures/real/corpus): kinds, fields, and precision (no line typed as a kind its
label does not have)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, REAL_LOGS, SHARED
from real_corpus import Miss, score

SCORER = SHARED / "tools" / "conformance.py"
CORPUS = FIXTURES / "real" / "corpus"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_real_logs_conformance(engine: str) -> None:
    corpus = REAL_LOGS / engine
    if not SCORER.is_file() or not corpus.is_dir():
        pytest.skip("../shared/real-logs is not beside this checkout")
    proc = subprocess.run([sys.executable, str(SCORER), str(corpus)], capture_output=True, text=True,
                          timeout=600, check=False)
    summary = proc.stdout.strip().splitlines()[-1]
    m = re.search(r"core kinds ([0-9.]+)%.*fields ([0-9.]+)%.*ingest failures ([0-9]+)", summary)
    assert m, proc.stdout + proc.stderr
    core, fields, failures = float(m[1]), float(m[2]), int(m[3])
    assert failures == 0, proc.stdout
    assert core == 100.0, proc.stdout
    assert fields >= 98.0, proc.stdout


# -- precision: a line is right or `unparsed`, never another kind (tests/real_corpus.py) --------------
def _listing(misses: list[Miss]) -> str:
    return "\n".join(map(str, misses))


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_real_logs_no_line_typed_as_a_kind_its_label_does_not_have(engine: str) -> None:
    corpus = REAL_LOGS / engine
    if not (corpus / "labels.jsonl").is_file():
        pytest.skip("../shared/real-logs is not beside this checkout")
    result = score(corpus, engine, fields=False)
    assert result.kind_pct == 100.0, _listing(result.kind_misses)
    assert not result.wrong_kind, f"{result.summary()}\n{_listing(result.wrong_kind)}"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_project_corpus_conformance(engine: str) -> None:
    # fixtures/real/corpus: excerpts of public threads this project's grammars were not written from
    # at first, labelled by hand (SOURCES.tsv); `python tests/real_corpus.py DIR -v` lists the misses
    result = score(CORPUS / engine, engine)
    assert result.files >= 40, result.summary()
    assert not result.wrong_kind, f"{result.summary()}\n{_listing(result.wrong_kind)}"
    assert result.kind_pct >= 99.0, f"{result.summary()}\n{_listing(result.kind_misses)}"
    assert result.field_pct >= 99.0, f"{result.summary()}\n{_listing(result.field_misses)}"
