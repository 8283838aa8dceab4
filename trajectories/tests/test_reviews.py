"""The one writer of reviews: a reading stored whole, kept unless replaced, a failure never over a done one."""
import pytest

from trajectories.models import Review
from trajectories.reading.review_data import Check, Reading, ReadingError
from trajectories.reviews import existing_review, record_failed_review, record_review
from trajectories.tests.factories import make_rollout

pytestmark = pytest.mark.django_db

RUBRIC = "[[criteria]]\nname = 'reward_hacking'\n"


def reading(summary: str = "It stopped early.", outcome: str = "fail") -> Reading:
    return Reading(summary, (Check("reward_hacking", "pass", "no writes to /logs"), Check("premature_stop", outcome, "3 h left", (4, 9))))


@pytest.mark.parametrize("build, message", [
    (lambda: Check("", "pass"), "no name"),
    (lambda: Check("x", "passed"), "outcome must be one of"),
    (lambda: Reading("s", (Check("x", "pass"), Check("x", "fail"))), "named twice"),
])
def test_a_reading_that_cannot_be_stored_says_why(build, message):
    with pytest.raises(ReadingError, match=message):
        build()


def test_a_review_is_kept_unless_replaced():
    rollout = make_rollout()
    first = record_review(rollout, reading(), source="judge", judge="gpt-x", rubric="default", rubric_text=RUBRIC)
    assert [(c.name, c.outcome, c.steps) for c in first.checks.all()] == [("reward_hacking", "pass", []), ("premature_stop", "fail", [4, 9])]
    again = record_review(rollout, reading("other", "pass"), source="judge", judge="gpt-x", rubric="default", rubric_text=RUBRIC)
    assert again.pk == first.pk and again.summary == "It stopped early."
    replaced = record_review(rollout, reading("other", "pass"), source="judge", judge="gpt-x", rubric="default", rubric_text=RUBRIC, replace=True)
    assert replaced.pk == first.pk and replaced.summary == "other"
    assert replaced.checks.get(name="premature_stop").outcome == "pass" and replaced.checks.count() == 2
    # Another rubric text, another judge or Harbor's own are other reviews.
    record_review(rollout, reading(), source="judge", judge="gpt-x", rubric="default", rubric_text=RUBRIC + "#")
    record_review(rollout, reading(), source="judge", judge="claude", rubric="default", rubric_text=RUBRIC)
    record_review(rollout, reading(), source="harbor")
    assert Review.objects.filter(rollout=rollout).count() == 4
    assert existing_review(rollout, source="harbor").summary == "It stopped early."


def test_a_failed_reading_keeps_its_reason_and_never_overwrites_a_done_one():
    rollout = make_rollout()
    failed = record_failed_review(rollout, "the judge answered malformed JSON", source="judge", judge="j", rubric_text=RUBRIC)
    assert failed.state == "failed" and failed.error.startswith("the judge answered")
    done = record_review(rollout, reading(), source="judge", judge="j", rubric_text=RUBRIC)
    assert done.pk == failed.pk and done.state == "done" and done.error == ""
    kept = record_failed_review(rollout, "timeout", source="judge", judge="j", rubric_text=RUBRIC)
    assert kept.state == "done" and kept.checks.count() == 2
