"""The runner end to end, in this process: example tasks with nop and oracle."""
from __future__ import annotations

import threading
from http.server import HTTPServer

import pytest

from evaluations.models import Campaign
from evaluations.running.campaigns import create_campaign
from evaluations.running.local_runs import run_campaign_sync
from evaluations.running.runner import run_rollout
from evaluations.sandbox.bubblewrap import sandbox_pids
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, runner_settings, utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


def test_oracle_and_nop_on_every_example_task(settings, tmp_path):
    require_sandbox()
    runner_settings(settings, tmp_path)
    version = import_examples()
    results = {}
    for name in ("oracle", "nop"):
        model, harness = utility_entry(name)
        campaign = create_campaign(model, harness, version, k=1, backend="bubblewrap", enqueue=False)
        assert run_campaign_sync(campaign) == {RolloutStatus.FINISHED: 3}
        campaign.refresh_from_db()
        assert campaign.status == Campaign.Status.FINISHED and campaign.finished_at
        for rollout in campaign.rollouts.select_related("task"):
            results[(name, rollout.task.name)] = rollout
            assert rollout.status == RolloutStatus.FINISHED
            assert rollout.verifier_fields, "reward.json fields are imported"
            # The trial folder moved to the artifact storage.
            assert not (settings.TRIALS_DIR / str(campaign.pk) / rollout.trial_name).exists()
            assert {"result.json", "verifier/reward.json"} <= {f["path"] for f in rollout.artifacts}
            statuses = list(rollout.events.values_list("status", flat=True))
            assert statuses[0] == RolloutStatus.QUEUED and statuses[-1] == RolloutStatus.FINISHED
            assert RolloutStatus.RUNNING in statuses and RolloutStatus.VERIFYING in statuses
            assert sandbox_pids(f"{rollout.trial_name}__env") == set()
    for task in ("count_primes", "sort8_network", "ring_classifier"):
        assert results[("nop", task)].reward == 0.0
    # The reference solutions reach the reference anchor; count_primes is
    # timed on a shared CPU, so it only has to clear the baseline well.
    assert results[("oracle", "sort8_network")].reward == pytest.approx(1.0)
    assert results[("oracle", "ring_classifier")].reward == pytest.approx(1.0, abs=0.05)
    assert results[("oracle", "count_primes")].reward > 0.3
    assert list((settings.SANDBOX_DIR).iterdir()) == []


def test_a_finished_rollout_is_not_run_again(settings, tmp_path):
    require_sandbox()
    runner_settings(settings, tmp_path)
    version = import_examples()
    model, harness = utility_entry("nop")
    campaign = create_campaign(
        model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1, backend="bubblewrap",
        enqueue=False,
    )
    rollout = campaign.rollouts.get()
    assert run_rollout(rollout.pk).status == RolloutStatus.FINISHED
    assert run_rollout(rollout.pk).status == "skipped"
    rollout.refresh_from_db()
    assert rollout.attempts == 1
    assert Rollout.objects.filter(campaign=campaign).count() == 1


def test_task_needing_a_container_fails_clearly_without_retry(settings, tmp_path):
    require_sandbox()
    runner_settings(settings, tmp_path)
    version = import_examples()
    task = version.tasks.get(name="sort8_network")
    task.gpus = 1
    task.save()
    broken = tmp_path / "sort8_gpu"
    import shutil

    shutil.copytree(task.source_path, broken)
    toml = (broken / "task.toml").read_text().replace("gpus = 0", "gpus = 1")
    (broken / "task.toml").write_text(toml)
    task.source_path = str(broken)
    task.save()
    model, harness = utility_entry("nop")
    campaign = create_campaign(model, harness, version, tasks=[task], k=1, backend="bubblewrap", enqueue=False)
    rollout = campaign.rollouts.get()
    outcome = run_rollout(rollout.pk)
    rollout.refresh_from_db()
    assert outcome.status == RolloutStatus.FAILED
    assert rollout.infra_error and rollout.attempts == 1
    assert "sort8_network: needs 1 GPU, and the bubblewrap sandbox cannot give a task GPUs" in rollout.events.last().detail


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_demo_campaigns_run_once(settings, tmp_path, monkeypatch, request):
    require_sandbox()
    runner_settings(settings, tmp_path)
    settings.STUB_LLM_PORT = free_port()
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    import_examples()
    from evaluations.demo import run_demo_campaigns
    from evaluations.running.stub_llm import stop_stub_server

    # The runner leaves the stub serving, as a worker would; later tests fork.
    request.addfinalizer(stop_stub_server)

    lines = run_demo_campaigns(tasks_version="examples", run_now=True, backend="bubblewrap")
    assert lines[0] == "demo backend: bubblewrap (as asked)"
    assert len(lines) == 4 and all("ran: 3 finished" in line for line in lines[1:]), lines
    stub = Rollout.objects.filter(model__name="scripted-stub")
    assert stub.count() == 3 and all(r.reward and r.reward > 0 for r in stub)
    assert stub.first().model.display_name == "scripted stub (not a model)" and stub.first().model.is_scripted
    again = run_demo_campaigns(tasks_version="examples", run_now=True, backend="bubblewrap")
    assert all("already finished" in line for line in again[1:]), again
    assert Rollout.objects.count() == 9


def test_a_failing_dockerfile_run_is_a_final_infrastructure_failure(settings, tmp_path):
    require_sandbox()
    runner_settings(settings, tmp_path)
    version = import_examples()
    task = version.tasks.get(name="sort8_network")
    import shutil

    broken = tmp_path / "sort8_broken"
    shutil.copytree(task.source_path, broken)
    dockerfile = broken / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo building && exit 3\n")
    task.source_path = str(broken)
    task.save()
    model, harness = utility_entry("oracle")
    campaign = create_campaign(model, harness, version, tasks=[task], k=1, backend="bubblewrap", enqueue=False)
    assert run_campaign_sync(campaign) == {RolloutStatus.FAILED: 1}
    rollout = campaign.rollouts.get()
    assert rollout.infra_error and rollout.attempts == 1
    assert rollout.exception_type == "SandboxBuildFailedError"
    assert "infrastructure error" in rollout.events.last().detail


def test_an_environment_that_cannot_start_is_retried_then_failed(settings, tmp_path):
    require_sandbox()
    runner_settings(settings, tmp_path)
    settings.RUNNER_MAX_ATTEMPTS = 3
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    settings.SANDBOX_DIR = blocker / "sandboxes"  # mkdir fails when the sandbox starts
    version = import_examples()
    model, harness = utility_entry("nop")
    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                               backend="bubblewrap", enqueue=False)
    assert run_campaign_sync(campaign) == {RolloutStatus.FAILED: 1}
    rollout = campaign.rollouts.get()
    assert rollout.attempts == 3 and rollout.infra_error
    details = list(rollout.events.values_list("detail", flat=True))
    assert sum("retry in" in detail for detail in details) == 2
    assert details[-1].startswith("infrastructure error")
    assert Rollout.objects.filter(campaign=campaign).count() == 1
    # Each failed attempt's folder was set aside, not left in the campaign folder.
    attempts = settings.TRIALS_DIR / "_attempts" / str(campaign.pk)
    assert sorted(path.name.rsplit(".", 1)[1] for path in attempts.iterdir()) == ["1", "2"]


def test_a_scripted_model_whose_port_another_program_holds_fails_clearly(settings, tmp_path, monkeypatch):
    from evaluations.demo import demo_model_and_harness
    from evaluations.running import stub_llm

    from evaluations.tests.test_stub_llm import NotTheStub

    require_sandbox()
    runner_settings(settings, tmp_path)
    other = HTTPServer(("127.0.0.1", 0), NotTheStub)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        settings.STUB_LLM_PORT = other.server_address[1]
        monkeypatch.setattr(stub_llm, "_running", None)
        version = import_examples()
        model, harness = demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub (not a model)")
        task = version.tasks.get(name="count_primes")
        campaign = create_campaign(model, harness, version, tasks=[task], k=1, backend="bubblewrap", enqueue=False)
        rollout = campaign.rollouts.get()
        outcome = run_rollout(rollout.pk)
    finally:
        other.shutdown()
        other.server_close()
    rollout.refresh_from_db()
    assert outcome.status == RolloutStatus.FAILED
    assert rollout.infra_error and rollout.n_steps == 0
    assert f"port {other.server_address[1]} on 127.0.0.1 is held by another program" in rollout.events.last().detail
