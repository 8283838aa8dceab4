"""No import cycles among the project's modules, counting imports inside functions.

Python tolerates a cycle hidden in a function-level import, but a reader
cannot: the runner's modules once imported each other in a circle that way.
The graph is read from the source (ast), so every import counts, wherever
it is written.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autolab_site", "evaluations", "tasks", "trajectories", "submissions")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "tests" in path.parts or "migrations" in path.parts:
                continue
            found[module_name(path)] = path
    return found


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for candidate in candidates:
            # The deepest project module the import names (a.b.c -> a.b if c is a function).
            while candidate and candidate not in modules:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected set of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_find_cycles_finds_a_cycle_through_a_function_level_import(tmp_path):
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    modules = project_modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    # Packages import their own modules (Django's app loading, re-exports): not cycles of ours.
    for name in graph:
        graph[name] = {target for target in graph[name] if not name.startswith(target + ".") and target != name}
    assert find_cycles(graph) == []
