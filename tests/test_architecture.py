"""The layering of docs/ARCHITECTURE.md held as a test: model (pure) -> runtime -> overlay
-> nodes -> policies -> emulation/bench/cli, no import circles (deferred imports inside
functions included: they hid the scenario -> generators -> google_trace -> scenario
circle), and nothing in nodes, overlay or policies knowing its clock or transport."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dgdrf"
#: modules every layer may use (errors, logging, option declarations, build switches)
SHARED = {"dgdrf", "dgdrf.errors", "dgdrf.log", "dgdrf.options", "dgdrf.build_info", "dgdrf.cython_shadow"}
#: what each layer may import besides itself and SHARED
ALLOWED = {
    "model": set(),
    "runtime": {"model"},
    "overlay": {"model", "runtime"},
    "nodes": {"model", "runtime", "overlay"},
    "policies": {"model", "runtime", "overlay", "nodes"},
}
#: the runtime modules that are a clock or a transport (the layers above see only actors)
CLOCK_AND_TRANSPORT = {"dgdrf.runtime.clock", "dgdrf.runtime.transport", "dgdrf.runtime.net", "dgdrf.runtime.process"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every dgdrf module ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dgdrf" and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
    return found


GRAPH = {name: _imports(path, _modules()) for name, path in _modules().items()}


def test_no_import_circle():
    """Tarjan's strongly connected components of the import graph are all single modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w == v or w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert circles == []


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layers_import_only_downwards(layer):
    wrong = []
    for module, targets in GRAPH.items():
        if not module.startswith(f"dgdrf.{layer}.") and module != f"dgdrf.{layer}":
            continue
        for target in targets - SHARED:
            target_layer = target.split(".")[1]
            if target_layer != layer and target_layer not in ALLOWED[layer]:
                wrong.append(f"{module} imports {target}")
            if layer in ("overlay", "nodes", "policies") and target in CLOCK_AND_TRANSPORT:
                wrong.append(f"{module} imports {target} (a clock or transport)")
    assert wrong == []


def test_the_graph_sees_deferred_imports():
    """The check reads imports inside functions (else it would pass by not looking)."""
    assert "dgdrf.emulation" in GRAPH["dgdrf.cli"]  # cli imports emulation only inside its commands
