"""The demo's real AutoLab tasks without an engine: which are imported whole, what is queued, and why none is (issue 46).

The engine's answers are stood in for; the rollouts themselves run in
test_demo_real_tasks_run.py (containers).
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluations import demo
from evaluations.models import Campaign
from evaluations.sandbox import backends
from evaluations.tests.test_real_tasks import EXPECTED
from tasks.models import BenchmarkVersion, Task
from tasks.real_offline import OFFLINE_REAL_TASKS
from trajectories.models import Rollout

pytestmark = pytest.mark.django_db

MISSING_STANDIN = ("ubuntu:22.04 is mapped to localhost/autolab-standin-ubuntu:bookworm (AUTOLAB_IMAGE_MIRRORS file "
                   "mirrors.txt), which is not in podman's store (scripts/build-standin-images.sh builds the project's stand-ins)")


def engine(monkeypatch, host=(), task=()):
    """podman as the demo asks it: `host` its host problems, `task` every task's."""
    fake = SimpleNamespace(host_problems=lambda: list(host), task_problems=lambda folder: list(task))
    monkeypatch.setattr(backends, "get", lambda name: fake if name == "podman" else pytest.fail(f"asked {name}"))


@pytest.fixture
def shared(real_tasks_dir) -> Path:
    return real_tasks_dir.parent.parent


def test_the_ci_figures_are_of_the_tasks_the_demo_runs():
    """One choice: CI's real-task test checks the rewards of exactly the tasks the demo runs."""
    assert sorted(EXPECTED) == sorted(OFFLINE_REAL_TASKS)


def test_without_the_shared_tasks_it_says_so_in_one_line(tmp_path):
    assert demo.run_real_demo_campaigns(tmp_path) == [
        f"real AutoLab rollouts skipped: AutoLab v1.1's task directories are not at {tmp_path / 'autolab-v1.1' / 'tasks'}"
    ]
    assert demo.import_autolab_tasks(tmp_path) == [f"no shared AutoLab tasks at {tmp_path / 'autolab' / 'tasks'}; skipped"]
    assert not Campaign.objects.exists()


@pytest.mark.shared
def test_without_podman_it_says_so_in_one_line(monkeypatch, shared):
    demo.import_autolab_tasks(shared)
    engine(monkeypatch, host=["podman is not installed"])
    assert demo.run_real_demo_campaigns(shared) == ["real AutoLab rollouts skipped: podman cannot run here (podman is not installed)"]
    assert not Campaign.objects.exists()


@pytest.mark.shared
def test_without_the_standins_it_says_so_in_one_line(monkeypatch, shared):
    demo.import_autolab_tasks(shared)
    engine(monkeypatch, task=[MISSING_STANDIN])
    [line] = demo.run_real_demo_campaigns(shared)
    assert line == (f"real AutoLab rollouts skipped: podman cannot build {OFFLINE_REAL_TASKS[0]} here ({MISSING_STANDIN}) "
                    f"(and {len(OFFLINE_REAL_TASKS) - 1} more reasons)")
    assert not Campaign.objects.exists()


@pytest.mark.shared
def test_the_real_tasks_are_imported_whole_once_and_queued_once(monkeypatch, shared):
    """The tasks the demo runs come from their whole directories (never also as task.toml alone); oracle and nop
    are queued on them in v1.1, on podman, once."""
    first = demo.import_autolab_tasks(shared)
    assert first[1] == f"AutoLab tasks the demo runs, whole, from {shared / 'autolab-v1.1' / 'tasks'}: 4 imported, 0 updated, 0 unchanged, 0 failed"
    again = demo.import_autolab_tasks(shared)
    assert all(", 0 updated, " in line and " 0 imported" in line for line in again), again
    version = BenchmarkVersion.objects.get(name="1.1")
    for name in OFFLINE_REAL_TASKS:
        task = Task.objects.get(version=version, name=name)
        assert Path(task.source_path) == shared / "autolab-v1.1" / "tasks" / name
        assert task.revisions.count() == 1

    engine(monkeypatch)
    lines = demo.run_real_demo_campaigns(shared)
    assert lines[0] == f"real AutoLab tasks on podman: {', '.join(sorted(OFFLINE_REAL_TASKS))}"
    assert [line.split(": campaign")[0] for line in lines[1:]] == [
        "demo reference solution (oracle) on AutoLab v1.1", "demo no-op baseline (nop) on AutoLab v1.1"]
    assert all(line.endswith(f"queued ({len(OFFLINE_REAL_TASKS)} rollouts)") for line in lines[1:]), lines
    campaigns = Campaign.objects.filter(version=version)
    assert sorted(c.harness.name for c in campaigns) == ["nop", "oracle"]
    assert {c.backend for c in campaigns} == {"podman"}
    assert sorted(Rollout.objects.filter(campaign__in=campaigns).values_list("task__name", flat=True)) == sorted(
        OFFLINE_REAL_TASKS * 2)

    second = demo.run_real_demo_campaigns(shared)
    assert all(line.endswith("already queued") for line in second[1:]), second
    assert Campaign.objects.count() == 2 and Rollout.objects.count() == 2 * len(OFFLINE_REAL_TASKS)
