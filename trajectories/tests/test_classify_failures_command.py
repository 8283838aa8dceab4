"""manage.py classify_failures: re-classify stored rollouts in batches."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from trajectories.failures import service as failure_service
from trajectories.models import Rollout

from . import failure_helpers as h

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("classify_failures", *args, stdout=out)
    return out.getvalue()


def test_classifies_every_rollout_in_batches():
    for _ in range(5):
        h.rollout(verifier_fields={"reward": 0.0, "reason": "no_binary"})
    h.rollout(reward=0.9, verifier_fields={"reward": 0.9})
    h.rollout(status="running", reward=None, verifier_fields={})
    output = run("--batch-size", "2")
    assert "Classified 7 rollouts." in output
    assert "No artifact: 5" in output and "scored: 1" in output and "running: 1" in output
    assert Rollout.objects.filter(outcome="zero", failure_cause="no_artifact").count() == 5
    assert Rollout.objects.filter(outcome="").count() == 0


def test_reclassifies_after_the_facts_change_and_keeps_labels():
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_binary"})
    other = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_binary"})
    run()
    failure_service.set_label(other, h.user("ada", staff=True), cause="unknown", notes="check")
    Rollout.objects.update(verifier_fields={"reward": 0.0, "reason": "build_failed"})
    run()
    r.refresh_from_db()
    other.refresh_from_db()
    assert r.failure_cause == "build_failed" and other.failure_cause == "build_failed"
    assert failure_service.effective_cause(other) == "unknown"


def test_filters_limit_what_is_classified():
    a = h.rollout(model=h.model("model-a"), verifier_fields={"reward": 0.0, "reason": "no_binary"})
    b = h.rollout(model=h.model("model-b"), verifier_fields={"reward": 0.0, "reason": "no_binary"})
    assert "Classified 1 rollout." in run("--model", "model-b")
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.outcome, b.outcome) == ("", "zero")
    Rollout.objects.filter(pk=b.pk).update(verifier_fields={"reward": 0.0, "reason": "build_failed"})
    run("--unclassified")  # b already has an outcome: left alone
    b.refresh_from_db()
    a.refresh_from_db()
    assert (a.failure_cause, b.failure_cause) == ("no_artifact", "no_artifact")
    assert "Classified 0 rollouts." in run("--task", "no_such_task")


def test_bad_batch_size_is_refused():
    with pytest.raises(CommandError, match="batch-size"):
        run("--batch-size", "0")
