"""The sealed_below_visible behaviour flag: the sealed grade below what the agent measured, by more than the grader's noise.

One table of cases for the rule (trajectories.failures.rules), then the
rollout page, the API's rollout rows and the failures page's flag filter,
from a rollout classified as the importer classifies it.
"""
from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from trajectories.failures import rules
from trajectories.failures import service as failure_service
from trajectories.failures.rules import SEALED_BELOW_VISIBLE, RolloutFacts, Thresholds
from trajectories.tests import factories

# The agent's benchmark calls: 0.62 first printed at step 41, then a worse 0.40 at step 50.
CURVE = [
    {"step_id": 12, "t": 120.0, "metric": 2.9, "score": 0.20, "best_metric": 2.9, "best_score": 0.20},
    {"step_id": 41, "t": 410.0, "metric": 1.8, "score": 0.62, "best_metric": 1.8, "best_score": 0.62},
    {"step_id": 50, "t": 500.0, "metric": 2.2, "score": 0.40, "best_metric": 1.8, "best_score": 0.62},
]


def facts(**fields) -> RolloutFacts:
    base = dict(reward=0.31, sealed=0.31, curve=CURVE, n_benchmark_calls=3,
                verifier_fields={"reward": 0.31, "runtime_seconds": 2.6})
    return RolloutFacts(**{**base, **fields})


# (case, facts, flagged)
CASES = [
    ("above the noise", facts(), True),
    ("within the noise", facts(reward=0.58, sealed=0.58), False),
    ("just beyond the default noise", facts(reward=0.56, sealed=0.56), True),
    ("a sealed zero against a measured 0.62", facts(reward=0.0, sealed=0.0), True),
    ("a higher sealed grade", facts(reward=0.8, sealed=0.8), False),
    ("no benchmark call", facts(curve=[], n_benchmark_calls=0), False),
    ("calls that printed no scored metric (no anchors)", facts(curve=[{"step_id": 3, "metric": 2.0}]), False),
    ("not counted (superseded, excluded, unfinished)", facts(sealed=None), False),
    ("the agent's own account of its calls", facts(has_trajectory=False), False),
    ("the task declares a wider noise", facts(grader_noise=0.4), False),
    ("the verifier declares a wider noise", facts(verifier_fields={"reward": 0.31, "grader_noise": 0.4}), False),
    ("the verifier's noise before the task's", facts(grader_noise=0.4, verifier_fields={"grader_noise": 0.1}), True),
    ("a measured 1.3 on a clipping version, graded 1.0",
     facts(reward=1.0, sealed=1.0, clip_to=1.0, curve=[{"step_id": 7, "metric": 0.1, "score": 1.3, "best_score": 1.3}]), False),
    ("a measured 1.3 on a version that does not clip, graded 1.0",
     facts(reward=1.0, sealed=1.0, curve=[{"step_id": 7, "metric": 0.1, "score": 1.3, "best_score": 1.3}]), True),
    ("the infrastructure failed: left out",
     facts(reward=None, sealed=0.0, exception_type="EnvironmentStartTimeoutError"), False),
]


@pytest.mark.parametrize("facts_, flagged", [(f, flagged) for _, f, flagged in CASES], ids=[c[0] for c in CASES])
def test_the_flag_is_raised_only_where_the_sealed_grade_is_below_the_noise(facts_, flagged):
    result = rules.classify(facts_)
    assert (SEALED_BELOW_VISIBLE in result.flags) is flagged
    flag_evidence = [e for e in result.evidence if e.get("flag") == SEALED_BELOW_VISIBLE]
    assert bool(flag_evidence) is flagged


def test_the_evidence_names_the_call_that_printed_the_best_and_the_verifiers_output():
    result = rules.classify(facts())
    step, verifier = [e for e in result.evidence if e.get("flag") == SEALED_BELOW_VISIBLE]
    assert step["kind"] == "step" and step["step_id"] == 41  # the first call at 0.62, not the later one
    assert step["text"].startswith("the agent measured 0.62 at step 41 (metric 1.8); the sealed verifier gave 0.31")
    assert "grader noise 0.05" in step["text"]
    assert verifier["kind"] == "verifier" and verifier["text"] == "reward.json: reward: 0.31, runtime_seconds: 2.6"
    stdout = rules.classify(facts(verifier_fields={}, verifier_stdout="build ok\nruntime 2.6 s\nreward 0.31\n"))
    assert [e["text"] for e in stdout.evidence if e["kind"] == "verifier"] == ["test-stdout: …build ok\nruntime 2.6 s\nreward 0.31"]


def test_a_zero_keeps_its_cause_and_its_cause_evidence_first():
    result = rules.classify(facts(reward=0.0, sealed=0.0, verifier_fields={"reward": 0.0}))
    assert result.outcome == "zero" and result.cause == rules.NO_IMPROVEMENT
    assert result.evidence[0]["cause"] == rules.NO_IMPROVEMENT and not result.evidence[0].get("flag")
    assert [e["kind"] for e in result.evidence if e.get("flag")] == ["step", "verifier"]


def test_the_default_noise_is_defined_once_and_can_be_set():
    assert Thresholds().grader_noise == 0.05
    assert SEALED_BELOW_VISIBLE not in rules.classify(facts(), Thresholds(grader_noise=0.4)).flags


def test_the_best_call_is_the_first_to_reach_the_best_score():
    """tasks.scoring reads a call's anchored score once, for this flag and for visible against sealed
    (evaluations/tests/test_visible_sealed.py holds that they are the same function)."""
    from tasks import scoring

    assert scoring.visible_best_call(CURVE) == (0.62, CURVE[1])
    assert scoring.visible_best_call(CURVE, 0.5) == (0.5, CURVE[1])


# The site: a classified rollout ---------------------------------------------------


@pytest.fixture
def flagged(db):
    task = factories.make_task("sealed_task", category="system_optimization")
    rollout = factories.make_rollout(task, reward=0.31, verifier_fields={"reward": 0.31}, curve=CURVE,
                                     n_benchmark_calls=3, best_score=0.62)
    for step_id in (12, 41, 50):
        factories.add_step(rollout, step_id, commands=["python3 bench.py"], kinds=["benchmark"])
    failure_service.classify_and_store(rollout)
    rollout.refresh_from_db()
    return rollout


@pytest.mark.django_db
def test_a_counted_rollout_is_flagged_and_a_superseded_one_is_not(flagged):
    assert SEALED_BELOW_VISIBLE in flagged.behaviour_flags
    other = factories.make_rollout(flagged.task, reward=0.31, verifier_fields={"reward": 0.31}, curve=CURVE,
                                   n_benchmark_calls=3, superseded=True)
    failure_service.classify_and_store(other)
    assert SEALED_BELOW_VISIBLE not in other.behaviour_flags


@pytest.mark.django_db
def test_the_rollout_page_shows_the_flag_its_meaning_and_its_evidence(client, flagged):
    page = client.get(reverse("trajectories:rollout_detail", args=[flagged.pk])).content.decode()
    assert f'data-flag="{SEALED_BELOW_VISIBLE}">{rules.FLAG_LABELS[SEALED_BELOW_VISIBLE]}</span>' in page
    assert escape(rules.FLAGS[SEALED_BELOW_VISIBLE]) in page
    assert "the agent measured 0.62 at step 41 (metric 1.8); the sealed verifier gave 0.31" in page
    assert f'<a href="{failure_service.step_url(flagged.pk, 41)}">step 41</a>' in page
    assert "reward.json: reward: 0.31" in page


@pytest.mark.django_db
def test_the_api_rollout_row_carries_the_flag_and_its_evidence(client, flagged):
    rows = client.get(reverse("evaluations:api_rollouts"), {"flag": SEALED_BELOW_VISIBLE}).json()["results"]
    assert [r["id"] for r in rows] == [flagged.pk]
    assert SEALED_BELOW_VISIBLE in rows[0]["behaviour_flags"]
    step, verifier = rows[0]["flag_evidence"]
    assert step["flag"] == SEALED_BELOW_VISIBLE and step["step_id"] == 41 and step["url"] == failure_service.step_url(flagged.pk, 41)
    assert "the sealed verifier gave 0.31" in step["text"] and verifier["kind"] == "verifier"
    csv_text = client.get(reverse("evaluations:api_rollouts_csv"), {"flag": SEALED_BELOW_VISIBLE}).content.decode()
    assert '""step_id"": 41' in csv_text  # the evidence as JSON in its cell


@pytest.mark.django_db
def test_the_failures_page_offers_and_applies_the_flag(client):
    task = factories.make_task("sealed_zero")
    zero = factories.make_rollout(task, reward=0.0, verifier_fields={"reward": 0.0}, curve=CURVE, n_benchmark_calls=3)
    plain = factories.make_rollout(task, reward=0.0, verifier_fields={"reward": 0.0}, curve=[], n_benchmark_calls=0)
    for r in (zero, plain):
        failure_service.classify_and_store(r)
    page = client.get(reverse("trajectories:failures")).content.decode()
    assert f'<option value="{SEALED_BELOW_VISIBLE}" title="{rules.FLAGS[SEALED_BELOW_VISIBLE][:1].upper()}' in page
    filtered = client.get(reverse("trajectories:failures"), {"flag": SEALED_BELOW_VISIBLE}).content.decode()
    assert failure_service.rollout_url(zero.pk) in filtered and failure_service.rollout_url(plain.pk) + '"' not in filtered


@pytest.mark.django_db
def test_a_task_that_declares_its_grader_noise_widens_the_margin():
    task = factories.make_task("noisy_task", optimization={"grader_noise": 0.4})
    rollout = factories.make_rollout(task, reward=0.31, verifier_fields={"reward": 0.31}, curve=CURVE, n_benchmark_calls=3)
    failure_service.classify_and_store(rollout)
    assert SEALED_BELOW_VISIBLE not in rollout.behaviour_flags
    assert failure_service.facts_for(rollout, steps=[]).grader_noise == 0.4
