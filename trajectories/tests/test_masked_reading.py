"""Every reader of a trial masks what it read (trajectories.reading.masked): no row, search word or review holds a secret.

The secrets of trajectories.tests.planted_secrets, planted in a real trial,
read by each way a trial comes in: a trial folder (whole, and a long
trajectory read again a step at a time), a regrade's verification, an
Inspect log, a running trial's live import, Harbor's analysis and a
judge's reading; then what the database holds of it.
"""
from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator

import pytest
from harbor.utils.trajectory_utils import format_trajectory_json

from trajectories.models import ObservationText, Rollout, RolloutStatus
from trajectories.reading import trial_folder
from trajectories.reading.review_data import Check, Reading
from trajectories.reading.trial_folder import read_trial_folder, read_verification, snapshot_folder

from . import planted_secrets
from .real_trials import GROK


def strings_in(value) -> Iterator[str]:
    """Every string reachable in `value`: dataclass fields, mappings' keys and values, sequences' items."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from strings_in(getattr(value, field.name))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key)
            yield from strings_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings_in(item)


def leaks(value) -> list[str]:
    return planted_secrets.leaks("\n".join(strings_in(value)))


@pytest.fixture
def planted(tmp_path, shared_trials_dir):
    return planted_secrets.planted_copy(shared_trials_dir / GROK, tmp_path / "trials")


def test_a_trial_folder_is_read_masked(planted):
    folder = read_trial_folder(planted)
    assert leaks(folder) == []
    text = "\n".join(strings_in(folder))
    assert "Authorization: Token ********" in text and "OPENAI_API_KEY" in text, "what surrounds a secret is kept"


def test_a_long_trajectory_read_again_a_step_at_a_time_is_masked(planted, monkeypatch):
    (planted / "agent" / "trajectory.summarization-1-summary.json").unlink()  # else it is read whole
    monkeypatch.setattr(trial_folder, "STREAM_OVER", 1000)
    folder = read_trial_folder(planted, snapshot=snapshot_folder(planted, stream_large=True))
    assert folder.trajectory.restream is not None
    steps = []
    folder.trajectory.restream(lambda position, step: steps.append(step))
    assert len(steps) == len(folder.trajectory.steps) and leaks(steps) == []
    assert any("********" in step.message for step in steps)


def test_a_regrade_verification_is_read_masked(planted):
    assert leaks(read_verification(planted)) == []


def test_an_inspect_log_is_read_masked(tmp_path):
    from trajectories.reading.inspect_log import read_log

    from .inspect_runs import make_qa_log

    log = make_qa_log(tmp_path, {"q1": planted_secrets.block()})
    folders = read_log(log)
    assert folders and leaks(folders) == []


@pytest.mark.django_db
def test_the_database_holds_no_secret_of_an_imported_trial(planted, shared_tasks_dir, settings):
    from tasks.services import import_tasks
    from trajectories.services import import_trial_dir

    settings.AUTOLAB_OBSERVATION_MAX_CHARS = 200  # the planted outputs are cut: their whole text is stored apart
    import_tasks(shared_tasks_dir, version="1.1")
    outcome = import_trial_dir(planted)
    assert outcome.ok, outcome.error
    rollout = Rollout.objects.get(pk=outcome.rollout_id)
    assert ObservationText.objects.filter(observation__step__rollout=rollout).exists()
    assert planted_secrets.leaks(planted_secrets.stored_text(rollout)) == []


@pytest.mark.django_db
def test_a_running_trial_is_stored_masked_tick_by_tick(planted, shared_tasks_dir, tmp_path):
    from agents.services import ensure_harness, ensure_model
    from tasks.services import import_tasks, match_task
    from trajectories.services import live_import

    import_tasks(shared_tasks_dir, version="1.1")
    running = tmp_path / "running"
    shutil.copytree(planted, running)
    (running / "result.json").unlink()
    for name in ("trajectory.summarization-1-summary.json",):
        (running / "agent" / name).unlink()  # a subagent file makes every tick a full import
    document = json.loads((running / "agent" / "trajectory.json").read_text())
    config = json.loads((running / "config.json").read_text())
    rollout = Rollout.objects.create(
        task=match_task("flux2_klein_lora", version="1.1"), model=ensure_model("openai/xai-grok-4-20-reasoning"),
        harness=ensure_harness("terminus-2", "2.0.0"), trial_name=config["trial_name"], status=RolloutStatus.RUNNING,
    )
    live = live_import(running, rollout.pk)
    for n in (2, len(document["steps"])):
        data = dict(document, steps=document["steps"][:n])
        (running / "agent" / "trajectory.json").write_text(format_trajectory_json(data))
        outcome = live.tick()
        assert outcome.ok, outcome.error
    assert live.full_imports == 1, "the last planted step came in a tick, not a full import"
    assert planted_secrets.leaks(planted_secrets.stored_text(rollout)) == []


@pytest.mark.django_db
def test_a_review_is_stored_masked():
    from trajectories.reviews import record_failed_review, record_review

    from . import factories

    rollout = factories.make_rollout()
    text = planted_secrets.block()
    review = record_review(rollout, Reading(summary=text, checks=(Check("leak", "fail", explanation=text),)), source="judge")
    assert planted_secrets.leaks(review.summary + review.checks.get().explanation) == []
    failed = record_failed_review(rollout, text, source="judge", judge="other")
    assert planted_secrets.leaks(failed.error) == []
