"""Campaigns: create, check (preflight), send, cancel, re-evaluate.

A campaign is model x harness x benchmark version x tasks x k rollouts on
one sandbox backend. Creating one creates its Rollout rows (status queued)
up front, so the campaign page shows the whole grid at once; sending puts
one Celery message per rollout on the `cpu` or `gpu` queue (dispatch.py).
Statuses change through lifecycle.py only. Nothing here knows about HTTP;
the page's view of a campaign is campaign_progress.py, a campaign run in
this process local_runs.py, the demo demo.py.
"""
from __future__ import annotations

import logging
import secrets
from typing import Any, Iterable

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from trajectories.models import Rollout, RolloutStatus

from evaluations.models import Backend, Campaign
from evaluations.running import dispatch, lifecycle

logger = logging.getLogger(__name__)

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


class AlreadyLaunched(CampaignError):
    """This launch (its page's token) started a campaign already."""

    def __init__(self, campaign: Campaign):
        super().__init__(f"This form was already launched as campaign {campaign.pk}: nothing was started again.")
        self.campaign = campaign


def _not_launched_yet(token: str) -> None:
    earlier = Campaign.objects.filter(launch_token=token).first()
    if earlier is not None:
        raise AlreadyLaunched(earlier)


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
    token: str | None = None,
) -> Campaign:
    """A campaign that checks first (evaluations.running.preflight) and starts once every queue it needs passed.

    Without `preflight` it starts at once (create_campaign). `supersede`:
    when it starts, earlier rollouts of the same model, harness and tasks
    leave the figures (a re-evaluation); otherwise its rollouts add to them.
    `token` (the launch page's, which preflights): a launch already made
    with it raises AlreadyLaunched instead of starting a second campaign,
    also when both arrive at once (the column is unique).
    """
    if token:
        _not_launched_yet(token)
    if not preflight:
        return create_campaign(model, harness, version, tasks=tasks, k=k, backend=backend, created_by=created_by,
                               notes=notes, supersede=supersede)
    try:
        with transaction.atomic():
            campaign = _new_campaign(model, harness, version, list(tasks or []), k=k, backend=backend,
                                     created_by=created_by, notes=notes, supersede=supersede, checked_first=True,
                                     launch_token=token or None)
            if not campaign_tasks(campaign):
                raise CampaignError(f"{version} has no tasks")
    except IntegrityError:
        if token:
            _not_launched_yet(token)  # the same launch, committed meanwhile
        raise
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
    """Ask a worker of each queue the campaign needs to check it (evaluations.running.preflight)."""
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
    from evaluations.running.preflight import ModelSettings

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
    from evaluations.running.preflight import run_checks
    from evaluations.running.runner import serve_scripted_stub

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
    """Cancel a campaign that has not ended (evaluations.running.lifecycle) and drop its rollouts' messages; how many it stopped."""
    changed = lifecycle.cancel_campaign(campaign, detail)
    for rollout in changed:
        dispatch.revoke(rollout.celery_task_id)
    return len(changed)
