"""A rollout's statuses and which of them count where: the one source of these rules.

Django-free, so that the aggregation and the failure classifier (plain
modules) read the same sets as the models and the runner. The runner's
transitions between them live in evaluations.lifecycle; an imported
trial's status is `imported_status`.
"""
from __future__ import annotations

QUEUED = "queued"
PREPARING = "preparing"
RUNNING = "running"
VERIFYING = "verifying"
FINISHED = "finished"
FAILED = "failed"
CANCELLED = "cancelled"
# An imported trial that never wrote result.json (killed, or copied before it
# ended): only our runner's rollouts are live, so this one is not "running".
INCOMPLETE = "incomplete"

ALL = (QUEUED, PREPARING, RUNNING, VERIFYING, FINISHED, FAILED, CANCELLED, INCOMPLETE)
# Still going on our runner: the page follows them, the figures wait for them.
ACTIVE = frozenset({QUEUED, PREPARING, RUNNING, VERIFYING})
# Left out of the figures as unfinished.
UNFINISHED = ACTIVE | {INCOMPLETE}

INCOMPLETE_REASON = "no result.json: the trial did not finish, or its folder was copied before it ended"


def imported_status(
    *, finished: bool, exception_type: str, reward: float | None, reward_valid: bool | None, previous: str = "",
    runner_active: bool = False,
) -> str:
    """The status of a trial read from its folder.

    `previous` is the stored rollout's status (re-import); `runner_active`
    says our runner still owns it and it is running, so its status stays.
    A trial that failed without a reward that counts is failed; Harbor 0.26
    says whether its reward counts (`reward_valid`), earlier versions do not,
    and then any reward counts.
    """
    if runner_active or previous == CANCELLED:
        return previous
    if not finished:
        return INCOMPLETE
    counts = reward is not None if reward_valid is None else reward_valid and reward is not None
    if exception_type and not counts:
        return FAILED
    return FINISHED
