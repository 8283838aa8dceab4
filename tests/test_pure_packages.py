"""The reading and analysis packages of trajectories stay free of Django.

They are the parts a newcomer (or a script, or a notebook) can use on a trial
folder without a database: reading trial folders, ATIF, native agent logs and
Inspect logs into plain data, and analysing steps. Anything they import,
however indirectly and wherever the import is written, must be plain Python
too, so this reads the import graph from the source (as test_import_graph
does) rather than importing the modules.
"""
from __future__ import annotations

import ast

import pytest

from tests.test_import_graph import imports_of, project_modules

PURE_PACKAGES = ("trajectories.reading", "trajectories.analysis", "submissions.checks", "submissions.states")
# Project modules outside those packages that they may lean on: all Django-free.
PURE_HELPERS = {
    "tasks.spec",
    "tasks.scoring",
    "tasks.lib.numbers",
    "autolab_site.checksums",
    "autolab_site.gc_pause",
    "autolab_site.masking",
    "autolab_site.safe_files",
    "trajectories.provenance",
    "trajectories.run_environment",
}


def is_pure_package_module(name: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in PURE_PACKAGES)


def closure(start: str, modules) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(imports_of(name, modules[name], modules))
    return seen


def imports_django(path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "django"]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "django":
            found.append(node.module)
    return found


MODULES = project_modules()
PURE = sorted(name for name in MODULES if is_pure_package_module(name))


def test_the_pure_packages_exist():
    assert {"trajectories.reading.atif", "trajectories.reading.trial_folder", "trajectories.analysis.rollout"} <= set(PURE)


@pytest.mark.parametrize("name", PURE)
def test_a_pure_module_reaches_only_pure_modules(name):
    reached = closure(name, MODULES)
    outside = sorted(m for m in reached if not is_pure_package_module(m) and m not in PURE_HELPERS)
    assert outside == [], f"{name} imports (perhaps indirectly) {outside}"
    with_django = {m: imports_django(MODULES[m]) for m in reached if imports_django(MODULES[m])}
    assert with_django == {}, f"{name} reaches Django through {with_django}"


def test_the_check_sees_a_django_import(tmp_path):
    """The rule can fail: a module that imports Django, even inside a function, is caught."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from django.conf import settings\n    return settings\n")
    assert imports_django(path) == ["django.conf"]
