"""`logparse/_core.pyi` says what the compiled module holds: every class, method and function it
names exists, and the dicts the core returns have exactly the keys of the stub's TypedDicts."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from conftest import FIXTURES, ROOT

from logparse import _core
from logparse.engine import compiled
from logparse.grammar import load_grammar
from logparse.ingest.reader import open_reader

STUB = ast.parse((ROOT / "logparse" / "_core.pyi").read_text(encoding="utf-8"))
CLASSES = {node.name: node for node in STUB.body if isinstance(node, ast.ClassDef)}
TYPED_DICTS = {name for name, node in CLASSES.items() if any(ast.unparse(b) == "TypedDict" for b in node.bases)}


def keys(name: str, *, required_only: bool = False) -> set[str]:
    """The keys a TypedDict of the stub declares."""
    fields = [n for n in CLASSES[name].body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    return {
        f.target.id  # type: ignore[union-attr]
        for f in fields
        if not (required_only and ast.unparse(f.annotation).startswith("NotRequired"))
    }


@pytest.mark.parametrize("name", sorted(set(CLASSES) - TYPED_DICTS))
def test_every_class_and_method_of_the_stub_exists(name: str) -> None:
    cls = getattr(_core, name)
    methods = [n.name for n in CLASSES[name].body if isinstance(n, ast.FunctionDef)]
    assert methods
    for method in methods:
        assert hasattr(cls, method), f"{name}.{method}"


def test_every_function_of_the_stub_exists() -> None:
    functions = [n.name for n in STUB.body if isinstance(n, ast.FunctionDef)]
    assert functions == ["convert"]
    assert all(callable(getattr(_core, f)) for f in functions)


@pytest.fixture(scope="module")
def vllm_core() -> Any:
    return compiled(load_grammar(), "vllm")


def test_parse_lines_gives_the_stub_shapes(vllm_core: Any) -> None:
    line = "(APIServer pid=3646) INFO 10-03 07:14:22 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s"
    event = vllm_core.parse_lines([line])[0]
    assert {"kind", "rule", "ts", "outer_ts", "engine", "rank", "pid", "level", "task", "prefix"} <= set(event)
    assert set(event["_time"]) == keys("StampParts")
    assert set(event["_frame"]) == keys("Frame")
    assert event["_frame"]["notes"] and all(set(n) == keys("Note") for n in event["_frame"]["notes"])
    assert set(vllm_core.read_stamp("2024-10-23T17:56:46Z")) == keys("StampParts")
    assert vllm_core.read_stamp("not a stamp") is None


def test_ingest_gives_the_stub_shapes(vllm_core: Any) -> None:
    log = FIXTURES / "vllm" / "gpustack-64k.log"
    reader = open_reader(log)
    out = vllm_core.ingest(reader, {"zone": "UTC"})
    assert keys("IngestOutcome", required_only=True) <= set(out) <= keys("IngestOutcome")
    assert set(out["stats"]) == keys("ReadStats") and set(reader.stats()) == keys("ReadStats")
    assert set(out["times"]) == keys("TimeFacts")
    rows = sum(batch.num_rows for batches in out["tables"].values() for batch in batches)
    assert rows == out["stats"]["lines"] == sum(out["counts"].values()) == log.read_bytes().count(b"\n") > 100
