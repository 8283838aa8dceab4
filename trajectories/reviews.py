"""The one writer of Review rows: a rollout's reading against a rubric, stored whole or not at all.

Harbor's imported `analysis.json` and our judge's answers both come here
(`record_review`), as does a judge that answered nothing usable
(`record_failed_review`). A review is unique per rollout, source, judge
and rubric text; one already there is kept unless the caller asks to
replace it, so re-running a batch costs nothing for what was read.
"""
from __future__ import annotations

import hashlib

from django.db import transaction

from autolab_site.masking import mask_text
from trajectories.models import Review, ReviewCheck, Rollout
from trajectories.reading.masked import mask_reading
from trajectories.reading.review_data import Reading


def rubric_digest(rubric_text: str) -> str:
    """sha256 of a rubric's text: the same name with other criteria is another review."""
    return hashlib.sha256(rubric_text.encode()).hexdigest() if rubric_text else ""


def existing_review(rollout: Rollout, *, source: str, judge: str = "", rubric_text: str = "") -> Review | None:
    """The review already stored for this rollout, source, judge and rubric, if any."""
    return Review.objects.filter(
        rollout=rollout, source=source, judge=judge, rubric_digest=rubric_digest(rubric_text),
    ).first()


@transaction.atomic
def record_review(
    rollout: Rollout, reading: Reading, *, source: str, judge: str = "", rubric: str = "",
    rubric_text: str = "", requested_by=None, replace: bool = False,
) -> Review:
    """Store `reading` as the rollout's review (its checks replaced whole); keep an existing one unless `replace`.

    Its prose is masked (autolab_site.masking): a reader quotes the trial it read.
    """
    reading = mask_reading(reading)
    key = {"rollout": rollout, "source": source, "judge": judge, "rubric_digest": rubric_digest(rubric_text)}
    review = Review.objects.select_for_update().filter(**key).first()
    if review is not None and review.state == Review.State.DONE and not replace:
        return review
    if review is None:
        review = Review(**key)
    review.rubric = rubric
    review.state = Review.State.DONE
    review.error = ""
    review.summary = reading.summary
    review.tokens_in = reading.tokens_in
    review.tokens_out = reading.tokens_out
    review.cost_usd = reading.cost_usd
    review.requested_by = requested_by
    review.save()
    review.checks.all().delete()
    ReviewCheck.objects.bulk_create([
        ReviewCheck(review=review, name=check.name, outcome=check.outcome, explanation=check.explanation, steps=list(check.steps))
        for check in reading.checks
    ])
    return review


@transaction.atomic
def record_failed_review(
    rollout: Rollout, error: str, *, source: str, judge: str = "", rubric: str = "", rubric_text: str = "",
    requested_by=None, tokens_in: int | None = None, tokens_out: int | None = None, cost_usd: float | None = None,
) -> Review:
    """A reading that failed (malformed answer, no answer): the reason kept, a done review never overwritten."""
    key = {"rollout": rollout, "source": source, "judge": judge, "rubric_digest": rubric_digest(rubric_text)}
    review = Review.objects.select_for_update().filter(**key).first()
    if review is not None and review.state == Review.State.DONE:
        return review
    review = review or Review(**key)
    review.rubric = rubric
    review.state = Review.State.FAILED
    review.error = mask_text(error)  # a malformed answer is quoted in it
    review.summary = ""
    review.tokens_in, review.tokens_out, review.cost_usd = tokens_in, tokens_out, cost_usd
    review.requested_by = requested_by
    review.save()
    review.checks.all().delete()
    return review


def with_reviews(rollouts):
    """`rollouts` (a queryset) with their reviews and checks fetched in two queries, for review_records."""
    from django.db.models import Prefetch

    return rollouts.prefetch_related(
        Prefetch("reviews", queryset=Review.objects.order_by("source", "judge", "rubric", "pk")),
        Prefetch("reviews__checks", queryset=ReviewCheck.objects.order_by("id")),
    )


def review_records(rollout: Rollout) -> list[dict]:
    """Every review of the rollout as plain data (the API's `reviews`): summary, checks with steps, cost, error."""
    return [
        {
            "source": review.source,
            "judge": review.judge,
            "rubric": review.rubric,
            "state": review.state,
            "error": review.error,
            "summary": review.summary,
            "checks": [
                {"name": check.name, "outcome": check.outcome, "explanation": check.explanation, "steps": list(check.steps)}
                for check in review.checks.all()
            ],
            "cost_usd": review.cost_usd,
            "tokens_in": review.tokens_in,
            "tokens_out": review.tokens_out,
            "updated_at": review.updated_at.isoformat() if review.updated_at else None,
        }
        for review in rollout.reviews.all()
    ]
