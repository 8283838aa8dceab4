"""Where the failure rules and the judge disagree: one table of cases, held by the rule and by its SQL form.

Also the failures page: the judge's failing checks beside the rule's cause,
the count of disagreements, ?order=disagree listing them first, and the
effective cause (a staff label's first) left as it was.
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from trajectories.failures import judge_service
from trajectories.failures.judge_agreement import AGREE, JUDGE_ONLY, RULE_ONLY, disagreement
from trajectories.models import FailureLabel, Rollout
from trajectories.reading.review_data import Check, Reading
from trajectories.reviews import record_failed_review, record_review
from trajectories.tests import factories

# (rule's cause, the judge's outcomes or None when it has not read the rollout, disagreement)
CASES = [
    ("no_artifact", ["pass", "pass"], RULE_ONLY),
    ("no_artifact", ["pass", "not_applicable"], RULE_ONLY),
    ("no_artifact", ["fail", "pass"], AGREE),
    ("premature_termination", ["fail"], AGREE),
    ("unknown", ["pass", "fail"], JUDGE_ONLY),
    ("", ["fail"], JUDGE_ONLY),
    ("unknown", ["pass"], AGREE),
    ("unknown", [], AGREE),
    ("infrastructure_error", ["pass"], AGREE),  # not the agent's: the judge has nothing to confirm
    ("configuration_error", ["not_applicable"], AGREE),
    ("infrastructure_error", ["fail"], AGREE),
    ("no_artifact", None, AGREE),  # not read: nothing to disagree with
    ("unknown", None, AGREE),
]


@pytest.mark.parametrize(("cause", "outcomes", "expected"), CASES)
def test_the_rule(cause, outcomes, expected):
    fails = None if outcomes is None else outcomes.count("fail")
    assert disagreement(cause, fails) == expected


def reviewed(cause: str, outcomes: list[str] | None, **fields) -> Rollout:
    rollout = factories.make_rollout(reward=0.0, outcome="zero", failure_cause=cause, status="finished", **fields)
    if outcomes is not None:
        checks = tuple(Check(f"c{i}", outcome) for i, outcome in enumerate(outcomes))
        record_review(rollout, Reading("read", checks), source="judge", judge="j", rubric_text="r")
    return rollout


@pytest.mark.django_db
def test_the_sql_agrees_with_the_rule():
    made = {reviewed(cause, outcomes).pk: expected for cause, outcomes, expected in CASES}
    annotated = dict(judge_service.with_judge_verdict(Rollout.objects.all()).values_list("pk", "disagreement"))
    assert annotated == made


@pytest.mark.django_db
def test_the_latest_done_judge_review_counts():
    rollout = reviewed("no_artifact", ["fail"])
    # A newer failed reading, and Harbor's own reading, do not replace the judge's verdict.
    record_failed_review(rollout, "timeout", source="judge", judge="other", rubric_text="r")
    record_review(rollout, Reading("harbor", (Check("x", "pass"),)), source="harbor")
    assert judge_service.with_judge_verdict(Rollout.objects.filter(pk=rollout.pk)).get().disagreement == AGREE
    record_review(rollout, Reading("newer", (Check("x", "pass"),)), source="judge", judge="j2", rubric_text="r")
    assert judge_service.with_judge_verdict(Rollout.objects.filter(pk=rollout.pk)).get().disagreement == RULE_ONLY


@pytest.mark.django_db
def test_the_failures_page_shows_the_verdict_beside_the_cause_and_lists_disagreements_first():
    # One entry, so that the list's order is the rollouts' numbers (each its own model, named by a counter,
    # sorted "model-100" before "model-99" once a long run's counter crossed a power of ten).
    one = {"task": factories.make_task("hash_join"), "model": factories.make_model(), "harness": factories.make_harness()}
    agree = reviewed("no_artifact", ["fail", "pass"], index=1, **one)
    rule_only = reviewed("no_artifact", ["pass", "pass"], index=2, **one)
    judge_only = reviewed("unknown", ["fail"], index=3, **one)
    unread = reviewed("no_artifact", None, index=4, **one)
    # A staff label is the final word on the cause; the disagreement is the rule's.
    FailureLabel.objects.create(rollout=rule_only, cause="correctness_failed")

    page = Client().get(reverse("trajectories:failures"))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<strong id="judge-disagreements">2</strong>' in html and "<strong>3</strong> of these 4 rollouts read" in html
    rows = [r["rollout"].pk for r in page.context["rollouts"]]
    assert rows == [agree.pk, rule_only.pk, judge_only.pk, unread.pk]
    by_pk = {r["rollout"].pk: r for r in page.context["rollouts"]}
    assert by_pk[rule_only.pk]["cause"] == "correctness_failed"  # the label's, unchanged
    assert by_pk[rule_only.pk]["disagreement"] == RULE_ONLY and by_pk[judge_only.pk]["disagreement"] == JUDGE_ONLY
    assert by_pk[agree.pk]["judge"]["failing"] == [("c0", "")]
    assert 'data-check="c0"' in html and "passes all 2" in html and "not read" in html

    first = Client().get(reverse("trajectories:failures"), {"order": "disagree", "task": "hash_join"})
    assert [r["rollout"].pk for r in first.context["rollouts"]] == [rule_only.pk, judge_only.pk, agree.pk, unread.pk]
    assert "order=disagree" in first.context["query"] and "list in the usual order" in first.content.decode()

    bad = Client().get(reverse("trajectories:failures"), {"order": "sideways"})
    assert bad.status_code == 400 and "Unknown order" in bad.content.decode()


@pytest.mark.django_db
def test_the_exports_carry_the_verdict_beside_the_cause():
    """They once carried the rule's cause alone: a reader of the CSV could not see where the judge disagreed."""
    import csv
    import io

    task = factories.make_task("hash_join")
    agree = reviewed("no_artifact", ["fail", "pass"], task=task, index=1)
    rule_only = reviewed("no_artifact", ["pass", "pass"], task=task, index=2)
    unread = reviewed("no_artifact", None, task=task, index=3)

    rows = {row["id"]: row for row in Client().get("/failures/export.json").json()["rollouts"]}
    assert (rows[agree.pk]["judge"], rows[agree.pk]["judge_failing"], rows[agree.pk]["judge_disagreement"]) == ("j", ["c0"], AGREE)
    assert (rows[rule_only.pk]["judge_failing"], rows[rule_only.pk]["judge_disagreement"]) == ([], RULE_ONLY)
    assert (rows[unread.pk]["judge"], rows[unread.pk]["judge_failing"], rows[unread.pk]["judge_disagreement"]) == ("", [], AGREE)
    assert rows[agree.pk]["judge_summary"] == "read"

    text = Client().get("/failures/export.csv").content.decode()
    by_id = {int(row["id"]): row for row in csv.DictReader(io.StringIO(text))}
    assert (by_id[agree.pk]["judge"], by_id[agree.pk]["judge_failing"], by_id[rule_only.pk]["judge_disagreement"]) == (
        "j", "c0", RULE_ONLY
    )
