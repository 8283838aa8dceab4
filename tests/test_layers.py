"""The apps' layers hold (pyproject.toml's import-linter contract): an app imports only the layers below it.

submissions (outside teams' results) over evaluations (leaderboard, runner) over trajectories (rollouts and steps) over
agents and tasks (who is evaluated, on what) over autolab_site (the project's
library). Tests are held to it too: a test may reach down, never up.
Inside evaluations the same holds by package (results over boards and
regrades over running over sandbox), and inside its boards by module. An
import inside a function counts as one at the top of a module: hiding an
upward import in a function does not pass.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("autolab_site", "agents", "tasks", "trajectories", "evaluations", "submissions")
LINT = Path(sys.executable).parent / "lint-imports"


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=600)


def test_the_layers_hold():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


PROBES = [
    # An upward import: trajectories reaching into evaluations.
    ("trajectories/probe.py", "from evaluations.boards import serving  # noqa: F401\n",
     "trajectories is not allowed to import evaluations"),
    # The board reaching up into a team's submissions.
    ("evaluations/probe.py", "from submissions import services  # noqa: F401\n",
     "evaluations is not allowed to import submissions"),
    # The leaderboard's arithmetic reaching for Django.
    ("evaluations/figures/probe.py", "from django.db import models  # noqa: F401\n",
     "evaluations.figures is not allowed to import django"),
    # The sandbox reaching up into regrades, hidden in a function.
    ("evaluations/sandbox/probe.py", "def hidden():\n    from evaluations.regrades import regrading  # noqa: F401\n",
     "evaluations.sandbox is not allowed to import evaluations.regrades"),
    # What a rollout contributes reaching up for the cache (the module replaced by the probe).
    ("evaluations/boards/counting.py", "def hidden():\n    from evaluations.boards import serving  # noqa: F401\n",
     "evaluations.boards.counting is not allowed to import evaluations.boards.serving"),
]


@pytest.mark.parametrize(
    "probe, source, message", PROBES, ids=["upward", "submissions-upward", "figures-django", "function-level-upward", "boards-upward"]
)
def test_a_breaking_import_breaks_them(tmp_path, probe, source, message):
    """The contracts can fail: a copy of the project with one import they forbid."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("migrations", "templates", "static", "*.json", "*.eval"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / probe).write_text(source)
    result = lint(tmp_path)
    assert result.returncode != 0
    assert message in result.stdout
