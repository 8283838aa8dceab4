"""The example tasks in examples/tasks/ run end to end on the host.

Each task's /app is laid out from its Dockerfile's COPY lines in a temporary
directory, and the scripts get APP_DIR/TESTS_DIR/LOGS_DIR pointing there, as
they would see /app, /tests and /logs in a sandbox. The starter must score 0,
the reference solution about its anchor's score, and a modified read-only
file 0 with the reason.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tasks.scoring import normalised_score
from tasks.spec import TaskSpec
from tasks.taskdir import parse_task_dir

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"

# name: (expected category, reward of the reference solution, tolerance, a read-only file)
EXPECTED = {
    # Runtime is noisy; the reference anchor scores 0.5 and the oracle is
    # about 150x faster than the starter, so it lands well above 0.3.
    "count_primes": ("system_optimization", 0.55, 0.2, "bench.py"),
    "sort8_network": ("puzzle_and_challenge", 1.0, 1e-9, "check.py"),
    "ring_classifier": ("model_development", 1.0, 0.05, "data/train.csv"),
}


def lay_out_app(task_dir: Path, app: Path) -> None:
    """Carry out the Dockerfile: only FROM, WORKDIR, ENV and COPY are allowed."""
    app.mkdir(parents=True)
    for line in (task_dir / "environment" / "Dockerfile").read_text().splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        instruction = words[0].upper()
        assert instruction in {"FROM", "WORKDIR", "ENV", "COPY"}, f"unexpected Dockerfile line: {line}"
        if instruction == "WORKDIR":
            assert words[1] == "/app"
        if instruction != "COPY":
            continue
        *sources, dest = words[1:]
        assert dest.startswith("/app/") or dest == "/app"
        target = app / dest.removeprefix("/app").lstrip("/")
        for source in sources:
            path = task_dir / "environment" / source
            destination = target / path.name if dest.endswith("/") else target
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)


class Sandbox:
    """A task laid out in a tmp dir: app/, tests/, logs/ and the solution."""

    def __init__(self, task_dir: Path, root: Path):
        self.task_dir = task_dir
        self.app = root / "app"
        self.tests = root / "tests"
        self.logs = root / "logs"
        lay_out_app(task_dir, self.app)
        shutil.copytree(task_dir / "tests", self.tests)
        self.logs.mkdir()
        self.env = {**os.environ, "APP_DIR": str(self.app), "TESTS_DIR": str(self.tests), "LOGS_DIR": str(self.logs)}

    def run(self, *command: str) -> subprocess.CompletedProcess:
        return subprocess.run(command, env=self.env, cwd=self.app, capture_output=True, text=True, timeout=120)

    def verify(self) -> tuple[dict, dict]:
        reward_file = self.logs / "verifier" / "reward.json"
        reward_file.unlink(missing_ok=True)
        done = self.run("bash", str(self.tests / "test.sh"))
        assert done.returncode == 0, done.stderr
        fields = json.loads(reward_file.read_text())
        # Like AutoLab's: a numeric reward beside fields of any type.
        assert isinstance(fields["reward"], float), fields
        return fields, fields

    def solve(self) -> None:
        done = self.run("bash", str(self.task_dir / "solution" / "solve.sh"))
        assert done.returncode == 0, done.stderr


@pytest.fixture(params=sorted(EXPECTED))
def example(request, tmp_path):
    return request.param, Sandbox(EXAMPLES / request.param, tmp_path)


def spec_of(name: str) -> TaskSpec:
    parsed = parse_task_dir(EXAMPLES / name)
    return TaskSpec(
        name=parsed.name,
        category=parsed.category,
        metric=parsed.metric,
        direction=parsed.direction,
        baseline_score=parsed.baseline_score,
        reference_score=parsed.reference_score,
        scoring_rule=parsed.scoring_rule,
    )


def test_examples_are_complete_tasks():
    # rebench/ holds the RE-Bench-style examples (test_rebench_example_tasks).
    assert sorted(path.name for path in EXAMPLES.iterdir() if path.is_dir() and path.name != "rebench") == sorted(EXPECTED)
    for name, (category, *_rest) in EXPECTED.items():
        task = parse_task_dir(EXAMPLES / name)
        assert task.category == category
        assert task.has_environment and task.has_tests and task.has_solution
        assert task.gpus == 0 and task.cpus == 1 and not task.allow_internet
        assert task.budget_sec <= 900
        assert task.benchmark_commands and task.benchmark_commands[0] in task.instruction
        # The verifier's anchors are the published ones.
        verify = (EXAMPLES / name / "tests" / "verify.py").read_text()
        baseline = float(re.search(r"^BASELINE = ([0-9.]+)$", verify, re.M).group(1))
        reference = float(re.search(r"^REFERENCE = ([0-9.]+)$", verify, re.M).group(1))
        assert (baseline, reference) == (task.baseline_score, task.reference_score), name


def test_pinned_checksums_match_the_environment():
    for name in EXPECTED:
        for line in (EXAMPLES / name / "tests" / "read_only.sha256").read_text().splitlines():
            digest, relative = line.split()
            actual = hashlib.sha256((EXAMPLES / name / "environment" / relative).read_bytes()).hexdigest()
            assert actual == digest, f"{name}: {relative} changed; update tests/read_only.sha256"


def test_starter_scores_zero(example):
    name, sandbox = example
    rewards, details = sandbox.verify()
    assert rewards["reward"] == 0.0, details
    assert details["correctness"] is True


def test_reference_solution_scores_its_anchor(example):
    name, sandbox = example
    _category, expected, tolerance, _read_only = EXPECTED[name]
    sandbox.solve()
    rewards, details = sandbox.verify()
    assert rewards["reward"] == pytest.approx(expected, abs=tolerance), details
    assert rewards["correctness"] == 1
    # The site's scoring of the metric agrees with the verifier's reward.
    assert normalised_score(spec_of(name), rewards["metric"]) == pytest.approx(rewards["reward"], abs=1e-4)


def test_local_benchmark_prints_the_metric(example):
    name, sandbox = example
    task = parse_task_dir(EXAMPLES / name)
    sandbox.solve()  # the solution is the faster run for the runtime task
    done = sandbox.run(*shlex.split(task.benchmark_commands[0].replace("/app", str(sandbox.app))))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(task.benchmark_pattern, f"cd /app && {task.benchmark_commands[0]}")
    assert re.search(task.metric_pattern, done.stdout), done.stdout


@pytest.mark.parametrize(
    "name, breaks, reason",
    [
        ("sort8_network", ("network.json", "[[0, 1], [1, 2]]\n"), "not_a_sorting_network"),
        ("count_primes", ("solve.py", "def count_primes(n):\n    return n // 2\n"), "incorrect_result"),
        ("ring_classifier", ("model.py", "def fit(X, y):\n    return None\n"), "solution_error"),
    ],
)
def test_wrong_solution_scores_zero(tmp_path, name, breaks, reason):
    sandbox = Sandbox(EXAMPLES / name, tmp_path)
    filename, text = breaks
    (sandbox.app / filename).write_text(text)
    rewards, details = sandbox.verify()
    assert rewards["reward"] == 0.0 and rewards["correctness"] == 0
    assert details["reason"] == reason


def test_modified_read_only_file_scores_zero(example):
    name, sandbox = example
    read_only = EXPECTED[name][3]
    sandbox.solve()
    with open(sandbox.app / read_only, "a") as handle:
        handle.write("\n# changed\n")
    rewards, details = sandbox.verify()
    assert rewards["reward"] == 0.0
    assert details["reason"] == "build_file_modified"
    assert details["files"] == [read_only]


def test_missing_output_file_scores_zero(example):
    name, sandbox = example
    editable = {"count_primes": "solve.py", "sort8_network": "network.json", "ring_classifier": "model.py"}[name]
    (sandbox.app / editable).unlink()
    rewards, details = sandbox.verify()
    assert rewards["reward"] == 0.0
    assert details["reason"] == "no_output_file"
