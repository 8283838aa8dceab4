"""Campaigns: create, send, cancel, re-evaluate, and the demo.

A campaign is model x harness x benchmark version x tasks x k rollouts on
one sandbox backend. Creating one creates its Rollout rows (status queued)
up front, so the campaign page shows the whole grid at once; sending puts
one Celery message per rollout on the `cpu` or `gpu` queue (dispatch.py).
Statuses change through lifecycle.py only. Nothing here knows about HTTP.
"""
from __future__ import annotations

import logging
import secrets
from pathlib import Path
from typing import Any, Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from tasks.models import BenchmarkVersion, Task
from trajectories.models import ACTIVE_STATUSES, Rollout, RolloutStatus

from . import dispatch, lifecycle
from .models import AgentModel, Backend, Campaign, Harness
from .runner import RETRY, run_rollout
from .sandbox import backends

logger = logging.getLogger(__name__)

TERMINAL_STATUSES = lifecycle.TERMINAL


class CampaignError(ValueError):
    """Bad campaign input, with a message for the person who gave it."""


def trial_name_for(task: Task, campaign: Campaign, index: int) -> str:
    token = secrets.token_urlsafe(5).replace("-", "x").replace("_", "y")[:7]
    return f"{task.name[:200]}__c{campaign.pk}r{index}__{token}"


# -- creating ---------------------------------------------------------------------


def campaign_tasks(campaign: Campaign) -> list[Task]:
    chosen = list(campaign.tasks.all())
    if chosen:
        return sorted(chosen, key=lambda task: task.name)
    return list(Task.objects.filter(version=campaign.version).order_by("name"))


def resolve_tasks(version: BenchmarkVersion, names: Iterable[str] | None) -> list[Task]:
    names = [name.strip() for name in (names or []) if name and name.strip()]
    if not names:
        return []
    found = {task.name: task for task in Task.objects.filter(version=version, name__in=names)}
    missing = [name for name in names if name not in found]
    if missing:
        raise CampaignError(f"no task {', '.join(missing)} in {version}")
    return [found[name] for name in names]


def create_campaign(
    model: AgentModel,
    harness: Harness,
    version: BenchmarkVersion,
    *,
    tasks: Iterable[Task] | None = None,
    k: int = 3,
    backend: str = Backend.DOCKER,
    created_by=None,
    notes: str = "",
    enqueue: bool = True,
) -> Campaign:
    """A campaign with its k rollouts per task (queued), sent to the workers after commit.

    The send's report (dispatch.SendReport: what the broker took, what
    waits for it) is left on `campaign.send_report` once it has run.
    """
    if k < 1:
        raise CampaignError("k must be at least 1")
    if backend not in Backend.values:
        raise CampaignError(f"unknown backend {backend!r} (one of {', '.join(Backend.values)})")
    tasks = list(tasks or [])
    if any(task.version_id != version.pk for task in tasks):
        raise CampaignError(f"every task must belong to {version}")
    with transaction.atomic():
        campaign = Campaign.objects.create(
            model=model, harness=harness, version=version, k=k, backend=backend, created_by=created_by, notes=notes
        )
        if tasks:
            campaign.tasks.set(tasks)
        add_rollouts(campaign)
    if enqueue:
        transaction.on_commit(lambda: setattr(campaign, "send_report", enqueue_campaign(campaign)))
    return campaign


def add_rollouts(campaign: Campaign) -> int:
    """Create the campaign's k queued rollouts per task (its tasks, or all of its version)."""
    chosen = campaign_tasks(campaign)
    if not chosen:
        raise CampaignError(f"{campaign.version} has no tasks")
    n = 0
    for task in chosen:
        for index in range(campaign.k):
            lifecycle.create_queued(campaign, task, index=index, trial_name=trial_name_for(task, campaign, index))
            n += 1
    return n


def enqueue_campaign(campaign: Campaign) -> dispatch.SendReport:
    """Send the messages of the campaign's queued rollouts (what the broker is down for waits for the reaper)."""
    rollouts = Rollout.objects.filter(campaign=campaign, status=RolloutStatus.QUEUED).select_related("task")
    report = dispatch.send_many(rollouts)
    if report.unsent:
        logger.warning("campaign %s: %s", campaign.pk, report.message)
    return report


def reevaluate(campaign: Campaign, *, created_by=None, enqueue: bool = True) -> Campaign:
    """A new campaign like `campaign`; the old rollouts of the same entry and tasks become superseded.

    Superseded rollouts stay viewable but leave the figures.
    """
    tasks = list(campaign.tasks.all())
    with transaction.atomic():
        new = create_campaign(
            campaign.model, campaign.harness, campaign.version, tasks=tasks, k=campaign.k, backend=campaign.backend,
            created_by=created_by, notes=f"re-evaluation of campaign {campaign.pk}", enqueue=enqueue,
        )
        old = Rollout.objects.filter(
            model=campaign.model, harness=campaign.harness, task__in=campaign_tasks(new), superseded=False
        ).exclude(campaign=new)
        for rollout in old:
            if rollout.is_active:
                request_cancel(rollout, detail=f"superseded by campaign {new.pk}")
            rollout.superseded = True
            rollout.save(update_fields=["superseded"])
    return new


# -- cancelling -------------------------------------------------------------------------


def request_cancel(rollout: Rollout, *, detail: str = "cancelled by staff") -> bool:
    """Cancel a rollout: a queued one at once, a running one through its worker.

    The running worker sees `cancel_requested` within seconds, cancels the
    trial (Harbor stops the sandbox) and marks the rollout cancelled. The
    Celery message is also revoked so that a queued one is dropped.
    """
    changed = lifecycle.cancel(rollout.pk, detail)
    if changed is None:
        return False
    dispatch.revoke(changed.celery_task_id)
    return True


def cancel_campaign(campaign: Campaign, *, detail: str = "campaign cancelled by staff") -> int:
    changed = lifecycle.cancel_campaign(campaign, detail)
    for rollout in changed:
        dispatch.revoke(rollout.celery_task_id)
    return len(changed)


# -- progress (for the campaign page) ----------------------------------------------------


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
            budget_used += min(used, budget) if rollout.status not in TERMINAL_STATUSES else budget
        row = rows.setdefault(rollout.task.name, {"task": rollout.task.name, "task_id": rollout.task_id, "cells": []})
        row["cells"].append(
            {
                "id": rollout.pk,
                "index": rollout.index,
                "status": rollout.status,
                "reward": rollout.reward,
                "n_steps": rollout.n_steps,
                "infra_error": rollout.infra_error,
                "superseded": rollout.superseded,
                "cancel_requested": rollout.cancel_requested,
                "elapsed_sec": round(used, 1) if used else None,
                "budget_sec": budget or None,
                "remaining_sec": round(max(budget - used, 0.0), 1) if budget and rollout.status in ACTIVE_STATUSES else None,
                "elapsed": format_duration(used) if used else "",
                "remaining": format_duration(max(budget - used, 0.0)) if budget and rollout.status in ACTIVE_STATUSES else "",
                "url": f"/rollouts/{rollout.pk}/",
            }
        )
    total = len(rollouts)
    done = sum(counts[status] for status in TERMINAL_STATUSES)
    elapsed = (now - campaign.started_at).total_seconds() if campaign.started_at else 0.0
    if campaign.finished_at and campaign.started_at:
        elapsed = (campaign.finished_at - campaign.started_at).total_seconds()
    eta = None
    if 0 < done < total and elapsed > 0 and campaign.status == Campaign.Status.RUNNING:
        eta = round(elapsed / done * (total - done), 1)
    return {
        "id": campaign.pk,
        "status": campaign.status,
        "total": total,
        "done": done,
        "counts": counts,
        "counts_text": ", ".join(f"{status} {n}" for status, n in counts.items() if n),
        "elapsed_sec": round(elapsed, 1),
        "eta_sec": eta,
        "budget_total_sec": budget_total,
        "budget_remaining_sec": round(max(budget_total - budget_used, 0.0), 1),
        "elapsed": format_duration(elapsed),
        "eta": format_duration(eta),
        "budget_remaining": format_duration(max(budget_total - budget_used, 0.0)),
        "rows": list(rows.values()),
        "active": any(status in ACTIVE_STATUSES for status in (r.status for r in rollouts)),
    }


def format_duration(seconds: float | None) -> str:
    """"1 h 05 min", "4 min 10 s", "12 s"; "" for None."""
    if seconds is None:
        return ""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _agent_seconds(rollout: Rollout, now) -> float:
    if not rollout.agent_started_at:
        return 0.0
    end = rollout.agent_finished_at or (now if rollout.status in ACTIVE_STATUSES else rollout.finished_at) or now
    return max((end - rollout.agent_started_at).total_seconds(), 0.0)


# -- synchronous runs and the demo -----------------------------------------------------------


def run_campaign_sync(campaign: Campaign) -> dict[str, int]:
    """Run every queued rollout of a campaign in this process (no worker); retries inline."""
    import time

    outcomes: dict[str, int] = {}
    for rollout_id in campaign.rollouts.filter(status=RolloutStatus.QUEUED).order_by("pk").values_list("pk", flat=True):
        while True:
            outcome = run_rollout(rollout_id)
            if outcome.status != RETRY:
                break
            time.sleep(min(outcome.retry_in, 5))
        outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
    lifecycle.refresh_campaign(campaign.pk)
    return outcomes


DEMO_HARNESSES = [
    # (harness name, model name, display name)
    ("oracle", "oracle", "reference solution (oracle)"),
    ("nop", "nop", "no-op baseline (nop)"),
    ("terminus-2", "scripted-stub", "scripted stub (not a model)"),
]


def demo_backend() -> tuple[str, str]:
    """(backend, why) for the demo: podman when it works here, else bubblewrap; ("", why not) for neither."""
    podman = backends.get("podman").host_problems() or backends.missing_images(
        "podman", [examples_dir() / name / "environment" / "Dockerfile" for name in ("count_primes",)]
    )
    if not podman:
        return "podman", "podman is installed: the demo runs in containers"
    bubblewrap = backends.get("bubblewrap").host_problems()
    if not bubblewrap:
        return "bubblewrap", f"no podman ({'; '.join(podman)}): the demo runs in the bubblewrap sandbox"
    return "", f"no sandbox on this host: podman: {'; '.join(podman)}; bubblewrap: {'; '.join(bubblewrap)}"


def run_demo_campaigns(
    tasks_version: str = "examples", *, run_now: bool = False, k: int = 1, backend: str = ""
) -> list[str]:
    """Evaluate oracle, nop and the scripted stub on the example tasks (podman, else bubblewrap).

    `run_now` runs the rollouts in this process; otherwise they are queued
    for a worker (which serves the stub itself). Idempotent: an entry that
    already has a campaign on this version (ended, or queued when not
    running now) is skipped. Returns one line per entry for the caller to print.
    """
    version = BenchmarkVersion.objects.filter(name=tasks_version).first()
    if version is None:
        return [f"demo campaigns skipped: no benchmark version {tasks_version!r} (import the example tasks first)"]
    why = "as asked"
    if not backend:
        backend, why = demo_backend()
    if not backend:
        return [f"demo campaigns skipped: {why}"]
    lines = [f"demo backend: {backend} ({why})"]
    for harness_name, model_name, display in DEMO_HARNESSES:
        model, harness = demo_model_and_harness(harness_name, model_name, display)
        existing = Campaign.objects.filter(model=model, harness=harness, version=version).exclude(
            status=Campaign.Status.CANCELLED
        )
        done = existing.exclude(status__in=[Campaign.Status.PENDING, Campaign.Status.RUNNING]).first()
        if done is not None:
            lines.append(f"demo {display}: campaign {done.pk} already {done.get_status_display().lower()}")
            continue
        waiting = existing.first()
        if waiting is not None and not run_now:
            lines.append(f"demo {display}: campaign {waiting.pk} already queued")
            continue
        if waiting is not None:
            cancel_campaign(waiting, detail="replaced by a demo run in this process")
        campaign = create_campaign(
            model, harness, version, k=k, backend=backend, notes="demo", enqueue=not run_now
        )
        if run_now:
            outcomes = run_campaign_sync(campaign)
            summary = ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items()))
            lines.append(f"demo {display}: campaign {campaign.pk} ran: {summary}")
        else:
            lines.append(f"demo {display}: campaign {campaign.pk} queued ({campaign.rollouts.count()} rollouts)")
    return lines


def stub_port() -> int:
    return int(getattr(settings, "STUB_LLM_PORT", 8765))


def demo_model_and_harness(harness_name: str, model_name: str, display: str) -> tuple[AgentModel, Harness]:
    from .stub_llm import STUB_API_KEY, STUB_MODEL_INFO

    model, created = AgentModel.objects.get_or_create(
        name=model_name, defaults={"display_name": display, "is_scripted": True, "provider": "autolab-site"}
    )
    if harness_name == "terminus-2":
        wanted = {
            "litellm_model": f"openai/{model_name}",
            "api_base": f"http://127.0.0.1:{stub_port()}/v1",
            "api_key_env": "",
            # The stub checks no key; a literal placeholder spares the
            # workers an OPENAI_API_KEY just for the demo.
            "sampling_params": {"temperature": 0.0, "model_info": STUB_MODEL_INFO, "api_key": STUB_API_KEY},
        }
        changed = [name for name, value in wanted.items() if getattr(model, name) != value]
        for name in changed:
            setattr(model, name, wanted[name])
        if changed:
            model.save(update_fields=changed)
    harness, _ = Harness.objects.get_or_create(name=harness_name, version="")
    return model, harness


def examples_dir() -> Path:
    return Path(settings.BASE_DIR) / "examples" / "tasks"
