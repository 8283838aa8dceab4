"""A campaign run in this process rather than on Celery workers (`evaluate --sync`, the demo's run-now).

Retries happen inline; a rollout's process may be its own (forked), as a
worker's would be.
"""
from __future__ import annotations

import time
from collections import deque

from trajectories.models import RolloutStatus

from evaluations.models import Campaign
from evaluations.running import lifecycle
from evaluations.running.runner import RETRY, RunOutcome, run_rollout


def run_campaign_sync(campaign: Campaign, *, own_process: bool = False, concurrency: int = 1) -> dict[str, int]:
    """Run every queued rollout of a campaign here, not on a worker; retries inline.

    `own_process` (`evaluate --sync`) runs each rollout in a process of its
    own, forked from this one, as a worker would: a trial's event loop,
    threads, memory and a crash stay its own. `concurrency` runs that many
    such processes at once, as a worker's `--concurrency` does (a trial
    mostly waits on its sandbox: starting, copying, the agent's commands).
    """
    return run_campaigns_sync([campaign], own_process=own_process, concurrency=concurrency)


def run_campaigns_sync(campaigns: list[Campaign], *, own_process: bool = False, concurrency: int = 1) -> dict[str, int]:
    """`run_campaign_sync` for several campaigns sharing one pool, as one worker serves several (oracle and nop)."""
    ids = [
        rollout_id for campaign in campaigns
        for rollout_id in campaign.rollouts.filter(status=RolloutStatus.QUEUED).order_by("pk").values_list("pk", flat=True)
    ]
    if concurrency > 1:
        outcomes = _run_at_once(ids, concurrency)
    else:
        outcomes = {}
        run = run_rollout_in_child if own_process else run_rollout
        for rollout_id in ids:
            while True:
                outcome = run(rollout_id)
                if outcome.status != RETRY:
                    break
                time.sleep(min(outcome.retry_in, 5))
            outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
    for campaign in campaigns:
        lifecycle.refresh_campaign(campaign.pk)
    return outcomes


def _run_at_once(ids: list[int], concurrency: int) -> dict[str, int]:
    """Each rollout in a forked process of its own, `concurrency` of them at a time; a retry waits its turn again."""
    from multiprocessing.connection import wait

    waiting: deque[tuple[int, float]] = deque((rollout_id, 0.0) for rollout_id in ids)
    running: dict = {}  # receiver -> (rollout id, process)
    outcomes: dict[str, int] = {}
    while waiting or running:
        while waiting and len(running) < concurrency and waiting[0][1] <= time.monotonic():
            rollout_id, _ = waiting.popleft()
            receiver, child = _start_child(rollout_id)
            running[receiver] = (rollout_id, child)
        if not running:
            time.sleep(max(waiting[0][1] - time.monotonic(), 0.05))
            continue
        for receiver in wait(list(running), timeout=1.0):
            rollout_id, child = running.pop(receiver)
            outcome = _outcome_of_child(receiver, child)
            if outcome.status == RETRY:
                waiting.append((rollout_id, time.monotonic() + min(outcome.retry_in, 5)))
            else:
                outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
    return outcomes


def run_rollout_in_child(rollout_id: int) -> RunOutcome:
    """`run_rollout` in a forked process of its own; its outcome comes back through a pipe.

    A child that dies without an answer leaves its rollout to the reaper
    (its heartbeat stops), as a dead worker does.
    """
    return _outcome_of_child(*_start_child(rollout_id))


def _start_child(rollout_id: int):
    import multiprocessing

    from django.db import connections

    connections.close_all()  # the child opens its own; a shared socket would serve both
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run_and_report, args=(rollout_id, sender), name=f"rollout-{rollout_id}")
    child.start()
    sender.close()
    return receiver, child


def _outcome_of_child(receiver, child) -> RunOutcome:
    try:
        status, detail, retry_in = receiver.recv()
    except EOFError:
        status, detail, retry_in = RolloutStatus.FAILED, "", 0.0
    finally:
        receiver.close()
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
