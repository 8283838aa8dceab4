"""AutoLab v1.1's own tasks through our runner: the real verifiers and reference solutions, sealed, on podman and docker.

The runner's main test (issue 44). The real CPU tasks that run offline here
(tasks.real_offline: the demo runs the same ones), from ../shared,
unchanged, imported into a sealed version; the oracle (the task's
solution/solve.sh) and the nop (the starting code untouched) each run once
per task through a campaign, as a worker runs them, on each engine. Their
base images (ubuntu:22.04, python:3.x-slim) come from the project's
stand-ins through the mirror map CI uses (scripts/standins/mirrors.txt),
and each rollout says so.

What must hold: the oracle's reward and metric are what the task's own
verifier gives its reference solution, the nop's what it gives the
starting code; every rollout counted, once, no infrastructure error, its
stand-in recorded; the task folders as published. Their verifiers are
deterministic (why these: tasks.real_offline), so the expected figures are
exact facts of the tasks (fredkin's reference solution is not the best
known circuit: 88 gates against 53, reward 0.5333).

Both engines' rollouts share one pool of four processes, as a worker
serving both would: the images are built once per engine and reused by
the second agent (CI keeps them between runs, and does not depend on it).
"""
from __future__ import annotations

import pytest

from evaluations.running.campaigns import create_campaign
from evaluations.running.local_runs import run_campaigns_sync
from evaluations.tests.container_helpers import ENGINES, engine_problem, image_id
from evaluations.tests.runner_helpers import runner_settings, utility_entry
from tasks import images
from tasks.models import BenchmarkVersion
from tasks.real_offline import OFFLINE_REAL_TASKS
from tasks.services import import_tasks, verifier_metric
from trajectories.models import RolloutStatus
from trajectories.statuses import Disposition, disposition

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.containers, pytest.mark.shared]

CI_MIRRORS = "scripts/standins/mirrors.txt"
STANDINS = ("localhost/autolab-standin-ubuntu:bookworm", "localhost/autolab-standin-python:bookworm")

# task: {agent: (reward, metric)}: what the task's own verifier gives its solution/ (oracle) and its starting code (nop).
EXPECTED = {
    "discover_sorting": {"oracle": (1.0, 60), "nop": (0.0, 80)},  # comparators
    "vliw_scheduler": {"oracle": (1.0, 1200), "nop": (0.0, 4080)},  # cycles
    "fredkin_sort_network": {"oracle": (0.5333, 88), "nop": (0.0, 128)},  # gates
    "safety_router": {"oracle": (0.625, 6241), "nop": (0.0, 16641)},  # parameters of a model trained with fixed seeds
}


def usable_engines() -> list[str]:
    """The engines here with the base image and both stand-ins; skipped with the reasons when there are none."""
    usable, reasons = [], []
    for engine in ENGINES:
        problem = engine_problem(engine) or ", ".join(
            f"the stand-in {image} is not built (ENGINE={engine} scripts/build-standin-images.sh)"
            for image in STANDINS if not image_id(engine, image)
        )
        (reasons if problem else usable).append(f"{engine}: {problem}" if problem else engine)
    if not usable:
        pytest.skip("no engine can run the real tasks here: " + "; ".join(reasons))
    return usable


def real_version(real_tasks_dir) -> BenchmarkVersion:
    for name in OFFLINE_REAL_TASKS:
        report = import_tasks(real_tasks_dir / name, version="autolab-v1.1-real")
        assert report.ok, report.summary()
    version = BenchmarkVersion.objects.get(name="autolab-v1.1-real")
    assert version.sealed_grading
    return version


def test_the_real_tasks_give_their_own_verifiers_rewards_on_each_engine(settings, tmp_path, real_tasks_dir, monkeypatch):
    engines = usable_engines()
    runner_settings(settings, tmp_path)
    monkeypatch.setenv(images.MIRRORS_VARIABLE, str(settings.BASE_DIR / CI_MIRRORS))
    version = real_version(real_tasks_dir)
    checksums = dict(version.tasks.values_list("name", "checksum"))
    campaigns = []
    for engine in engines:
        for agent in ("oracle", "nop"):
            model, harness = utility_entry(agent)
            campaigns.append(create_campaign(model, harness, version, k=1, backend=engine, enqueue=False))
    run_campaigns_sync(campaigns, own_process=True, concurrency=4)

    wrong = {}
    for campaign in campaigns:
        for rollout in campaign.rollouts.select_related("task", "harness"):
            agent, task = rollout.harness.name, rollout.task.name
            metric = verifier_metric(rollout.task, rollout.verifier_fields, rollout.verifier_outputs)
            counted = disposition(rollout.status, False, rollout.infra_error, rollout.excluded)
            reward = round(rollout.reward, 4) if rollout.reward is not None else None
            found = (rollout.status, rollout.attempts, counted, reward, metric)
            expected = (RolloutStatus.FINISHED, 1, Disposition.COUNTED, *EXPECTED[task][agent])
            used = [item["used"] for item in rollout.environment.get("substitutions", [])]
            if found != expected or len(used) != 1 or used[0] not in STANDINS:
                wrong[(campaign.backend, agent, task)] = (found, used, rollout.exception_message[:300])
    assert wrong == {}
    assert sorted(campaign.rollouts.count() for campaign in campaigns) == [len(OFFLINE_REAL_TASKS)] * len(campaigns)
    # The task folders are as published: importing them again finds each unchanged.
    for name in OFFLINE_REAL_TASKS:
        assert import_tasks(real_tasks_dir / name, version="autolab-v1.1-real").counts["unchanged"] == 1
    assert dict(version.tasks.values_list("name", "checksum")) == checksums
