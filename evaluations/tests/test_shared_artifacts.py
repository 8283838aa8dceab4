"""Workers on many machines: a trial's files reach the web servers through the shared artifact storage.

Two workers with trial and sandbox folders of their own, and a web process
(this test) that shares neither, find both rollouts' trial files on their pages.
"""
from __future__ import annotations

import pytest
from django.test import Client

from tasks.services import import_tasks
from trajectories import statuses
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox
from evaluations.tests.test_container_campaign import slow_task
from evaluations.tests.worker_helpers import Worker, evaluate, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


def test_two_workers_trial_files_are_on_the_pages_of_a_web_process_that_shares_neither(worker_env, tmp_path, settings):
    require_sandbox()
    report = import_tasks(slow_task(tmp_path, 4).parent, version="slow")
    assert report.ok, report.summary()
    utility_entry("oracle")
    workers = []
    for name in ("a", "b"):
        own = tmp_path / f"host-{name}"
        env = {**worker_env, "AUTOLAB_DATA_DIR": str(own), "AUTOLAB_TRIALS_DIR": str(own / "trials"),
               "AUTOLAB_SANDBOX_DIR": str(own / "sandboxes")}
        workers.append(Worker(env, tmp_path / f"worker-{name}.log"))
    try:
        for worker in workers:
            worker.wait_ready()
        evaluate(worker_env, "--model", "oracle", "--harness", "oracle", "--version", "slow", k=2)
        wait_for(lambda: not Rollout.objects.filter(status__in=statuses.ACTIVE).exists(), workers[0], 300,
                 "both rollouts to end")
    finally:
        for worker in workers:
            worker.kill()
    # The web process's own trial folder holds nothing: it reads the storage only.
    settings.TRIALS_DIR = tmp_path / "web-host" / "trials"
    rollouts = list(Rollout.objects.order_by("pk"))
    assert [r.status for r in rollouts] == [RolloutStatus.FINISHED] * 2
    assert len({r.worker.rpartition(":")[2] for r in rollouts}) == 2, "each worker ran one rollout"
    for name in ("a", "b"):  # the workers moved their trial folders away
        assert not any((tmp_path / f"host-{name}" / "trials").rglob("result.json"))
    client = Client()
    for rollout in rollouts:
        listing = client.get(f"/rollouts/{rollout.pk}/tabs/artifacts/").content.decode()
        assert "Artifacts" in listing and f"/rollouts/{rollout.pk}/files/verifier/test-stdout.txt" in listing
        stdout = client.get(f"/rollouts/{rollout.pk}/files/verifier/test-stdout.txt")
        assert stdout.status_code == 200 and stdout["Content-Type"].startswith("text/plain")
        assert b"graded 1.0" in b"".join(stdout.streaming_content)
        result = client.get(f"/rollouts/{rollout.pk}/files/result.json")
        assert result.status_code == 200 and rollout.trial_name.encode() in b"".join(result.streaming_content)
    assert client.get(f"/rollouts/{rollouts[0].pk}/files/../../etc/passwd").status_code == 404
    assert client.get(f"/rollouts/{rollouts[0].pk}/files/not-a-file.txt").status_code == 404
