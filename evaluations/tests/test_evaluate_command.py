"""`manage.py evaluate` and `manage.py reap_rollouts`."""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from evaluations.models import Campaign
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, runner_settings, utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def eager_celery():
    """Tasks run in this process when sent, like a worker would run them."""
    from autolab_site.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = previous


def run(*args) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "nobody", "--harness", "nop"], "no model 'nobody'"),
        (["--model", "nop", "--harness", "nobody"], "no harness 'nobody'"),
        (["--model", "nop", "--harness", "nop", "--version", "9.9"], "no benchmark version '9.9'"),
        (["--model", "nop", "--harness", "nop", "--tasks", "missing_task"], "no task missing_task"),
        (["--model", "nop", "--harness", "nop", "--k", "0"], "k must be at least 1"),
    ],
)
def test_bad_input_is_refused_and_creates_nothing(args, message):
    import_examples()
    utility_entry("nop")
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert Campaign.objects.count() == 0 and Rollout.objects.count() == 0


@pytest.mark.sandbox
def test_evaluate_enqueues_and_waits(settings, tmp_path, eager_celery):
    require_sandbox()
    runner_settings(settings, tmp_path)
    import_examples()
    # Harbor's oracle needs no registration: `--model oracle --harness oracle` registers it (docs/operators.md's recipe).
    output = run("--model", "oracle", "--harness", "oracle", "--version", "examples", "--tasks", "sort8_network",
                 "--k", "2", "--backend", "bubblewrap", "--wait")
    campaign = Campaign.objects.get()
    assert (campaign.model.name, campaign.harness.name) == ("oracle", "oracle")
    assert f"campaign {campaign.pk}: 2 rollouts" in output
    assert "2/2 done finished=2" in output
    assert campaign.status == Campaign.Status.FINISHED
    rewards = sorted(campaign.rollouts.values_list("reward", flat=True))
    assert rewards == [1.0, 1.0]
    assert all(task_id for task_id in campaign.rollouts.values_list("celery_task_id", flat=True))


def test_reap_rollouts_requeues_then_fails_a_stale_rollout(settings):
    settings.RUNNER_MAX_ATTEMPTS = 2
    version = import_examples()
    model, harness = utility_entry("nop")
    from evaluations.running.campaigns import create_campaign

    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                               backend="bubblewrap", enqueue=False)
    rollout = campaign.rollouts.get()
    old = timezone.now() - timedelta(minutes=10)
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.RUNNING, heartbeat_at=old, attempts=1)

    out = StringIO()
    call_command("reap_rollouts", "--no-enqueue", stdout=out)
    assert out.getvalue().strip().startswith("1 re-queued, 0 failed, 0 cancelled")
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.QUEUED
    assert "no heartbeat" in rollout.events.last().detail

    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.RUNNING, heartbeat_at=old, attempts=2)
    call_command("reap_rollouts", "--no-enqueue", stdout=StringIO())
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.FAILED and rollout.infra_error
    assert Rollout.objects.count() == 1
    # A fresh heartbeat is left alone.
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.RUNNING, heartbeat_at=timezone.now())
    out = StringIO()
    call_command("reap_rollouts", stdout=out)
    assert out.getvalue().strip().startswith("0 re-queued, 0 failed, 0 cancelled")


@pytest.mark.sandbox
@pytest.mark.worker
def test_evaluate_sync_runs_each_rollout_in_a_process_of_its_own_and_sends_none(worker_env, worker, tmp_path):
    """A worker running beside `evaluate --sync` once took rollouts of its campaign: nothing may reach the broker.

    With `--concurrency 2` two of them run at a time, each once.
    """
    from evaluations.tests.worker_helpers import manage

    require_sandbox()
    worker.wait_ready()
    import_examples()
    utility_entry("nop")
    done = manage(worker_env, "evaluate", "--model", "nop", "--harness", "nop", "--version", "examples", "--tasks",
                  "sort8_network,ring_classifier", "--k", "2", "--backend", "bubblewrap", "--sync", "--concurrency", "2",
                  timeout=600)
    assert done.returncode == 0, done.stderr
    assert "4 finished" in done.stdout
    rollouts = list(Campaign.objects.get().rollouts.all())
    assert {r.status for r in rollouts} == {RolloutStatus.FINISHED} and all(r.reward == 0.0 for r in rollouts)
    pids = [r.worker.rpartition(":")[2] for r in rollouts]
    assert len(set(pids)) == 4, pids  # one process each
    assert all(r.attempts == 1 for r in rollouts)
    spans = sorted((r.agent_started_at, r.finished_at) for r in rollouts)
    assert any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:])), spans  # two at a time
    assert not any(r.celery_task_id for r in rollouts)
    worker.check()
    assert "evaluations.run_rollout[" not in worker.output()  # "Task evaluations.run_rollout[id] received"
