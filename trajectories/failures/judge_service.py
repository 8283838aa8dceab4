"""The judge's verdicts beside the failure rules, on the failures page (the ORM side of `judge_agreement`).

A rollout's verdict is its latest done review by our judge (any judge or
rubric: the newest reading is the one staff see). The page shows its failing
checks beside the rule's cause and counts where the two disagree; the
effective cause (a staff label's first) is not touched.
"""
from __future__ import annotations

from typing import Any

from django.db.models import Case, CharField, Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from trajectories.failures.judge_agreement import AGREE, DISAGREEMENTS, JUDGE_ONLY, NOT_JUDGED, RULE_ONLY, RULE_SILENT
from trajectories.models import Review, ReviewCheck, Rollout

DISAGREE_FIRST = "disagree"


def with_judge_verdict(rollouts: QuerySet[Rollout]) -> QuerySet[Rollout]:
    """`rollouts` annotated with `judge_review` (id or None), `judge_fails` (None: not read) and `disagreement`."""
    latest = Review.objects.filter(
        rollout=OuterRef("pk"), source=Review.Source.JUDGE, state=Review.State.DONE,
    ).order_by("-updated_at", "-id").values("id")[:1]
    fails = (
        ReviewCheck.objects.filter(review=OuterRef("judge_review"), outcome=ReviewCheck.Outcome.FAIL)
        .order_by().values("review").annotate(n=Count("id")).values("n")
    )
    rows = rollouts.annotate(judge_review=Subquery(latest, output_field=IntegerField()))
    rows = rows.annotate(judge_fails=Case(
        When(judge_review__isnull=True, then=Value(None)),
        default=Coalesce(Subquery(fails, output_field=IntegerField()), Value(0)),
        output_field=IntegerField(),
    ))
    # The same rule as judge_agreement.disagreement, as SQL (a test holds the two to one table of cases).
    return rows.annotate(disagreement=Case(
        When(judge_fails__isnull=True, then=Value(AGREE)),
        When(Q(judge_fails=0) & ~Q(failure_cause__in=RULE_SILENT + NOT_JUDGED), then=Value(RULE_ONLY)),
        When(Q(judge_fails__gt=0) & Q(failure_cause__in=RULE_SILENT), then=Value(JUDGE_ONLY)),
        default=Value(AGREE),
        output_field=CharField(),
    ))


def disagreements_first(rollouts: QuerySet[Rollout]) -> QuerySet[Rollout]:
    """`rollouts` (with_judge_verdict) with the disagreements first, each part in the list's own order."""
    order = list(rollouts.query.order_by) or ["pk"]
    return rollouts.annotate(
        disagree_rank=Case(When(disagreement=AGREE, then=Value(1)), default=Value(0), output_field=IntegerField())
    ).order_by("disagree_rank", *order)


def summary(rollouts: QuerySet[Rollout]) -> dict[str, Any]:
    """How many of `rollouts` (with_judge_verdict) the judge read, and how many of those disagree, by kind."""
    counts = {
        row["disagreement"]: row["n"]
        for row in rollouts.exclude(judge_review__isnull=True).order_by().values("disagreement").annotate(n=Count("id"))
    }
    kinds = [(kind, DISAGREEMENTS[kind], counts.get(kind, 0)) for kind in (RULE_ONLY, JUDGE_ONLY)]
    detail = "; ".join(f"{n}: {text}" for _, text, n in kinds if n)
    return {"read": sum(counts.values()), "disagree": sum(n for _, _, n in kinds), "kinds": kinds, "detail": detail}


def verdicts(review_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Review id -> what the list shows of it: the judge, its failing checks (name, explanation), its summary."""
    out: dict[int, dict[str, Any]] = {}
    for review in Review.objects.filter(pk__in=[pk for pk in review_ids if pk]).prefetch_related("checks"):
        checks = list(review.checks.all())
        out[review.pk] = {
            "judge": review.judge,
            "summary": review.summary,
            "failing": [(check.name, check.explanation) for check in checks if check.outcome == ReviewCheck.Outcome.FAIL],
            "n_checks": len(checks),
        }
    return out
