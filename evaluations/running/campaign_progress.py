"""What the campaign page shows of a campaign's run, as plain data (its JSON endpoint serves the same)."""
from __future__ import annotations

from typing import Any

from django.utils import timezone

from autolab_site.durations import format_duration

from trajectories.models import Rollout, RolloutStatus
from trajectories import services as trajectories, statuses

from evaluations.models import Campaign
from evaluations.running.campaigns import needed_queues


def campaign_progress(campaign: Campaign, now=None) -> dict[str, Any]:
    """Everything the campaign page shows, as plain data (also its JSON endpoint)."""
    now = now or timezone.now()
    rollouts = list(
        campaign.rollouts.select_related("task").order_by("task__name", "index", "pk")
    )
    counts = {status: 0 for status in RolloutStatus.values}
    rows: dict[str, dict[str, Any]] = {}
    budget_total = budget_used = 0.0
    for rollout in rollouts:
        counts[rollout.status] += 1
        budget = float(rollout.task.budget_sec or 0)
        used = _agent_seconds(rollout, now)
        if budget:
            budget_total += budget
            budget_used += min(used, budget) if rollout.status not in statuses.ENDED else budget
        row = rows.setdefault(rollout.task.name, {"task": rollout.task.name, "task_id": rollout.task_id, "cells": []})
        row["cells"].append(
            {
                "id": rollout.pk,
                "index": rollout.index,
                "number": rollout.number,  # as every page names it, for the rollout's life
                "status": rollout.status,
                "reward": rollout.reward,
                "n_steps": rollout.n_steps,
                "infra_error": rollout.infra_error,
                "superseded": rollout.superseded,
                "cancel_requested": rollout.cancel_requested,
                "label": cell_label(rollout),
                "reason": rollout.status_reason if rollout.status != RolloutStatus.FINISHED else "",
                "elapsed_sec": round(used, 1) if used else None,
                "budget_sec": budget or None,
                "remaining_sec": round(max(budget - used, 0.0), 1) if budget and rollout.status in statuses.ACTIVE else None,
                "elapsed": format_duration(used) if used else "",
                "remaining": format_duration(max(budget - used, 0.0)) if budget and rollout.status in statuses.ACTIVE else "",
                "url": f"/rollouts/{rollout.pk}/",
            }
        )
    total = len(rollouts)
    done = sum(counts[status] for status in statuses.ENDED)
    elapsed = (now - campaign.started_at).total_seconds() if campaign.started_at else 0.0
    if campaign.finished_at and campaign.started_at:
        elapsed = (campaign.finished_at - campaign.started_at).total_seconds()
    eta = None
    if 0 < done < total and elapsed > 0 and campaign.status == Campaign.Status.RUNNING:
        eta = round(elapsed / done * (total - done), 1)
    checking = campaign.status == Campaign.Status.CHECKING
    summary = trajectories.job_summary(rollouts)
    return {
        "id": campaign.pk,
        "status": campaign.status,
        "status_label": campaign.get_status_display(),
        "status_reason": campaign.status_reason,
        "preflight": preflight_rows(campaign),
        "total": total,
        "done": done,
        "counts": counts,
        "counts_text": ", ".join(f"{status} {n}" for status, n in counts.items() if n),
        "elapsed_sec": round(elapsed, 1),
        "eta_sec": eta,
        "budget_total_sec": budget_total,
        "budget_remaining_sec": round(max(budget_total - budget_used, 0.0), 1),
        "elapsed": format_duration(elapsed, missing=""),
        "eta": format_duration(eta, missing=""),
        "budget_remaining": format_duration(max(budget_total - budget_used, 0.0)),
        "rows": list(rows.values()),
        # Harbor's job line ("36/36 finished, 2 errors, 14.5 M tokens, $212, 71 h") and the rewards' histogram.
        "job_line": summary.text,
        "reward_bins": [{"low": b.low, "high": b.high, "count": b.count} for b in summary.bins],
        "active": checking or any(status in statuses.ACTIVE for status in (r.status for r in rollouts)),
    }


def cell_label(rollout: Rollout) -> str:
    """A grid cell's state as people read it: "failed (configuration error)", "queued (retry 2)"."""
    if rollout.status == RolloutStatus.FAILED and rollout.infra_error:
        return "failed (configuration error)" if rollout.failure_cause == "configuration_error" else "failed (infrastructure)"
    if rollout.status in statuses.RAN and trajectories.ended_by_the_agent(rollout):
        return f"{rollout.status} ({trajectories.cause_label(rollout.failure_cause).lower()})"
    if rollout.status == RolloutStatus.QUEUED and rollout.attempts:
        return f"queued (attempt {rollout.attempts + 1} next)"
    if rollout.cancel_requested and rollout.status in statuses.ACTIVE:
        return f"{rollout.status} (cancelling)"
    return rollout.status


def preflight_rows(campaign: Campaign) -> list[dict[str, Any]]:
    """Each needed queue's preflight: its checks once a worker answered, else that it waits."""
    rows = []
    reports = campaign.preflight or {}
    if campaign.status != Campaign.Status.CHECKING and not reports:
        return rows
    for queue in needed_queues(campaign):
        report = reports.get(queue)
        if report is None:
            waiting = "waiting for the broker" if campaign.preflight_sent_at is None else "waiting for a worker"
            rows.append({"queue": queue, "worker": "", "ok": None, "checks": [], "waiting": waiting})
        else:
            rows.append({**report, "waiting": ""})
    return rows


def _agent_seconds(rollout: Rollout, now) -> float:
    if not rollout.agent_started_at:
        return 0.0
    end = rollout.agent_finished_at or (now if rollout.status in statuses.ACTIVE else rollout.finished_at) or now
    return max((end - rollout.agent_started_at).total_seconds(), 0.0)
