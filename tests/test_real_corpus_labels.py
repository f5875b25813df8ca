"""The project's labelled real corpus (fixtures/real/corpus/<engine>) is what it says it is, and its
scorer (tests/real_corpus.py) can fail.

Every excerpt is listed in SOURCES.tsv with the public thread it was pasted in; every line has a
label (listed, or `unparsed`, counted in the file's totals); the numbers and stamps of a label are
printed on its line (labels are read off the lines, never off logparse's output).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES
from real_corpus import load_labels, score

CORPUS = FIXTURES / "real" / "corpus"
ENGINES = ["vllm", "sglang"]
NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _objects(engine: str) -> list[dict]:
    return [json.loads(t) for t in (CORPUS / engine / "labels.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_excerpt_has_a_public_source(engine: str) -> None:
    rows = (CORPUS / engine / "SOURCES.tsv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split("\t")
    assert header[:2] == ["file", "source_url"] and header[-1] == "families", header
    table = {r.split("\t")[0]: r.split("\t") for r in rows[1:] if r}
    assert set(table) == {p.name for p in (CORPUS / engine).glob("*.log")}
    for name, row in table.items():
        assert len(row) == len(header), (name, row)
        assert row[1].startswith("https://github.com/"), (name, row[1])
        assert row[-1].strip(), f"{name}: no family noted"


def test_the_corpus_holds_a_hundred_excerpts_or_more() -> None:
    assert sum(len(list((CORPUS / engine).glob("*.log"))) for engine in ENGINES) >= 100


@pytest.mark.parametrize("engine", ENGINES)
def test_every_line_has_a_label_and_the_totals_add_up(engine: str) -> None:
    objects = _objects(engine)
    totals = {o["file"]: o["totals"] for o in objects if "totals" in o}
    assert set(totals) == {p.name for p in (CORPUS / engine).glob("*.log")}
    labels = load_labels(CORPUS / engine)
    for name, counts in totals.items():
        lines = (CORPUS / engine / name).read_text(encoding="utf-8").splitlines()
        assert sum(counts.values()) == len(lines), name
        listed = labels.get(name, {})
        assert all(1 <= n <= len(lines) for n in listed), name
        per_kind = {k: sum(1 for lab in listed.values() if lab["kind"] == k) for k in counts}
        typed = sum(1 for lab in listed.values() if lab["kind"] != "unparsed")
        assert {k: v for k, v in per_kind.items() if k != "unparsed"} == {
            k: v for k, v in counts.items() if k != "unparsed"
        }, name
        assert counts.get("unparsed", 0) == len(lines) - typed, name


@pytest.mark.parametrize("engine", ENGINES)
def test_label_values_are_printed_on_their_line(engine: str) -> None:
    for obj in _objects(engine):
        if "line_no" not in obj:
            continue
        line = (CORPUS / engine / obj["file"]).read_text(encoding="utf-8").splitlines()[obj["line_no"] - 1]
        printed = {float(x) for x in NUMBER.findall(line.replace(",", ""))}
        assert obj["engine"] == engine
        for name, value in obj.items():
            if name in {"line_no"}:
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert any(abs(value - x) < 1e-9 for x in printed), (obj["file"], obj["line_no"], name, value)
            elif name in {"ts", "rank"} and value is not None:
                assert value in line, (obj["file"], obj["line_no"], name, value)


def test_the_scorer_counts_a_line_typed_as_another_kind(tmp_path: Path) -> None:
    # a real vLLM stats line labelled as an SGLang decode batch, and one left unlabelled: both are
    # typed engine_stats, so both are lines typed as a kind their label does not have
    corpus = tmp_path / "vllm"
    corpus.mkdir()
    name = "issue6737_v042_pending.log"
    shutil.copy(CORPUS / "vllm" / name, corpus / name)
    n_lines = len((corpus / name).read_text(encoding="utf-8").splitlines())
    labels = [
        {"file": name, "line_no": 1, "kind": "decode_batch", "engine": "vllm"},
        *({"file": name, "line_no": n, "kind": "engine_stats", "engine": "vllm"} for n in range(3, n_lines + 1)),
        {"file": name, "totals": {"decode_batch": 1, "engine_stats": n_lines - 2, "unparsed": 1}},
    ]
    (corpus / "labels.jsonl").write_text("".join(json.dumps(o) + "\n" for o in labels), encoding="utf-8")
    result = score(corpus)
    assert [(m.line_no, m.want, m.got) for m in result.wrong_kind] == [
        (1, "decode_batch", "engine_stats"),
        (2, "unparsed", "engine_stats"),
    ]
    assert result.wrong_by_kind() == {"engine_stats": 2}
    assert result.kind_ok == n_lines - 2 and result.kind_n == n_lines - 1


def test_the_scorer_compares_every_labelled_value(tmp_path: Path) -> None:
    corpus = tmp_path / "vllm"
    corpus.mkdir()
    name = "issue6737_v042_pending.log"
    shutil.copy(CORPUS / "vllm" / name, corpus / name)
    labels = [
        {"file": name, "line_no": 1, "kind": "engine_stats", "engine": "vllm", "gen_tps": 2136.3, "waiting": 741,
         "rank": None},
        {"file": name, "totals": {"engine_stats": 1, "unparsed": 4}},
    ]
    (corpus / "labels.jsonl").write_text("".join(json.dumps(o) + "\n" for o in labels), encoding="utf-8")
    result = score(corpus)
    assert (result.field_ok, result.field_n) == (2, 3)
    assert [(m.what, m.want, m.got) for m in result.field_misses] == [("waiting", 741, 740)]
    assert len(result.wrong_kind) == 4  # the unlabelled stats lines
