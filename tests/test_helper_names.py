"""No module defines its own `_number` (or `_float`, `_int`, `_text`, `_first`) again.

Those names once stood for four meanings at once: a JSON value as a float,
a CSV cell with its error, a float as display text, a tool argument. Each
meaning now has one function named for what it does (tasks.lib.numbers,
trajectories.reading.json_data, the tool vocabulary's argument readers); a
new private copy under an old vague name is the start of the next drift.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.test_import_graph import project_modules

VAGUE = {"_number", "_num", "_float", "_int", "_text", "_first"}


def vague_definitions(path: Path) -> list[str]:
    return [
        f"{node.name} (line {node.lineno})"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in VAGUE
    ]


def test_no_module_defines_a_helper_under_a_vague_name():
    found = {name: defs for name, path in project_modules().items() if (defs := vague_definitions(path))}
    assert found == {}, f"name the helper for what it does, or use the shared one: {found}"


def test_the_check_sees_a_nested_copy(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("class C:\n    def f(self):\n        def _number(x):\n            return float(x)\n        return _number\n")
    assert vague_definitions(path) == ["_number (line 3)"]
