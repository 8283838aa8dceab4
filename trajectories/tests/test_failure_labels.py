"""Storing classifications, and staff labels that override them (with audit)."""
from __future__ import annotations

import re

import pytest

from trajectories.failures import service as failure_service
from trajectories.failures.service import LabelError, cause_source, effective_cause, set_label
from trajectories.forms import FailureFilters
from trajectories.models import FailureLabel, LabelChange, Rollout

from . import failure_helpers as h

pytestmark = pytest.mark.django_db


def test_classify_and_store_saves_cause_evidence_and_flags():
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_lora_file"}, used_sec=600, n_benchmark_calls=0)
    h.step(r, 1)
    h.step(r, 2, "submit")
    failure_service.classify_and_store(r)
    r = Rollout.objects.get(pk=r.pk)
    assert (r.outcome, r.failure_cause) == ("zero", "no_artifact")
    assert r.failure_secondary == ["premature_termination"]
    assert {"kind": "verifier", "text": "reason: no_lora_file", "step_id": None, "cause": "no_artifact"} in r.failure_evidence
    assert [e["step_id"] for e in r.failure_evidence if e["cause"] == "premature_termination"] == [2]
    assert r.behaviour_flags == ["never_called_benchmark"]
    assert r.infra_error is False


def test_edit_to_read_only_file_is_found_from_stored_steps():
    r = h.rollout()
    h.step(r, 3, "edit", diff="--- a/app/solve.c\n+++ b/app/solve.c\n")
    h.step(r, 4, "edit benchmark", diff="--- a/app/Makefile\n+++ b/app/Makefile\n")
    failure_service.classify_and_store(r)
    r.refresh_from_db()
    assert r.failure_cause == "protected_file_modified"
    assert [e["step_id"] for e in r.failure_evidence if e["cause"] == "protected_file_modified"] == [4]


def test_budget_comes_from_the_trial_config():
    # 4000 s is 56% of the task's 2 h, but 14% of the 8 h this trial was given.
    plain = h.rollout(used_sec=4000, n_benchmark_calls=0)
    stretched = h.rollout(used_sec=4000, n_benchmark_calls=0, config={"agent_timeout_multiplier": 4.0})
    assert failure_service.classify_and_store(plain).cause == "no_improvement"
    assert failure_service.classify_and_store(stretched).cause == "premature_termination"
    assert failure_service.effective_budget_sec(7200, {"agent": {"override_timeout_sec": 600}, "timeout_multiplier": 2}) == 1200
    assert failure_service.effective_budget_sec(7200, {"agent": {"max_timeout_sec": 3600}}) == 3600
    assert failure_service.effective_budget_sec(None, {}) is None


def test_infrastructure_error_sets_infra_flag_and_reclassification_clears_it():
    r = h.rollout(reward=None, verifier_fields={}, exception_type="EnvironmentStartTimeoutError")
    failure_service.classify_and_store(r)
    r.refresh_from_db()
    assert (r.outcome, r.failure_cause, r.infra_error) == ("infra_error", "infrastructure_error", True)
    # Re-run after the trial was re-imported without the exception.
    Rollout.objects.filter(pk=r.pk).update(exception_type="", reward=0.0, verifier_fields={"reward": 0.0, "reason": "no_output"})
    r.refresh_from_db()
    failure_service.classify_and_store(r)
    r.refresh_from_db()
    assert (r.failure_cause, r.infra_error) == ("no_artifact", False)


def test_infra_flag_set_by_others_is_kept():
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_output"}, infra_error=True)
    failure_service.classify_and_store(r)
    r.refresh_from_db()
    assert r.infra_error is True


def test_staff_label_overrides_automatic_cause_and_is_audited():
    staff = h.user("ada", staff=True)
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_lora_file"})
    failure_service.classify_and_store(r)

    set_label(r, staff, cause="budget_exhausted", notes="trained for 3 h, never saved", tags="lora, saving ,lora")
    r = Rollout.objects.get(pk=r.pk)
    assert (effective_cause(r), cause_source(r), r.failure_cause) == ("budget_exhausted", "label", "no_artifact")
    assert r.label.tags == ["lora", "saving"] and r.label.updated_by == staff
    change = LabelChange.objects.get(rollout=r)
    assert change.user == staff
    assert change.old == {}
    assert change.new == {"cause": "budget_exhausted", "notes": "trained for 3 h, never saved", "tags": ["lora", "saving"]}

    # The failures list filters on the effective cause.
    filters = FailureFilters.of(cause="budget_exhausted")
    assert list(failure_service.failed_rollouts(filters)) == [r]
    assert list(failure_service.failed_rollouts(FailureFilters.of(cause="no_artifact"))) == []

    # Re-classification keeps the label.
    failure_service.classify_and_store(r)
    assert effective_cause(Rollout.objects.get(pk=r.pk)) == "budget_exhausted"


def test_changes_keep_history_and_clearing_returns_to_automatic():
    ada, bob = h.user("ada", staff=True), h.user("bob", staff=True)
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_lora_file"})
    failure_service.classify_and_store(r)
    set_label(r, ada, cause="budget_exhausted")
    set_label(r, bob, cause="budget_exhausted")  # unchanged: no audit row
    set_label(r, bob, cause="premature_termination", notes="quit early")
    set_label(r, ada)  # everything empty: clear
    r = Rollout.objects.get(pk=r.pk)
    assert not FailureLabel.objects.filter(rollout=r).exists()
    assert (effective_cause(r), cause_source(r)) == ("no_artifact", "automatic")
    history = [(c.user.username, c.old.get("cause"), c.new.get("cause")) for c in LabelChange.objects.filter(rollout=r).order_by("id")]
    assert history == [("ada", None, "budget_exhausted"), ("bob", "budget_exhausted", "premature_termination"), ("ada", "premature_termination", None)]


def test_notes_without_cause_keep_the_automatic_cause():
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_lora_file"})
    failure_service.classify_and_store(r)
    set_label(r, h.user("ada", staff=True), notes="look again")
    r = Rollout.objects.get(pk=r.pk)
    assert r.label.notes == "look again"
    assert (effective_cause(r), cause_source(r)) == ("no_artifact", "automatic")


def test_unknown_cause_is_refused_and_nothing_is_written():
    r = h.rollout()
    with pytest.raises(LabelError, match="unknown cause"):
        set_label(r, h.user("ada", staff=True), cause="bad_luck")
    assert not FailureLabel.objects.exists() and not LabelChange.objects.exists()


@pytest.mark.parametrize(
    "fields, problem",
    [
        ({"notes": "x" * 10_001}, "notes are 10001 characters long (at most 10000)"),
        ({"tags": ",".join(f"t{i}" for i in range(31))}, "31 tags (at most 30)"),
        ({"tags": "ok, " + "y" * 51}, "a tag is 51 characters long (at most 50)"),
    ],
)
def test_a_label_too_large_to_read_is_refused_and_nothing_is_written(fields, problem):
    """A staff QA pass saved 2 MB of notes and 5,000 tags, which every failures page then carried; a tag
    over 50 characters was cut without a word."""
    r = h.rollout()
    with pytest.raises(LabelError, match=re.escape(problem)):
        set_label(r, h.user("ada", staff=True), cause="no_improvement", **fields)
    assert not FailureLabel.objects.exists() and not LabelChange.objects.exists()


def test_label_infrastructure_error_excludes_rollout_until_cleared():
    staff = h.user("ada", staff=True)
    r = h.rollout(verifier_fields={"reward": 0.0, "reason": "no_output"})
    failure_service.classify_and_store(r)
    set_label(r, staff, cause="infrastructure_error", notes="GPU fell off the bus")
    assert Rollout.objects.get(pk=r.pk).infra_error is True
    # Its outcome too, which the rollouts list's and the API's outcome filter read: a QA pass found the
    # model page counting the labelled rollout as infra and ?outcome=infra_error leaving it out.
    assert Rollout.objects.get(pk=r.pk).outcome == "infra_error"
    failure_service.classify_and_store(Rollout.objects.get(pk=r.pk))  # a reclassification keeps the label's word
    assert Rollout.objects.get(pk=r.pk).outcome == "infra_error"
    set_label(r, staff)
    assert Rollout.objects.get(pk=r.pk).infra_error is False
    assert Rollout.objects.get(pk=r.pk).outcome == "zero"


def test_a_label_calling_the_classifiers_infra_error_the_agents_makes_it_the_agents_outcome():
    staff = h.user("ada", staff=True)
    r = h.rollout(reward=None, verifier_fields={}, exception_type="EnvironmentStartTimeoutError")
    failure_service.classify_and_store(r)
    assert (Rollout.objects.get(pk=r.pk).outcome, Rollout.objects.get(pk=r.pk).infra_error) == ("infra_error", True)
    set_label(r, staff, cause="no_improvement")
    assert (Rollout.objects.get(pk=r.pk).outcome, Rollout.objects.get(pk=r.pk).infra_error) == ("no_reward", False)
    set_label(r, staff)
    assert (Rollout.objects.get(pk=r.pk).outcome, Rollout.objects.get(pk=r.pk).infra_error) == ("infra_error", True)


def test_thresholds_come_from_settings(settings):
    r = h.rollout(used_sec=600, n_benchmark_calls=0)  # 92% of the budget left
    assert failure_service.classify_and_store(r).cause == "premature_termination"
    settings.AUTOLAB_FAILURE_THRESHOLDS = {"premature_unused_fraction": 0.95}
    assert failure_service.classify_and_store(r).cause == "no_improvement"
