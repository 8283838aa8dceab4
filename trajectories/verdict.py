"""Is this zero the agent's, and does it count? The one source of a rollout's verdict.

An agent under test attacks exactly this rule: a rollout that crashes its
sandbox and gets itself called an infrastructure error leaves the figures
instead of counting 0. So every part of the answer is decided here, by
plain functions (Django-free, beside `statuses`), and written only by
`trajectories.lifecycle`:

- whose fault an end was (`Fault`): the runner's reading of an exception
  (`runner_decision`), a lost worker's (`after_loss`), the failure
  classifier's cause (`fault_of_cause`);
- the stored flag that says "not the agent's" (`Rollout.infra_error`,
  `infra_flag`) and the stored outcome once a cause stands (`outcome`);
- whether a rollout enters the figures and with what score (`verdict`,
  `counted_score`): the board, the API, the CSV and the curves all read it.

tests/test_verdict.py holds a table of every case (agent crash, OOM, fork
bomb, timeout, engine down, image build failed, worker lost, cancelled,
regraded) and a guard that fails when a second module writes these fields.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tasks import scoring

from . import statuses
from .statuses import Disposition


class Fault:
    """Whose doing a rollout's end was."""

    AGENT = "agent"  # the agent's result: counted (0 without a reward)
    INFRASTRUCTURE = "infrastructure"  # the sandbox, the engine, the provider, a lost worker: left out, reported apart
    CONFIGURATION = "configuration"  # the model, its key or endpoint, the backend set up wrong: left out, reported apart


# The failure classifier's causes that are not the agent's doing (trajectories.failures.rules names them).
INFRASTRUCTURE_ERROR = "infrastructure_error"
CONFIGURATION_ERROR = "configuration_error"
NOT_THE_AGENTS = (INFRASTRUCTURE_ERROR, CONFIGURATION_ERROR)


class Outcome:
    """A rollout's stored outcome: what the failures page lists and filters by."""

    SCORED = "scored"
    ZERO = "zero"
    NO_REWARD = "no_reward"
    RUNNING = "running"
    CANCELLED = "cancelled"
    INCOMPLETE = "incomplete"
    # A fault not the agent's; the figures call the same rollouts Disposition.INFRA ("infra").
    INFRA_ERROR = "infra_error"
    EXCLUDED = "excluded"  # its source leaves it out (an Inspect sample that errored): no cause, not counted


# How pages name each outcome (the stored id stays in URLs, the API and exports): every Outcome has one.
OUTCOME_LABELS = {
    Outcome.SCORED: "Scored",
    Outcome.ZERO: "Scored zero",
    Outcome.NO_REWARD: "No reward",
    Outcome.RUNNING: "Still running",
    Outcome.CANCELLED: "Cancelled",
    Outcome.INCOMPLETE: "Incomplete",
    Outcome.INFRA_ERROR: "Infrastructure error",
    Outcome.EXCLUDED: "Left out by its source",
}


def outcome_label(outcome: str) -> str:
    """An outcome as pages name it; an unknown one as stored."""
    return OUTCOME_LABELS.get(outcome, outcome)


# Outcomes that carry a cause: the rollouts the failures page lists.
FAILED_OUTCOMES = (Outcome.ZERO, Outcome.NO_REWARD, Outcome.INFRA_ERROR)


def fault_of_cause(cause: str) -> str:
    """The fault behind a failure cause (the effective one: a staff label's, else the classifier's)."""
    if cause == CONFIGURATION_ERROR:
        return Fault.CONFIGURATION
    if cause == INFRASTRUCTURE_ERROR:
        return Fault.INFRASTRUCTURE
    return Fault.AGENT


# -- the runner's reading of a failed attempt ------------------------------------------

class Decision:
    """What the runner does with a failed attempt."""

    CONFIG = "config"  # fail now, with the reason: a wrong key, model or backend does not mend itself
    INFRA_FINAL = "infra-final"  # fail now: not the agent's doing, and another attempt would fail the same
    INFRA_RETRY = "infra-retry"  # transient (5xx, timeouts, a sandbox that did not start): retry with backoff
    RESULT = "result"  # the agent's doing: a result, never retried


# Infrastructure that trying again will not mend: the task's own image does not build.
FINAL_INFRA_ERRORS = frozenset({"SandboxBuildFailedError"})


def runner_decision(family: str, exception_type: str, *, agent_started: bool) -> str:
    """A `Decision` for a trial's exception, given its family (`trajectories.failures.rules.exception_family`).

    An exception of no known family before the agent ran is the sandbox's,
    not the agent's; after it ran, it is the agent's result (a crash, an
    OOM, a fork bomb that ended its sandbox all count 0).
    """
    if family == "configuration":
        return Decision.CONFIG
    if exception_type.rsplit(".", 1)[-1] in FINAL_INFRA_ERRORS:
        return Decision.INFRA_FINAL
    if family in ("provider", "infrastructure"):
        return Decision.INFRA_RETRY
    if not agent_started and family == "":
        return Decision.INFRA_RETRY
    return Decision.RESULT


def fault_of_decision(decision: str) -> str:
    if decision == Decision.CONFIG:
        return Fault.CONFIGURATION
    if decision in (Decision.INFRA_FINAL, Decision.INFRA_RETRY):
        return Fault.INFRASTRUCTURE
    return Fault.AGENT


@dataclass(frozen=True)
class AfterLoss:
    """What becomes of a rollout whose attempt ended without a result of its own."""

    status: str
    infra_error: bool
    reason: str

    @property
    def fault(self) -> str | None:
        """The fault to record: the infrastructure's when it gave up; none otherwise (the flag is left as it is)."""
        return Fault.INFRASTRUCTURE if self.infra_error else None


def after_loss(attempts: int, limit: int, *, cancel_requested: bool) -> AfterLoss:
    """A lost attempt (worker died, infrastructure fault): cancelled, failed for good, or another try.

    The one rule for the reaper, for a claim that takes over an abandoned
    rollout and for the runner's retries. Failing for good is the
    infrastructure's fault: the agent never got to finish.
    """
    if cancel_requested:
        return AfterLoss(statuses.CANCELLED, False, "cancelled")
    if attempts >= limit:
        return AfterLoss(statuses.FAILED, not_the_agents(Fault.INFRASTRUCTURE), f"{attempts} of {limit} attempts used")
    return AfterLoss(statuses.QUEUED, False, f"attempt {attempts + 1} of {limit} next")


def not_the_agents(fault: str) -> bool:
    """The stored flag (`Rollout.infra_error`) for a fault."""
    return fault != Fault.AGENT


# -- what is stored once a cause stands ------------------------------------------------

def infra_flag(flag: bool, *, cause_was_not_the_agents: bool, cause_is_not_the_agents: bool) -> bool:
    """`Rollout.infra_error` after its effective cause changed.

    A cause not the agent's sets it; a cause that stops being so clears it
    only when a cause had set it: the runner may have set it for reasons of
    its own (a configuration error it refused to run), which are kept.
    """
    if cause_is_not_the_agents:
        return True
    if cause_was_not_the_agents:
        return False
    return flag


def outcome(classified: str, reward: float | None, infra: bool) -> str:
    """A rollout's outcome once its effective cause (a staff label's, else the classifier's) stands.

    `infra`: that cause is not the agent's (NOT_THE_AGENTS). A label can make
    a failed or scored rollout an infrastructure error, or call the
    classifier's infrastructure error the agent's own result; other outcomes
    (running, cancelled, incomplete, excluded) are not a cause's to change.
    """
    if classified not in (Outcome.SCORED, *FAILED_OUTCOMES):
        return classified
    if infra:
        return Outcome.INFRA_ERROR
    if classified == Outcome.INFRA_ERROR:
        if reward is None:
            return Outcome.NO_REWARD
        return Outcome.SCORED if reward > 0 else Outcome.ZERO
    return classified


# -- how a rollout enters the figures --------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """Whose fault, counted or left out (and why), and the counted score."""

    disposition: str  # a statuses.Disposition
    fault: str | None  # a Fault; None where no one's fault is in question (unfinished, cancelled, superseded, excluded)
    score: float | None  # the counted score; None when not counted
    clipped: bool  # the version's clipping changed the score
    reason: str

    @property
    def counted(self) -> bool:
        return self.disposition == Disposition.COUNTED


REASONS = {
    Disposition.COUNTED: "counted",
    Disposition.INFRA: "left out: not the agent's fault (infrastructure or configuration)",
    Disposition.SUPERSEDED: "left out: superseded by a later run",
    Disposition.UNFINISHED: "left out: not finished",
    Disposition.CANCELLED: "left out: cancelled",
    Disposition.EXCLUDED: "left out by its source",
}


def score_points(value: object) -> list[tuple[float, float]]:
    """A stored score log ([{"t": seconds, "score": normalised}, ...]) as (t, score) pairs; anything else is skipped."""
    if not isinstance(value, list):
        return []
    return [
        (float(entry["t"]), float(entry["score"])) for entry in value
        if isinstance(entry, dict) and isinstance(entry.get("t"), (int, float)) and isinstance(entry.get("score"), (int, float))
    ]


def counted_score(
    reward: float | None, *, score_log: Sequence[float] = (), final_only: bool = False,
    convention: str = scoring.VERIFIER_REWARD, clip: bool = False,
) -> float:
    """A counted rollout's score under its version's convention (`tasks.scoring.run_score`), then its clipping.

    A counted rollout without a score (the agent crashed before any) scores 0.
    """
    return scoring.counted_reward(run_score(reward, score_log=score_log, final_only=final_only, convention=convention), clip)


def run_score(
    reward: float | None, *, score_log: Sequence[float] = (), final_only: bool = False,
    convention: str = scoring.VERIFIER_REWARD,
) -> float | None:
    """The run's score before its version's clipping, None without one (`tasks.scoring.run_score`): the rollout page shows it."""
    return scoring.run_score(convention, reward, score_log, final_only)


def verdict(
    status: str, *, superseded: bool = False, infra_error: bool = False, excluded: str = "",
    reward: float | None = None, score_log: Sequence[float] = (), final_only: bool = False,
    convention: str = scoring.VERIFIER_REWARD, clip: bool = False, cause: str = "",
) -> Verdict:
    """A rollout's verdict from what its run left (status, flags, reward, score log) and its version's rules.

    `infra_error` is the stored flag; `cause` (the effective failure cause,
    when known) tells configuration from infrastructure.
    """
    kind = statuses.disposition(status, superseded, infra_error, excluded)
    if kind == Disposition.INFRA:
        fault = Fault.CONFIGURATION if cause == CONFIGURATION_ERROR else Fault.INFRASTRUCTURE
        return Verdict(kind, fault, None, False, REASONS[kind])
    if kind != Disposition.COUNTED:
        return Verdict(kind, None, None, False, REASONS[kind])
    score = counted_score(reward, score_log=score_log, final_only=final_only, convention=convention, clip=clip)
    unclipped = counted_score(reward, score_log=score_log, final_only=final_only, convention=convention, clip=False)
    reason = REASONS[kind] if _finite(reward) or score else "counted 0: the agent's run left no score"
    return Verdict(kind, Fault.AGENT, score, clip and unclipped != score, reason)


def _finite(value: float | None) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)
