"""The job page: trials imported from one Harbor job (sharing its `job_id`), summed up as Harbor's job view does."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from trajectories import jobs, reviews
from trajectories.templatetags.review_tags import OUTCOME_BADGES

# A job of thousands of trials lists its first ones; the summary covers all of them.
LISTED = 1000


@require_GET
def job_detail(request, job_id: str):
    rollouts = jobs.job_rollouts(job_id)
    job_review = jobs.job_review(job_id)
    total = rollouts.count()
    if not total and job_review is None:
        raise Http404("No imported trial belongs to this job.")
    listed = list(reviews.with_reviews(rollouts)[:LISTED])
    rows = [
        {
            "rollout": rollout,
            "checks": [
                (check.name, check.outcome, OUTCOME_BADGES.get(check.outcome, "warn"), review.get_source_display())
                for review in rollout.reviews.all() if review.state == "done" for check in review.checks.all()
            ],
            "facts": jobs.facts(rollout),
            "tokens": None if rollout.n_input_tokens is None and rollout.n_output_tokens is None
            else (rollout.n_input_tokens or 0) + (rollout.n_output_tokens or 0),
        }
        for rollout in listed
    ]
    return render(request, "trajectories/job_detail.html", {
        "nav": "rollouts",
        "job_id": job_id,
        "summary": jobs.summary_of(rollouts),
        "job_review": job_review,
        "rows": rows,
        "total": total,
        "more": max(0, total - len(listed)),
    })
