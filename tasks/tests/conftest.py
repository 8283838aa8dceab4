"""Helpers that write small task directories for the tasks app's tests."""
from __future__ import annotations

from pathlib import Path

import pytest

GOOD_TOML = """\
version = "1.1"

[metadata]
author = "Tester"
difficulty = "easy"
domain = "{domain}"
tags = ["python", "toy"]

[agent]
timeout_sec = 600

[verifier]
timeout_sec = 60

[environment]
cpus = 1
memory_mb = 512
storage_mb = 256
gpus = 0
allow_internet = false

[optimization]
metric = "runtime_seconds"
direction = "lower"
benchmark_command = "python3 /app/bench.py"

[optimization.baseline]
score = {baseline}
method = "slow loop"

[optimization.reference]
score = 0.5
method = "fast loop"
"""


def write_task(
    root: Path,
    name: str,
    toml: str | None = None,
    instruction: str | None = "# Toy\n\nRun `python3 /app/bench.py`.\n",
    domain: str = "system_optimization",
    baseline: float = 2.0,
) -> Path:
    """A task folder under `root`; toml=None writes a valid task.toml, "" none."""
    folder = root / name
    (folder / "environment").mkdir(parents=True, exist_ok=True)
    (folder / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\n")
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\necho ok\n")
    if toml is None:
        toml = GOOD_TOML.format(domain=domain, baseline=baseline)
    if toml:
        (folder / "task.toml").write_text(toml)
    if instruction is not None:
        (folder / "instruction.md").write_text(instruction)
    return folder


@pytest.fixture
def make_task(tmp_path):
    def make(name: str = "toy", **kwargs) -> Path:
        return write_task(tmp_path / "tasks", name, **kwargs)

    return make
