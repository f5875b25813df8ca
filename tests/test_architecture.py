"""The spine of the package, checked on its source: no import cycle, and no module importing one of a
later layer. Imports are read with `ast` (module-level and function-level; those under
`if TYPE_CHECKING:` only name types and are left out). `from pkg import name` counts as importing
`pkg.name` when that is a module, else `pkg` (its `__init__`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "logparse"
# Earliest first: a module may import its own layer and earlier ones. `grammar.check` runs the
# grammar's samples through the compiled core, so it sits above it.
LAYERS = [
    ["logparse.errors", "logparse.escape"],
    ["logparse.grammar"],
    ["logparse.store"],
    ["logparse.engine", "logparse._core"],
    ["logparse.grammar.check"],
    ["logparse.ingest"],
    ["logparse.drift"],
    ["logparse.analysis", "logparse.bench", "logparse.mining", "logparse.emulate", "logparse.gate"],
    ["logparse.fleet", "logparse.ray"],
    ["logparse.headline", "logparse.charts", "logparse.report", "logparse.export", "logparse.perf", "logparse.follow"],
    ["logparse.cli", "logparse.__main__"],
]


def module_files() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The logparse modules `name` imports at run time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typing_only = {
        id(n)
        for top in tree.body
        if isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test)
        for n in ast.walk(top)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("logparse") and target != name:
                found.add(target)
    return found


MODULES = module_files()
GRAPH = {name: imports_of(name, path, MODULES) for name, path in MODULES.items()}


def layer(name: str) -> int | None:
    """The layer of a module: the one of its longest matching prefix."""
    matches = [
        (len(prefix), i)
        for i, group in enumerate(LAYERS)
        for prefix in group
        if name == prefix or name.startswith(prefix + ".")
    ]
    return max(matches)[1] if matches else None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), edges from a package to its
    own submodules left out (an `__init__` re-exporting its modules)."""
    edges = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in edges:
        if node not in index:
            visit(node)
    return out


def test_the_graph_is_read() -> None:
    assert (
        "logparse.ingest" in GRAPH["logparse.cli.ingest"]
        or "logparse.headline" in GRAPH["logparse.cli.ingest"]
    )
    assert len(MODULES) > 100


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n != "logparse"))
def test_module_imports_no_later_layer(name: str) -> None:
    own = layer(name)
    assert own is not None, f"{name} belongs to no layer of LAYERS"
    later = sorted(t for t in GRAPH[name] if t != "logparse" and (layer(t) or 0) > own)
    assert later == [], f"{name} (layer {own}) imports a later layer: {later}"
