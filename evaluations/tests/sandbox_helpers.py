"""Shared by the sandbox and runner tests: the tiny task and skip reasons."""
from __future__ import annotations

from pathlib import Path

import pytest

TASKS = Path(__file__).resolve().parent / "tasks"
TINY_TASK = TASKS / "tiny_sum"


def require_sandbox() -> None:
    from evaluations.sandbox.bubblewrap import host_problems

    problems = host_problems()
    if problems:
        pytest.skip("bubblewrap sandbox unavailable: " + "; ".join(problems))
