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
from trajectories import services as trajectories

from . import dispatch, lifecycle
from agents.models import AgentModel, Harness
from .models import Backend, Campaign
from .runner import RETRY, RunOutcome, run_rollout
from .sandbox import backends
from agents.services import ensure_harness

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


def _new_campaign(model: AgentModel, harness: Harness, version: BenchmarkVersion, tasks: list[Task], *, k: int,
                  backend: str, checked_first: bool, **fields: Any) -> Campaign:
    """The Campaign row and its chosen tasks, after checking them (no rollouts)."""
    if k < 1:
        raise CampaignError("k must be at least 1")
    if backend not in Backend.values:
        raise CampaignError(f"unknown backend {backend!r} (one of {', '.join(Backend.values)})")
    if any(task.version_id != version.pk for task in tasks):
        raise CampaignError(f"every task must belong to {version}")
    campaign = lifecycle.new_campaign(checked_first=checked_first, model=model, harness=harness, version=version, k=k,
                                      backend=backend, **fields)
    if tasks:
        campaign.tasks.set(tasks)
    return campaign


def launch(
    model: AgentModel,
    harness: Harness,
    version: BenchmarkVersion,
    *,
    tasks: Iterable[Task] | None = None,
    k: int = 3,
    backend: str = Backend.DOCKER,
    created_by=None,
    notes: str = "",
    supersede: bool = False,
    preflight: bool = True,
) -> Campaign:
    """A campaign that checks first (evaluations.preflight) and starts once every queue it needs passed.

    Without `preflight` it starts at once (create_campaign). `supersede`:
    when it starts, earlier rollouts of the same model, harness and tasks
    leave the figures (a re-evaluation); otherwise its rollouts add to them.
    """
    if not preflight:
        return create_campaign(model, harness, version, tasks=tasks, k=k, backend=backend, created_by=created_by,
                               notes=notes, supersede=supersede)
    with transaction.atomic():
        campaign = _new_campaign(model, harness, version, list(tasks or []), k=k, backend=backend,
                                 created_by=created_by, notes=notes, supersede=supersede, checked_first=True)
        if not campaign_tasks(campaign):
            raise CampaignError(f"{version} has no tasks")
    transaction.on_commit(lambda: setattr(campaign, "send_report", send_preflight(campaign)))
    return campaign


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
    supersede: bool = False,
) -> Campaign:
    """A campaign with its k rollouts per task (queued), sent to the workers after commit; no preflight.

    The send's report (dispatch.SendReport: what the broker took, what
    waits for it) is left on `campaign.send_report` once it has run.
    """
    with transaction.atomic():
        campaign = _new_campaign(model, harness, version, list(tasks or []), k=k, backend=backend,
                                 created_by=created_by, notes=notes, supersede=supersede, checked_first=False)
        add_rollouts(campaign)
        if supersede:
            supersede_earlier(campaign)
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
            lifecycle.create_queued(campaign, task, trial_name=trial_name_for(task, campaign, index))
            n += 1
    return n


def enqueue_campaign(campaign: Campaign) -> dispatch.SendReport:
    """Send the messages of the campaign's queued rollouts (what the broker is down for waits for the reaper)."""
    rollouts = Rollout.objects.filter(campaign=campaign, status=RolloutStatus.QUEUED).select_related("task")
    report = dispatch.send_many(rollouts)
    if report.unsent:
        logger.warning("campaign %s: %s", campaign.pk, report.message)
    return report


def supersede_earlier(campaign: Campaign) -> int:
    """Earlier rollouts of the campaign's model, harness and tasks leave the figures (and stop, if running)."""
    old = Rollout.objects.filter(
        model=campaign.model, harness=campaign.harness, task__in=campaign_tasks(campaign), superseded=False
    ).exclude(campaign=campaign)
    n = 0
    for rollout in old:
        if rollout.is_active:
            cancel_rollout(rollout, detail=f"superseded by campaign {campaign.pk}")
        rollout.superseded = True
        rollout.save(update_fields=["superseded"])
        n += 1
    return n


def reevaluate(campaign: Campaign, *, created_by=None, enqueue: bool = True, preflight: bool = False) -> Campaign:
    """A new campaign like `campaign`; the old rollouts of the same entry and tasks become superseded.

    Superseded rollouts stay viewable but leave the figures.
    """
    tasks = list(campaign.tasks.all())
    options = dict(tasks=tasks, k=campaign.k, backend=campaign.backend, created_by=created_by,
                   notes=f"re-evaluation of campaign {campaign.pk}", supersede=True)
    if preflight:
        return launch(campaign.model, campaign.harness, campaign.version, **options)
    return create_campaign(campaign.model, campaign.harness, campaign.version, enqueue=enqueue, **options)


# -- preflight ----------------------------------------------------------------------------


def needed_queues(campaign: Campaign) -> list[str]:
    return sorted({dispatch.queue_for(task)[0] for task in campaign_tasks(campaign)})


def send_preflight(campaign: Campaign) -> dispatch.SendReport:
    """Ask a worker of each queue the campaign needs to check it (evaluations.preflight)."""
    report = dispatch.SendReport()
    for queue in needed_queues(campaign):
        try:
            dispatch.send_preflight(campaign.pk, queue)
            report.sent.append(campaign.pk)
        except dispatch.BROKER_DOWN as exc:
            report.error = f"{type(exc).__name__}: {exc}"[:300]
            report.unsent.append(campaign.pk)
            break
    if not report.error:
        Campaign.objects.filter(pk=campaign.pk).update(preflight_sent_at=timezone.now())
    return report


def model_settings(model: AgentModel, harness: Harness):
    from .preflight import ModelSettings

    return ModelSettings(
        harness=harness.name, litellm_model=model.litellm_model or model.name, api_base=model.api_base,
        api_key_env=model.api_key_env, sampling_params=dict(model.sampling_params or {}),
    )


def preflight_inputs(campaign: Campaign, queue: str):
    """(model settings, backend, task folders) that a worker of `queue` checks for the campaign."""
    folders = [task.source_path for task in campaign_tasks(campaign) if dispatch.queue_for(task)[0] == queue]
    return model_settings(campaign.model, campaign.harness), campaign.backend, folders


def preflight_here(model: AgentModel, harness: Harness, version: BenchmarkVersion, tasks: list[Task], backend: str):
    """The preflight in this process (for campaigns run in it): a PreflightReport."""
    from .preflight import run_checks
    from .runner import serve_scripted_stub

    serve_scripted_stub(model)
    chosen = tasks or list(Task.objects.filter(version=version))
    return run_checks(model_settings(model, harness), backend, [task.source_path for task in chosen],
                      queue="this process")


def record_preflight(campaign_id: int, report: dict[str, Any]) -> str:
    """A queue's preflight report: fail the campaign with its reason, or start it once every queue passed.

    Returns the campaign's status afterwards.
    """
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign_id)
        if campaign.status != Campaign.Status.CHECKING:
            return campaign.status  # cancelled, or already failed by another queue's report
        campaign.preflight = {**(campaign.preflight or {}), report["queue"]: report}
        campaign.save(update_fields=["preflight"])
        if not report["ok"]:
            failed = "; ".join(f"{c['name']}: {c['detail']}" for c in report["checks"] if not c["ok"])
            lifecycle.fail_preflight(campaign, f"preflight failed on {report['worker']} (queue {report['queue']}): {failed}")
            return campaign.status
        if set(campaign.preflight) < set(needed_queues(campaign)) or not all(r["ok"] for r in campaign.preflight.values()):
            return campaign.status
        start(campaign)
    transaction.on_commit(lambda: enqueue_campaign(campaign))
    return Campaign.Status.PENDING


def start(campaign: Campaign) -> int:
    """A checked campaign's rollouts, created (queued); the caller sends them after commit."""
    n = add_rollouts(campaign)
    if campaign.supersede:
        supersede_earlier(campaign)
    lifecycle.start(campaign)
    return n


def fail_silent_preflights(timeout_sec: float | None = None) -> list[int]:
    """Campaigns whose preflight no worker answered in time: failed, with the queue that is not served.

    A queue that a running worker consumes is served, however long its
    workers are busy with trials: its preflight waits for one of them.
    """
    from datetime import timedelta

    timeout = float(timeout_sec if timeout_sec is not None else getattr(settings, "RUNNER_PREFLIGHT_TIMEOUT_SEC", 120))
    limit = timezone.now() - timedelta(seconds=timeout)
    failed = []
    served: dict[str, bool] = {}
    for campaign in Campaign.objects.filter(status=Campaign.Status.CHECKING, preflight_sent_at__lt=limit):
        silent = [queue for queue in needed_queues(campaign) if queue not in (campaign.preflight or {})]
        if not silent:
            continue
        for queue in silent:
            if queue not in served:
                served[queue] = dispatch.serves(queue)
        unserved = [queue for queue in silent if not served[queue]]
        if not unserved:
            # Its workers run trials: the preflight waits its turn, and says so.
            Campaign.objects.filter(pk=campaign.pk, status=Campaign.Status.CHECKING).update(
                status_reason=f"preflight: waiting for a free worker on queue {', '.join(silent)} (its workers are busy)"
            )
            continue
        silent = unserved
        queues = ", ".join(silent)
        reason = (f"preflight: no worker answered on queue {queues} within {timeout:.0f} s; start one "
                  f"(celery -A autolab_site worker -Q {silent[0]}) and launch again")
        if lifecycle.fail_preflight(campaign, reason):
            failed.append(campaign.pk)
    return failed


def unsent_preflights() -> list[Campaign]:
    return list(Campaign.objects.filter(status=Campaign.Status.CHECKING, preflight_sent_at__isnull=True))


# -- cancelling -------------------------------------------------------------------------


def cancel_rollout(rollout: Rollout, *, detail: str = "cancelled by staff") -> bool:
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


def cancel(campaign: Campaign, *, detail: str = "campaign cancelled by staff") -> int:
    """Cancel a campaign that has not ended (evaluations.lifecycle) and drop its rollouts' messages; how many it stopped."""
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
    checking = campaign.status == Campaign.Status.CHECKING
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
        "elapsed": format_duration(elapsed),
        "eta": format_duration(eta),
        "budget_remaining": format_duration(max(budget_total - budget_used, 0.0)),
        "rows": list(rows.values()),
        "active": checking or any(status in ACTIVE_STATUSES for status in (r.status for r in rollouts)),
    }


def cell_label(rollout: Rollout) -> str:
    """A grid cell's state as people read it: "failed (configuration error)", "queued (retry 2)"."""
    if rollout.status == RolloutStatus.FAILED and rollout.infra_error:
        return "failed (configuration error)" if rollout.failure_cause == "configuration_error" else "failed (infrastructure)"
    if rollout.status in (RolloutStatus.FINISHED, RolloutStatus.FAILED) and trajectories.ended_its_sandbox(rollout):
        return f"{rollout.status} ({trajectories.cause_label(rollout.failure_cause).lower()})"
    if rollout.status == RolloutStatus.QUEUED and rollout.attempts:
        return f"queued (attempt {rollout.attempts + 1} next)"
    if rollout.cancel_requested and rollout.status in ACTIVE_STATUSES:
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


def run_campaign_sync(campaign: Campaign, *, own_process: bool = False) -> dict[str, int]:
    """Run every queued rollout of a campaign here, not on a worker; retries inline.

    `own_process` (`evaluate --sync`) runs each rollout in a process of its
    own, forked from this one, as a worker would: a trial's event loop,
    threads, memory and a crash stay its own.
    """
    import time

    run = run_rollout_in_child if own_process else run_rollout
    outcomes: dict[str, int] = {}
    for rollout_id in campaign.rollouts.filter(status=RolloutStatus.QUEUED).order_by("pk").values_list("pk", flat=True):
        while True:
            outcome = run(rollout_id)
            if outcome.status != RETRY:
                break
            time.sleep(min(outcome.retry_in, 5))
        outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
    lifecycle.refresh_campaign(campaign.pk)
    return outcomes


def run_rollout_in_child(rollout_id: int) -> RunOutcome:
    """`run_rollout` in a forked process of its own; its outcome comes back through a pipe.

    A child that dies without an answer leaves its rollout to the reaper
    (its heartbeat stops), as a dead worker does.
    """
    import multiprocessing

    from django.db import connections

    connections.close_all()  # the child opens its own; a shared socket would serve both
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run_and_report, args=(rollout_id, sender), name=f"rollout-{rollout_id}")
    child.start()
    sender.close()
    try:
        status, detail, retry_in = receiver.recv()
    except EOFError:
        status, detail, retry_in = RolloutStatus.FAILED, "", 0.0
    child.join()
    if not detail and child.exitcode:
        detail = f"the rollout's process died (exit code {child.exitcode}); the reaper takes it from here"
    return RunOutcome(status, detail, retry_in=retry_in)


def _run_and_report(rollout_id: int, sender) -> None:
    from django.db import connections

    try:
        outcome = run_rollout(rollout_id)
        sender.send((outcome.status, outcome.detail, outcome.retry_in))
    finally:
        connections.close_all()
        sender.close()


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
            cancel(waiting, detail="replaced by a demo run in this process")
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
    harness = ensure_harness(harness_name)
    return model, harness


def examples_dir() -> Path:
    return Path(settings.BASE_DIR) / "examples" / "tasks"
