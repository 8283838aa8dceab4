"""An agent on a real AutoLab task: the scripted stub drives terminus-2 through discover_sorting, sealed, on each engine.

The agent side of issue 44. The stub plays a model that reads the task,
runs the task's own local verifier (`python3 /app/main.py --verify`, which
the instruction names only as a file in its table), writes the known
60-comparator network into /app/solve.py, runs the verifier again and
submits. Through the runner with sealed grading, what must hold: the steps
stream in while the trial runs; both verifier runs are recognised as
benchmark calls and read as the task's `comparator_count` (80, the
starting code's Batcher network, then 60); the best-so-far curve ends at the
metric the task's own verifier measured; the rollout page and the API show
that metric beside the reward.

discover_sorting is the cheapest real task (a small image, a verifier of
seconds); its image is the one the real-task campaigns build, reused. The
two engines' rollouts run at once, each in a forked process of its own, as a
worker's concurrency would.
"""
from __future__ import annotations

import threading

import pytest
from django.test import Client

from evaluations.demo import demo_model_and_harness
from evaluations.running.campaigns import create_campaign
from evaluations.running.local_runs import run_campaigns_sync
from evaluations.running.stub_llm import script_for_real_task, start_stub_server
from tasks import images
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks, verifier_metric
from trajectories import statuses
from trajectories.models import Rollout, RolloutStatus, Step
from trajectories.statuses import Disposition, disposition

from evaluations.tests.runner_helpers import runner_settings
from evaluations.tests.test_real_tasks import CI_MIRRORS, usable_engines

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.containers, pytest.mark.shared]

TASK = "discover_sorting"


def test_the_stub_drives_terminus_through_a_real_task(settings, tmp_path, real_tasks_dir, monkeypatch):
    engines = usable_engines()
    runner_settings(settings, tmp_path)
    monkeypatch.setenv(images.MIRRORS_VARIABLE, str(settings.BASE_DIR / CI_MIRRORS))
    report = import_tasks(real_tasks_dir / TASK, version="autolab-v1.1-real")
    assert report.ok, report.summary()
    version = BenchmarkVersion.objects.get(name="autolab-v1.1-real")
    assert version.sealed_grading
    script = script_for_real_task(
        real_tasks_dir / TASK, benchmark="python3 /app/main.py --verify", editable="/app/solve.py",
        solution="solve_optimized.py", done_pattern=r"comparators=\d+",
    )
    server = start_stub_server(port=0, scripts=[script])
    watch = LiveSteps()
    try:
        settings.STUB_LLM_PORT = server.port
        model, harness = demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub (not a model)")
        campaigns = [create_campaign(model, harness, version, k=1, backend=engine, enqueue=False) for engine in engines]
        watch.start()
        run_campaigns_sync(campaigns, own_process=True, concurrency=len(campaigns))
    finally:
        watch.stop()
        server.shutdown()

    wrong = {}
    for campaign in campaigns:
        rollout = campaign.rollouts.get()
        problems = rollout_problems(rollout, watch.seen.get(rollout.pk, 0))
        if problems:
            wrong[campaign.backend] = problems
    assert wrong == {}


class LiveSteps(threading.Thread):
    """How many steps each rollout had stored while it was still running (`seen`: rollout id -> the most)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.seen: dict[int, int] = {}
        self._done = threading.Event()

    def run(self) -> None:
        from django.db import connection

        try:
            while not self._done.wait(0.3):
                for rollout_id in Rollout.objects.filter(status__in=statuses.ACTIVE).values_list("pk", flat=True):
                    count = Step.objects.filter(rollout_id=rollout_id).count()
                    self.seen[rollout_id] = max(self.seen.get(rollout_id, 0), count)
        finally:
            connection.close()

    def stop(self) -> None:
        self._done.set()
        self.join(30)


def rollout_problems(rollout: Rollout, live_steps: int) -> list[str]:
    """What the stub's rollout on the real task got wrong: anything a model's rollout page would show amiss."""
    problems = []
    if rollout.status != RolloutStatus.FINISHED or rollout.attempts != 1:
        return [f"{rollout.status} after {rollout.attempts} attempts: {rollout.exception_message[:500]}"]
    if disposition(rollout.status, False, rollout.infra_error, rollout.excluded) != Disposition.COUNTED:
        problems.append("not counted")
    if not live_steps:
        problems.append("no steps were visible while the trial ran")
    # The task's own verifier: the known optimal network, 60 comparators, reward 1.
    metric = verifier_metric(rollout.task, rollout.verifier_fields, rollout.verifier_outputs)
    if (rollout.reward, metric) != (1.0, 60):
        problems.append(f"reward {rollout.reward}, metric {metric}: {rollout.verifier_fields}")
    # Both runs of main.py were benchmark calls, read as comparator_count; the edit between them is one.
    steps = list(Step.objects.filter(rollout=rollout).order_by("step_id"))
    readings = [(step.metric_status, step.metric_value) for step in steps if "benchmark" in step.kind_list]
    if readings != [("parsed", 80.0), ("parsed", 60.0)] or rollout.n_benchmark_calls != 2:
        problems.append(f"benchmark calls read as {readings}, {rollout.n_benchmark_calls} counted")
    kinds = [step.kind_list for step in steps]
    if not any("edit" in kind and step.diff for kind, step in zip(kinds, steps)) or not any("inspect" in k for k in kinds):
        problems.append(f"step kinds {kinds}")
    # The best-so-far curve ends where the verifier measured.
    curve = [(point["metric"], point["best_metric"]) for point in rollout.curve]
    if curve != [(80.0, 80.0), (60.0, 60.0)] or rollout.best_metric != metric:
        problems.append(f"curve {curve}, best {rollout.best_metric}")
    # The rollout's page and the API show the metric beside the reward.
    client = Client()
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    if 'id="verifier-metric"' not in page or "comparator_count 60" not in page:
        problems.append("the rollout page does not show comparator_count 60")
    record = next(r for r in client.get("/api/v1/rollouts/").json()["results"] if r["id"] == rollout.pk)
    if (record["reward"], record["metric"]) != (1.0, 60):
        problems.append(f"API reward {record['reward']}, metric {record['metric']}")
    return problems
