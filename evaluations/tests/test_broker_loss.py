"""Nothing is lost when the broker goes away: lost messages, a broker down at launch, leftover sandboxes."""
from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from evaluations.models import Campaign
from evaluations.running import dispatch
from evaluations.running.campaigns import create_campaign
from evaluations.running.reaper import reap
from evaluations.running.workspace import sandbox_folder, worker_name
from evaluations.running.workspace import sweep_sandboxes
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, utility_entry
from evaluations.tests.worker_helpers import BrokerNamespace, manage

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def oracle_campaign(k: int = 5) -> Campaign:
    version = import_examples()
    model, harness = utility_entry("oracle")
    return create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=k,
                           backend="bubblewrap")


def test_queued_rollouts_whose_messages_a_broker_restart_lost_are_sent_again(redis_app):
    """A Redis restart without persistence left 5 queued rollouts queued forever ("0 re-queued")."""
    namespace = redis_app
    campaign = oracle_campaign()
    assert campaign.send_report.sent and not campaign.send_report.unsent
    first_ids = set(campaign.rollouts.values_list("celery_task_id", flat=True))
    assert dispatch.waiting_task_ids() == first_ids  # five messages wait in the cpu queue

    namespace.clean()  # the restart: every message gone
    assert reap().resent == []  # not yet due: a message may be on its way
    Rollout.objects.update(due_at=timezone.now() - timedelta(minutes=10))
    report = reap()
    assert sorted(report.resent) == sorted(campaign.rollouts.values_list("pk", flat=True))
    new_ids = set(campaign.rollouts.values_list("celery_task_id", flat=True))
    assert dispatch.waiting_task_ids() == new_ids and not new_ids & first_ids
    assert reap().resent == []  # now they wait in the queue again: nothing sent twice


def test_a_late_rollout_whose_message_still_waits_is_not_sent_twice(redis_app):
    campaign = oracle_campaign(k=2)
    Rollout.objects.update(due_at=timezone.now() - timedelta(hours=3))  # a long queue, workers busy
    assert reap().resent == []
    assert len(redis_app.waiting("cpu")) == campaign.rollouts.count()


def test_evaluate_while_the_broker_is_down_queues_and_says_so_then_the_reaper_sends(worker_env, tmp_path):
    import_examples()
    utility_entry("oracle")
    down = {**worker_env, "CELERY_BROKER_URL": f"redis://127.0.0.1:{closed_port()}/0"}
    done = manage(down, "evaluate", "--model", "oracle", "--harness", "oracle", "--version", "examples",
                  "--tasks", "sort8_network,count_primes", "--k", "1", "--backend", "bubblewrap", "--no-preflight")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "is not reachable" in done.stderr and "2 rollouts are queued in the database" in done.stderr
    assert "reap_rollouts" in done.stderr
    campaign = Campaign.objects.get()
    assert campaign.status == Campaign.Status.PENDING
    assert set(campaign.rollouts.values_list("status", "celery_task_id")) == {(RolloutStatus.QUEUED, "")}

    # The broker is back: the reaper sends what waited.
    back = manage(worker_env, "reap_rollouts")
    assert back.returncode == 0, back.stderr
    assert "2 sent again" in back.stdout
    ids = set(campaign.rollouts.values_list("celery_task_id", flat=True))
    assert "" not in ids and len(BrokerNamespace.of(worker_env).waiting("cpu")) == 2


def test_a_preflight_the_broker_could_not_take_is_sent_when_it_is_back(worker_env):
    import_examples()
    utility_entry("oracle")
    down = {**worker_env, "CELERY_BROKER_URL": f"redis://127.0.0.1:{closed_port()}/0"}
    done = manage(down, "evaluate", "--model", "oracle", "--harness", "oracle", "--version", "examples",
                  "--tasks", "sort8_network", "--k", "1", "--backend", "bubblewrap")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "is not reachable" in done.stderr
    campaign = Campaign.objects.get()
    assert campaign.status == Campaign.Status.CHECKING and campaign.preflight_sent_at is None
    assert campaign.rollouts.count() == 0  # nothing is queued before its preflight passed
    back = manage(worker_env, "reap_rollouts")
    assert back.returncode == 0, back.stderr
    campaign.refresh_from_db()
    assert campaign.preflight_sent_at is not None
    queued = BrokerNamespace.of(worker_env).waiting("cpu")
    assert len(queued) == 1 and b"evaluations.preflight" in queued[0]


def test_sandbox_folders_of_rollouts_that_gave_up_are_removed(settings, tmp_path):
    settings.SANDBOX_DIR = tmp_path / "sandboxes"
    campaign = oracle_campaign(k=3)
    gave_up, running_here, running_elsewhere = campaign.rollouts.order_by("pk")
    Rollout.objects.filter(pk=gave_up.pk).update(status=RolloutStatus.FAILED, infra_error=True, attempts=3)
    Rollout.objects.filter(pk=running_here.pk).update(
        status=RolloutStatus.RUNNING, attempts=1, worker=worker_name(), heartbeat_at=timezone.now()
    )
    Rollout.objects.filter(pk=running_elsewhere.pk).update(
        status=RolloutStatus.RUNNING, attempts=2, worker="other-host:12", heartbeat_at=timezone.now()
    )
    for rollout in (gave_up, running_here, running_elsewhere):
        folder = sandbox_folder(rollout.trial_name)
        (folder / "rootfs" / "app").mkdir(parents=True)
        (folder / "rootfs" / "app" / "big.bin").write_bytes(b"x" * 1000)
    stray = settings.SANDBOX_DIR / "unknown-trial__env"
    stray.mkdir()

    swept = sweep_sandboxes()

    assert sorted(swept) == sorted(
        [f"{gave_up.trial_name}__env", f"{running_elsewhere.trial_name}__env", "unknown-trial__env"]
    )
    assert [path.name for path in settings.SANDBOX_DIR.iterdir()] == [f"{running_here.trial_name}__env"]


def test_the_reaper_removes_the_sandbox_of_a_rollout_it_fails(settings, tmp_path):
    settings.SANDBOX_DIR = tmp_path / "sandboxes"
    settings.RUNNER_MAX_ATTEMPTS = 1
    campaign = oracle_campaign(k=1)
    rollout = campaign.rollouts.get()
    Rollout.objects.filter(pk=rollout.pk).update(
        status=RolloutStatus.RUNNING, attempts=1, worker=worker_name(), heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    sandbox_folder(rollout.trial_name).mkdir(parents=True)
    report = reap(enqueue=False)
    assert report.failed == [rollout.pk]
    assert report.swept == [f"{rollout.trial_name}__env"]
    assert not sandbox_folder(rollout.trial_name).exists()


def test_a_sweep_leaves_the_verifier_of_a_running_rollout_be(settings, tmp_path):
    """Under sealed grading a trial has two sandboxes; another trial's sweep once removed the verifier's."""
    from evaluations.sandbox.staging import fresh_sandbox_folder

    settings.SANDBOX_DIR = tmp_path / "sandboxes"
    campaign = oracle_campaign(k=2)
    running, finished = campaign.rollouts.order_by("pk")
    Rollout.objects.filter(pk=running.pk).update(
        status=RolloutStatus.VERIFYING, attempts=1, worker=worker_name(), heartbeat_at=timezone.now()
    )
    Rollout.objects.filter(pk=finished.pk).update(status=RolloutStatus.FINISHED, attempts=1)
    # Harbor hashes a long session id: the folder's owner file says whose it is.
    hashed = "a-long-task-name-cut-short-by-harbor__1f2e3d4c"
    for rollout, verifier in ((running, hashed), (finished, f"{finished.trial_name}__verifier__trial")):
        for session in (f"{rollout.trial_name}__env", verifier):
            fresh_sandbox_folder(settings.SANDBOX_DIR / session, rollout.trial_name)

    swept = sweep_sandboxes()

    assert sorted(swept) == sorted([f"{finished.trial_name}__env", f"{finished.trial_name}__verifier__trial"])
    assert sorted(path.name for path in settings.SANDBOX_DIR.iterdir()) == sorted([f"{running.trial_name}__env", hashed])
