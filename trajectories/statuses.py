"""A rollout's statuses, the changes between them, and which of them count where: the one source of these rules.

Django-free, so that the aggregation and the failure classifier (plain
modules) read the same sets as the models and the runner. Two writers
change a status, each by its own table: our runner (`TRANSITIONS`) and an
import, which sets what its source says (`IMPORTS`, `imported_status`).
trajectories.lifecycle is the one module that writes them.
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
# An attempt under way: a worker has it, and its heartbeat says it is alive (the reaper watches these).
IN_ATTEMPT = ACTIVE - {QUEUED}
# Left out of the figures as unfinished.
UNFINISHED = ACTIVE | {INCOMPLETE}

# Our runner's changes: status -> the statuses it may change to. PREPARING
# from an active status is a new attempt taking over a rollout whose worker
# stopped beating. An ended rollout never runs again: re-evaluate instead.
TRANSITIONS: dict[str, frozenset[str]] = {
    QUEUED: frozenset({PREPARING, CANCELLED, FAILED}),
    PREPARING: frozenset({RUNNING, QUEUED, FAILED, CANCELLED, PREPARING}),
    RUNNING: frozenset({VERIFYING, FINISHED, QUEUED, FAILED, CANCELLED, PREPARING}),
    VERIFYING: frozenset({FINISHED, QUEUED, FAILED, CANCELLED, PREPARING}),
    FINISHED: frozenset(),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
    # An imported trial without result.json: never one of our runner's.
    INCOMPLETE: frozenset(),
}
ENDED = (FINISHED, FAILED, CANCELLED)
# Ended by its run rather than by a cancel: the agent's result, or the failure that stopped it.
RAN = frozenset({FINISHED, FAILED})
# What a regrade may grade again: an ended run's recorded outputs. A
# cancelled run was stopped before its agent was done, and its verifier
# did not run: there is no final state to grade, so it is not offered.
REGRADABLE = frozenset(ALL) - ACTIVE - {CANCELLED}

# An import's changes: status ("" for a new rollout) -> what its source may
# make of it. A trial folder read again may have finished, or changed; a
# rollout our runner is running, and a cancelled one, keep theirs
# (`imported_status` says so, and keeping is no change).
IMPORTS: dict[str, frozenset[str]] = {
    "": frozenset({FINISHED, FAILED, INCOMPLETE}),
    INCOMPLETE: frozenset({FINISHED, FAILED, INCOMPLETE}),
    FINISHED: frozenset({FINISHED, FAILED, INCOMPLETE}),
    FAILED: frozenset({FINISHED, FAILED, INCOMPLETE}),
}


def allowed(old: str, new: str) -> bool:
    """Our runner may change a rollout from `old` to `new`."""
    return new in TRANSITIONS.get(old, frozenset())


def import_allowed(old: str, new: str) -> bool:
    """An import may set `new` on a rollout that is `old` ("" when new); keeping a status is no change."""
    return old == new or new in IMPORTS.get(old, frozenset())


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


class Disposition:
    """How a rollout enters the figures: counted, or the reason it is left out."""

    COUNTED = "counted"
    INFRA = "infra"
    SUPERSEDED = "superseded"
    UNFINISHED = "unfinished"
    CANCELLED = "cancelled"
    EXCLUDED = "excluded"  # its source leaves it out (an Inspect sample that errored)


def disposition(status: str, superseded: bool, infra_error: bool, excluded: str = "") -> str:
    """How a rollout enters the figures (a `Disposition`): one rule for the board and the API.

    Finished and failed rollouts count (an agent's failure counts 0);
    superseded, unfinished (queued ... verifying, incomplete) and cancelled
    ones do not; infrastructure errors and what its source excludes are
    left out and reported apart.
    """
    if superseded:
        return Disposition.SUPERSEDED
    if status in UNFINISHED:
        return Disposition.UNFINISHED
    if status == CANCELLED:
        return Disposition.CANCELLED
    if infra_error:
        return Disposition.INFRA
    if excluded:
        return Disposition.EXCLUDED
    return Disposition.COUNTED
