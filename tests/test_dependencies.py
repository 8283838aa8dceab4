"""Every runtime dependency pyproject.toml declares is used, and says how: a table, one row each.

pandas was declared and imported nowhere (60 MB in every image), and so
was the docker SDK (every engine call goes through the engine's CLI, as
Harbor's own environments do, the same way for podman and docker). A
dependency is either imported by the project's code (its import name, found
in the source) or used another way, said here.
"""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autolab_site", "agents", "tasks", "trajectories", "evaluations", "submissions")

# distribution -> its import name, or how it is used when nothing imports it.
USES = {
    "django": "django",
    "celery": "celery",
    "redis": "celery's and the cache's Redis client (CELERY_BROKER_URL, CACHE_URL)",
    "harbor": "harbor",
    "numpy": "numpy",
    "gunicorn": "the web server (Dockerfile, scripts/demo.sh)",
    "whitenoise": "whitenoise",
    "psycopg": "Django's PostgreSQL backend (DATABASE_URL)",
    "dj-database-url": "dj_database_url",
    "markdown": "markdown",
    "nh3": "nh3",
    "podman-compose": "Harbor's podman environment runs it as a command",
    "inspect-ai": "inspect_ai",
}


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {re.split(r"[\[<>=!~ ]", requirement, maxsplit=1)[0].lower() for requirement in project["dependencies"]}


def imported() -> set[str]:
    names = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def test_each_dependency_has_its_use():
    assert declared() == set(USES)


def test_each_dependency_said_to_be_imported_is():
    modules = {use for use in USES.values() if use.isidentifier()}
    assert modules - imported() == set()
