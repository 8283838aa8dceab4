"""Regrading: a finished rollout's recorded outputs graded again by its task's changed verifier, on each backend.

The oracle solves sort8_network (reward 1.0); then the task's verifier is
changed to score the same work 0.25; `manage.py regrade --sync` runs the new
verifier in a fresh sandbox on what the rollout recorded, and the rollout,
its grade history, its page and the board all say 0.25, the 1.0 kept as
the history's first entry. A rollout whose recorded outputs cannot feed the
verifier is said so, and left exactly as it was.
"""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.forms.models import model_to_dict
from django.test import Client

from evaluations.boards import serving
from evaluations.regrades.regrading import verifier_version
from evaluations.running.campaigns import create_campaign
from evaluations.running.local_runs import run_campaign_sync
from tasks.services import import_tasks
from trajectories.models import Grade, Rollout, RolloutStatus

from evaluations.tests.container_helpers import require_engine
from evaluations.tests.runner_helpers import EVERY_BACKEND, EXAMPLES, runner_settings, utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox

pytestmark = pytest.mark.django_db(transaction=True)

NEW_TEST_SH = """#!/bin/bash
# The changed verifier: the same work, scored 0.25, and it says what it saw of the agent's workspace.
mkdir -p /logs/verifier
if [ -s /app/network.json ]; then seen=true; else seen=false; fi
echo "{\\"reward\\": 0.25, \\"saw_network\\": $seen}" > /logs/verifier/reward.json
echo "regraded by the new verifier"
"""


def copy_task(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    shutil.copytree(EXAMPLES / "sort8_network", root / "sort8_network")
    return root / "sort8_network"


def oracle_rollout(tmp_path: Path, backend: str) -> tuple[Rollout, Path]:
    task_dir = copy_task(tmp_path)
    report = import_tasks(task_dir.parent, version="regrade-examples")
    assert report.ok, report.summary()
    model, harness = utility_entry("oracle")
    from tasks.models import BenchmarkVersion

    version = BenchmarkVersion.objects.get(name="regrade-examples")
    campaign = create_campaign(model, harness, version, k=1, backend=backend, enqueue=False)
    assert run_campaign_sync(campaign) == {RolloutStatus.FINISHED: 1}
    return campaign.rollouts.get(), task_dir


@pytest.mark.parametrize("backend", [p for p in EVERY_BACKEND if p.values[0] in ("bubblewrap", "podman")])
def test_a_changed_verifier_regrades_the_recorded_outputs(settings, tmp_path, backend):
    if backend == "bubblewrap":
        require_sandbox()
    else:
        require_engine(backend)
    runner_settings(settings, tmp_path)
    rollout, task_dir = oracle_rollout(tmp_path, backend)
    assert rollout.reward == pytest.approx(1.0)
    version = rollout.task.version
    assert serving.build(version).entries[0].overall.avg == pytest.approx(1.0)
    before = verifier_version(task_dir)

    (task_dir / "tests" / "test.sh").write_text(NEW_TEST_SH)
    out = io.StringIO()
    call_command("regrade", str(rollout.pk), "--sync", stdout=out)
    assert f"rollout {rollout.pk} ({rollout.trial_name}): regraded, reward 0.25" in out.getvalue()

    rollout.refresh_from_db()
    assert rollout.reward == 0.25
    # The verifier saw the agent's recorded workspace, restored into its own fresh sandbox.
    assert rollout.verifier_fields == {"reward": 0.25, "saw_network": True}
    assert "regraded by the new verifier" in rollout.verifier_stdout
    original, regrade = Grade.objects.filter(rollout=rollout).order_by("pk")
    assert (original.kind, original.state, original.reward) == ("original", "done", pytest.approx(1.0))
    assert (regrade.kind, regrade.state, regrade.reward, regrade.backend) == ("regrade", "done", 0.25, backend)
    assert regrade.verifier_version == verifier_version(task_dir) != before
    assert regrade.graded_at >= original.graded_at
    # The board reads the latest grade, without waiting for its cache.
    assert serving.build(version).entries[0].overall.avg == pytest.approx(0.25)

    response = Client().get(f"/rollouts/{rollout.pk}/")
    assert response.status_code == 200, response.status_code
    page = response.content.decode()
    history = page.split('id="grades"', 1)[1].split("</section>", 1)[0]
    assert "original grade" in history and "regrade" in history and regrade.verifier_version[:12] in history
    assert history.index("1.0") < history.index("0.25")
    # The API's record carries the latest grade and where it comes from.
    (row,) = Client().get("/api/v1/rollouts/").json()["results"]
    assert (row["reward"], row["verifier_version"]) == (0.25, regrade.verifier_version)
    assert row["regraded_at"] == regrade.graded_at.isoformat()
    # Nothing of either sandbox is left behind.
    assert list(settings.SANDBOX_DIR.iterdir()) == []
    assert not (settings.TRIALS_DIR / "_regrades").exists() or not any((settings.TRIALS_DIR / "_regrades").iterdir())


def imported_rollout(settings, tmp_path) -> tuple[Rollout, dict]:
    """A finished rollout of the example task made without a run (as an import makes it: no recorded outputs), and its fields."""
    from tasks.models import Task
    from trajectories.tests import factories

    runner_settings(settings, tmp_path)
    task_dir = copy_task(tmp_path)
    import_tasks(task_dir.parent, version="regrade-examples")
    task = Task.objects.get(version__name="regrade-examples", name="sort8_network")
    rollout = factories.make_rollout(task=task, status="finished", reward=0.0, verifier_fields={"reward": 0.0})
    return rollout, model_to_dict(Rollout.objects.get(pk=rollout.pk))


def test_a_rollout_without_recorded_outputs_is_left_as_it_was(settings, tmp_path):
    """Imported rollouts keep no workspace: the command says so and changes nothing."""
    rollout, before = imported_rollout(settings, tmp_path)
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 rollouts were not regraded"):
        call_command("regrade", str(rollout.pk), "--sync", stdout=out)
    assert f"rollout {rollout.pk}: cannot be regraded, left as it was: no recorded outputs" in out.getvalue()
    assert model_to_dict(Rollout.objects.get(pk=rollout.pk)) == before
    assert not Grade.objects.exists()


def test_a_cancelled_rollout_is_neither_offered_a_regrade_nor_regraded(settings, tmp_path):
    """Its page offered Regrade and said "Graded once, by its run": its verifier never ran."""
    rollout, _ = imported_rollout(settings, tmp_path)
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.CANCELLED, reward=None, verifier_fields={})
    client, _ = staff_client(username="staff", is_staff=True)
    grades = client.get(f"/rollouts/{rollout.pk}/").content.decode().split('id="grades"', 1)[1].split("</section>", 1)[0]
    assert "regrade-form" not in grades and "Graded once" not in grades
    assert "Not graded: it was cancelled before its verifier ran" in grades
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 rollouts were not regraded"):
        call_command("regrade", str(rollout.pk), "--sync", stdout=out)
    assert "it was cancelled" in out.getvalue()
    assert not Grade.objects.exists()


def test_missing_declared_inputs_are_named(settings, tmp_path):
    """A verifier that now needs an input the recorded trial never collected is refused, naming it."""
    from evaluations.regrades.regrading import coverage_problems, current_verifier, declared_inputs

    task_dir = copy_task(tmp_path)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text() + '\n[[artifacts]]\nsource = "/logs/agent/score_log.jsonl"\n')
    manifest = [
        {"source": "/logs/artifacts", "destination": "artifacts/logs/artifacts", "type": "directory", "status": "ok"},
        {"source": "/app", "destination": "artifacts/app", "type": "directory", "status": "ok"},
    ]
    files = {"result.json": False, "artifacts/manifest.json": False, "artifacts/app/network.json": False}
    declared = declared_inputs(current_verifier(task_dir, sealed=True).config)
    assert coverage_problems(declared, manifest, files) == [
        "/logs/agent/score_log.jsonl: the verifier needs it, but the recorded trial never collected it"
    ]
    assert coverage_problems(declared[:2], manifest, files) == []
    cut = {**files, "artifacts/app/network.json": True}
    assert coverage_problems(declared[:2], manifest, cut) == [
        "/app: artifacts/app/network.json was stored only in part (over the storage's file size limit)"
    ]
    assert coverage_problems(declared, None, files)[0].startswith("no artifacts/manifest.json")
    assert coverage_problems(declared, manifest, {})[0].startswith("no recorded outputs")


@pytest.fixture
def eager_celery():
    """Sent tasks run in this process, as a worker would run them."""
    from autolab_site.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = previous


def staff_client(**fields) -> tuple[Client, object]:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(fields.pop("username", "staff"), password="pw", **fields)
    client = Client()
    client.force_login(user)
    return client, user


def test_staff_regrade_a_task_from_its_page_through_a_worker(settings, tmp_path, eager_celery):
    require_sandbox()
    runner_settings(settings, tmp_path)
    rollout, task_dir = oracle_rollout(tmp_path, "bubblewrap")
    (task_dir / "tests" / "test.sh").write_text(NEW_TEST_SH)
    url = f"/regrade/tasks/{rollout.task.pk}/"

    visitor, _ = staff_client(username="visitor")
    assert visitor.post(url).status_code == 403
    assert not Grade.objects.exists()

    client, staff = staff_client(username="staff", is_staff=True)
    task_page = f"/tasks/{rollout.task.version.name}/{rollout.task.name}/"
    assert f'action="{url}"' in client.get(task_page).content.decode()
    assert client.get(url).status_code == 405  # an action, not a page
    response = client.post(url, follow=True)
    assert response.redirect_chain[-1][0] == task_page
    assert "Regrade queued for 1 rollout" in response.content.decode()
    rollout.refresh_from_db()
    assert rollout.reward == 0.25
    regrade = Grade.objects.get(rollout=rollout, kind="regrade")
    assert (regrade.state, regrade.requested_by, regrade.backend) == ("done", staff, "bubblewrap")
    assert regrade.celery_task_id
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    assert "staff" in page.split('id="grades"', 1)[1].split("</section>", 1)[0]


def test_staff_are_told_on_the_page_why_a_rollout_cannot_be_regraded(settings, tmp_path):
    rollout, before = imported_rollout(settings, tmp_path)
    client, _ = staff_client(username="staff", is_staff=True)
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    assert f'action="/regrade/rollouts/{rollout.pk}/"' in page
    response = client.post(f"/regrade/rollouts/{rollout.pk}/", follow=True)
    text = response.content.decode()
    # Called as its page calls it ("rollout 1"), not by its database id.
    called = f"Rollout {rollout.number} of {rollout.task.name} by {rollout.model}"
    assert f"{called} cannot be regraded and is left as it was: no recorded outputs" in text
    assert model_to_dict(Rollout.objects.get(pk=rollout.pk)) == before
    assert not Grade.objects.exists()
    # A bad backend is a clear error, not a 500, and changes nothing.
    response = client.post(f"/regrade/rollouts/{rollout.pk}/", {"backend": "nowhere"}, follow=True)
    assert response.status_code == 200 and "Regrade: backend: Select a valid choice" in response.content.decode()
    # Visitors see the history's absence, not the button.
    assert "regrade-form" not in Client().get(f"/rollouts/{rollout.pk}/").content.decode()


@pytest.mark.shared
def test_real_imported_trials_cannot_be_regraded_and_a_reimport_keeps_the_latest_grade(
    settings, tmp_path, shared_tasks_dir, shared_trials_dir
):
    """The real AutoLab trials carry no recorded workspace; and a regraded rollout imported again keeps its regrade."""
    from trajectories import services
    from trajectories.reading.trial_folder import Verification

    runner_settings(settings, tmp_path)
    import_tasks(shared_tasks_dir, version="1.1")
    assert services.import_path(shared_trials_dir, version="1.1").ok
    opus = Rollout.objects.get(model__name="claude-opus-4.6")
    before = model_to_dict(opus)
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("regrade", "--task", "1.1/flux2_klein_lora", "--sync", stdout=out)
    said = [line for line in out.getvalue().splitlines() if line.startswith(f"rollout {opus.pk}:")]
    assert len(said) == 1 and "cannot be regraded, left as it was" in said[0] and "no recorded outputs" in said[0]
    assert model_to_dict(Rollout.objects.get(pk=opus.pk)) == before and not Grade.objects.exists()

    # A verdict recorded through the grade writer (as a regrade records it) is what a forced re-import keeps.
    grade = services.start_regrade(opus, backend="bubblewrap")
    verdict = Verification(0.5, True, {"reward": 0.5}, "regraded", {}, "", "", ())
    services.record_regrade(grade, verdict, verifier_version="v2")
    assert Rollout.objects.get(pk=opus.pk).reward == 0.5
    assert services.import_path(shared_trials_dir, version="1.1", force=True).ok
    opus.refresh_from_db()
    assert (opus.reward, opus.verifier_stdout) == (0.5, "regraded")
    original = Grade.objects.get(rollout=opus, kind="original")
    assert original.reward == before["reward"] and original.message == "as imported"


@pytest.mark.shared
def test_a_regrade_against_other_anchors_rescores_the_real_curve_and_a_reimport_keeps_them(
    settings, tmp_path, shared_tasks_dir, shared_trials_dir, monkeypatch
):
    """The opus flux2_klein_lora trial's verifier scored against its own reference (0.62); a regrade scoring the
    same LoRA against task.toml's 0.88 makes its curve, its benchmark calls and a forced re-import say so too.

    Both once kept the run's anchors: the curve's best beside the new reward disagreed by 0.27.
    """
    from tasks.scoring import ANCHORED_LINEAR, score_with
    from trajectories import services
    from trajectories.models import Step
    from trajectories.storing import ingest
    from trajectories.reading.trial_folder import Verification

    runner_settings(settings, tmp_path)
    import_tasks(shared_tasks_dir, version="1.1")
    assert services.import_path(shared_trials_dir, version="1.1").ok
    opus = Rollout.objects.get(model__name="claude-opus-4.6")
    assert (opus.anchors["reference"], opus.curve[-1]["best_score"]) == (0.62, pytest.approx(opus.reward, abs=5e-4))
    metrics = list(Step.objects.filter(rollout=opus, metric_value__isnull=False).values_list("metric_value", flat=True))
    assert metrics, "the trial's benchmark calls read a metric"

    metric = opus.verifier_fields["metric"]
    reward = round(score_with(ANCHORED_LINEAR, metric, 0.0, 0.88, True), 4)
    grade = services.start_regrade(opus, backend="bubblewrap")
    services.record_regrade(grade, Verification(reward, True, {"reward": reward, "metric": metric}, "", {}, "", "", ()),
                            verifier_version="v2")

    def agrees(rollout: Rollout) -> None:
        assert (rollout.reward, rollout.anchors["reference"], rollout.anchors["status"]) == (reward, 0.88, "reproduced")
        assert rollout.best_score == pytest.approx(reward, abs=5e-4)
        assert rollout.curve[-1]["best_score"] == pytest.approx(reward, abs=5e-4)
        for point in rollout.curve:
            assert point["score"] == pytest.approx(score_with(ANCHORED_LINEAR, point["metric"], 0.0, 0.88, True))
        scores = Step.objects.filter(rollout=rollout, metric_value__isnull=False).values_list("metric_value", "metric_score")
        assert [score for _, score in scores] == pytest.approx(
            [score_with(ANCHORED_LINEAR, value, 0.0, 0.88, True) for value, _ in scores]
        )

    agrees(Rollout.objects.get(pk=opus.pk))
    assert services.import_path(shared_trials_dir, version="1.1", force=True).ok
    agrees(Rollout.objects.get(pk=opus.pk))

    # A regrade done while an import read the trial (after it read the anchors, before it locked the rollout).
    monkeypatch.setattr(ingest, "regraded_anchors", lambda rollout_id: None)
    assert services.import_path(shared_trials_dir, version="1.1", force=True).ok
    agrees(Rollout.objects.get(pk=opus.pk))


def test_the_sandbox_sweep_leaves_a_regrade_under_way_alone(settings, tmp_path):
    """A worker ending a trial sweeps sandboxes of no running rollout: a regrade's has none, and must survive it."""
    from evaluations.running import workspace
    from evaluations.running.workspace import grade_of_trial, regrade_trial_name
    from trajectories import services
    from trajectories.tests import factories

    runner_settings(settings, tmp_path)
    rollout = factories.make_rollout(status="finished")
    grade = services.start_regrade(rollout, backend="bubblewrap")
    services.mark_regrade_running(grade)
    name = regrade_trial_name(rollout.trial_name, grade.pk)
    assert grade_of_trial(name) == grade.pk and grade_of_trial(rollout.trial_name) is None
    folder = settings.SANDBOX_DIR / workspace.session_id(name)
    folder.mkdir(parents=True)
    workspace.sweep_sandboxes()
    assert folder.is_dir()
    services.record_failed_regrade(grade, "its worker died")
    workspace.sweep_sandboxes()
    assert not folder.exists()


def lost_worker_setup(settings, tmp_path):
    from trajectories import services
    from trajectories.tests import factories

    runner_settings(settings, tmp_path)
    rollout = factories.make_rollout(status="finished", reward=0.75)
    grade = services.start_regrade(rollout, backend="bubblewrap")
    assert services.mark_regrade_running(grade)
    return rollout, grade


def test_a_regrade_whose_worker_died_is_failed_by_the_reaper_and_the_rollout_keeps_its_grade(settings, tmp_path):
    """It once stayed "running" for ever: the reaper looked at rollouts only."""
    from datetime import timedelta

    from django.utils import timezone

    from evaluations.running import reaper

    from evaluations.regrades import regrade

    rollout, lost = lost_worker_setup(settings, tmp_path)
    _, alive = lost_worker_setup(settings, tmp_path)
    Grade.objects.filter(pk=lost.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=300))
    before = model_to_dict(Rollout.objects.get(pk=rollout.pk))

    report = reaper.reap(stale_after=60, enqueue=False)
    assert report.regrades_failed == [lost.pk] and "1 regrades failed (their worker stopped)" in str(report)
    lost.refresh_from_db()
    assert lost.state == Grade.State.FAILED and lost.message.startswith("its worker stopped: no heartbeat since")
    assert Grade.objects.get(pk=alive.pk).state == Grade.State.RUNNING  # its worker beats
    assert model_to_dict(Rollout.objects.get(pk=rollout.pk)) == before
    assert "its worker stopped" in Client().get(f"/rollouts/{rollout.pk}/").content.decode()  # the history says why

    # The dead worker's message, delivered again (acks_late), runs nothing: the grade has ended.
    assert regrade.run(lost.pk).state == Grade.State.FAILED
    # A second message for a regrade under way leaves it to its worker.
    assert regrade.run(alive.pk).state == Grade.State.RUNNING
    assert model_to_dict(Rollout.objects.get(pk=rollout.pk)) == before


def test_a_running_regrade_beats_its_heartbeat(settings, tmp_path):
    import time

    from evaluations.regrades.regrade import Heartbeat

    _, grade = lost_worker_setup(settings, tmp_path)
    first = Grade.objects.get(pk=grade.pk).heartbeat_at
    heartbeat = Heartbeat(grade.pk, 0.05)
    heartbeat.start()
    try:
        deadline = time.monotonic() + 10
        while Grade.objects.get(pk=grade.pk).heartbeat_at == first and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        heartbeat.stop()
    assert Grade.objects.get(pk=grade.pk).heartbeat_at > first and not heartbeat.is_alive()


def test_queued_regrades_whose_message_is_gone_are_sent_again(settings, tmp_path):
    """Never sent (the broker was down when staff asked), or lost since (Redis keeps nothing on disk here)."""
    from datetime import timedelta

    from django.utils import timezone

    from evaluations.running import reaper
    from trajectories import services
    from trajectories.tests import factories

    runner_settings(settings, tmp_path)
    unsent = services.start_regrade(factories.make_rollout(status="finished"), backend="bubblewrap")
    lost = services.start_regrade(factories.make_rollout(status="finished"), backend="bubblewrap")
    Grade.objects.filter(pk=lost.pk).update(celery_task_id="gone-with-the-broker", created_at=timezone.now() - timedelta(hours=1))
    recent = services.start_regrade(factories.make_rollout(status="finished"), backend="bubblewrap")
    Grade.objects.filter(pk=recent.pk).update(celery_task_id="just-sent")  # within the grace: a worker may hold it

    report = reaper.reap(stale_after=60, enqueue=True)
    assert report.regrades_resent == [unsent.pk, lost.pk], str(report)
    assert Grade.objects.get(pk=unsent.pk).celery_task_id and Grade.objects.get(pk=lost.pk).celery_task_id != "gone-with-the-broker"
    assert Grade.objects.get(pk=recent.pk).celery_task_id == "just-sent"
    assert {g.state for g in Grade.objects.filter(kind="regrade")} == {Grade.State.QUEUED}


def test_what_a_request_names():
    """By id as named; a campaign's or task's current rollouts (superseded ones are out of the figures, and out of this)."""
    from evaluations.models import Campaign
    from evaluations.regrades.regrade import Selection, select
    from trajectories.tests import factories

    first = factories.make_rollout(status="finished")
    task = first.task
    campaign = Campaign.objects.create(model=first.model, harness=first.harness, version=task.version)
    ran = factories.make_rollout(task=task, model=first.model, harness=first.harness, campaign=campaign, index=1)
    old = factories.make_rollout(task=task, model=first.model, harness=first.harness, campaign=campaign, index=2,
                                 superseded=True)
    other = factories.make_rollout(status="finished")
    name = f"{task.version.name}/{task.name}"
    cases = [
        (dict(ids=[other.pk, first.pk]), [first, other]),
        (dict(ids=[old.pk]), [old]),
        (dict(campaign_id=campaign.pk), [ran]),
        (dict(task=name), [first, ran]),
        (dict(task=name, ids=[other.pk]), [first, ran, other]),
    ]
    for request, expected in cases:
        assert [r.pk for r in select(**request)] == [r.pk for r in expected], request
    for request, message in [
        (dict(ids=[999999]), "no rollout 999999"),
        (dict(campaign_id=999999), "no campaign 999999"),
        (dict(task=task.name), "give it as VERSION/NAME"),
        (dict(task=f"{task.version.name}/nothing"), "no task"),
    ]:
        with pytest.raises(Selection, match=message):
            select(**request)
    with pytest.raises(CommandError, match="name rollouts"):
        call_command("regrade")
    with pytest.raises(CommandError, match="no campaign 999999"):
        call_command("regrade", "--campaign", "999999")
