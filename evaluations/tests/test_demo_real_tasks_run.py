"""The demo runs a real AutoLab task on podman, and its oracle's reward is the verifier's and on the v1.1 board (issue 46).

What `load_demo --run-now` does for the real tasks (evaluations.demo.run_real_demo_campaigns), on one
of them to keep it short: discover_sorting, whose reference solution is 60 comparators, reward 1.0
(its figures on both engines: test_real_tasks.py). Its image is content-addressed, so one CI's
real-task test built is reused.
"""
from __future__ import annotations

import pytest
from django.core.cache import cache

from evaluations import demo
from evaluations.boards import serving
from evaluations.tests.container_helpers import require_podman
from evaluations.tests.runner_helpers import runner_settings
from evaluations.tests.test_real_tasks import CI_MIRRORS, EXPECTED
from tasks import images
from tasks.models import BenchmarkVersion
from trajectories.models import Rollout, RolloutStatus
from trajectories.services import stored_json

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.containers, pytest.mark.shared]

TASK = "discover_sorting"


def test_the_demo_runs_a_real_task_and_its_oracle_is_on_the_v11_board(settings, tmp_path, real_tasks_dir, monkeypatch):
    require_podman()
    runner_settings(settings, tmp_path)
    monkeypatch.setenv(images.MIRRORS_VARIABLE, str(settings.BASE_DIR / CI_MIRRORS))
    shared = real_tasks_dir.parent.parent
    why = demo.real_task_choice(shared, (TASK,)).why_none
    if why:
        pytest.skip(f"the demo cannot run {TASK} here: {why}")
    cache.clear()
    demo.import_autolab_tasks(shared)
    assert "225 published figures created" in demo.load_published_figures()

    lines = demo.run_real_demo_campaigns(shared, run_now=True, names=(TASK,))
    assert lines[0] == f"real AutoLab tasks on podman: {TASK}"
    assert [line.split(": campaign ")[0] for line in lines[1:]] == [
        "demo reference solution (oracle) on AutoLab v1.1", "demo no-op baseline (nop) on AutoLab v1.1"]
    assert all(line.endswith("ran: 1 finished") for line in lines[1:]), lines

    version = BenchmarkVersion.objects.get(name="1.1")
    for agent in ("oracle", "nop"):
        rollout = Rollout.objects.get(task__version=version, task__name=TASK, harness__name=agent)
        assert rollout.status == RolloutStatus.FINISHED and not rollout.infra_error, rollout.exception_message[:300]
        written = stored_json(rollout, "verifier/reward.json")  # the verifier's file, as the trial left it
        assert rollout.reward == written["reward"] == EXPECTED[TASK][agent][0]
        used = [item["used"] for item in rollout.environment.get("substitutions", [])]
        assert used == ["localhost/autolab-standin-ubuntu:bookworm"]

    oracle = Rollout.objects.get(task__version=version, task__name=TASK, harness__name="oracle")
    board = serving.build(version)  # as the boards worker would (a page never builds one)
    entry = next(e for e in board.entries if e.model == "oracle")
    task_id = next(t.id for t in board.tasks if t.name == TASK)
    assert board.cells[task_id][entry.key].scores == [oracle.reward]
    assert board.cells[task_id][entry.key].rollout_ids == [oracle.pk]
    assert len(board.published) == 17  # beside AutoLab's published rows

    # Run again: nothing new.
    again = demo.run_real_demo_campaigns(shared, run_now=True, names=(TASK,))
    assert all(line.endswith("already finished") for line in again[1:]), again
    assert Rollout.objects.filter(task__version=version).count() == 2
