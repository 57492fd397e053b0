"""The layout stays readable: small modules and no import cycle."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hindsight_tools"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_is_over_500_lines() -> None:
    roots = [PACKAGE, REPO / "adapters", REPO / "benchmarks", REPO / "tests"]
    long = {
        str(path.relative_to(REPO)): lines
        for root in roots
        for path in root.rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        # module-level imports only: an import inside a function runs after loading, and is
        # how a command defers what it may not need
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module in modules:
                graph[name].add(node.module)
                graph[name].update(
                    f"{node.module}.{alias.name}"
                    for alias in node.names
                    if f"{node.module}.{alias.name}" in modules
                )
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
    return graph


def test_there_is_no_import_cycle() -> None:
    graph = _import_graph()
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_graph_sees_real_imports() -> None:
    # guards the two tests above against passing on a graph that reads nothing
    graph = _import_graph()
    assert "hindsight_tools.engine.core" in graph["hindsight_tools.engine.sync"]
    assert "hindsight_tools.recall.arms.filters" in graph["hindsight_tools.recall.pipeline"]
