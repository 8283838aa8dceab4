"""A rollout's verdict: every case an agent (or the machine) can end a run with, and one writer of its fields.

The table follows each case the way the code does: the runner reads the
exception (`runner_decision`), a lost worker's fate (`after_loss`) or the
classifier's cause (`infra_flag`) sets the stored flag, and `verdict` says
whether the rollout counts and with what score. Then the guard: the flag
and the outcome are written by trajectories.lifecycle alone, and the
counted score is composed by trajectories.verdict alone.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import pytest

from evaluations.figures.time_curves import Run, score_at
from tasks import scoring
from trajectories import verdict
from trajectories.failures.rules import (
    AGENT_ERROR,
    BUDGET_EXHAUSTED,
    GRADING_DISRUPTED,
    SANDBOX_ENDED,
    exception_family,
)
from trajectories.statuses import Disposition
from trajectories.verdict import CONFIGURATION_ERROR, INFRASTRUCTURE_ERROR, Decision, Fault

from tests.test_status_writers import project_sources, status_writes

AGENT, INFRA, CONFIG = Fault.AGENT, Fault.INFRASTRUCTURE, Fault.CONFIGURATION


@dataclass(frozen=True)
class End:
    """How a run ended, as the runner and the classifier see it."""

    status: str = "finished"
    exception_type: str = ""
    message: str = ""
    agent_started: bool = True
    lost_attempts: int = 0  # a worker lost this many times (limit 3)
    cause: str = ""  # the classifier's (or a label's) cause
    reward: float | None = None


def settle(end: End) -> verdict.Verdict:
    flag = False
    if end.exception_type:
        decision = verdict.runner_decision(
            exception_family(end.exception_type, end.message), end.exception_type, agent_started=end.agent_started
        )
        flag = verdict.not_the_agents(verdict.fault_of_decision(decision))
    status = end.status
    if end.lost_attempts:
        fate = verdict.after_loss(end.lost_attempts, 3, cancel_requested=end.status == "cancelled")
        status, flag = fate.status, fate.infra_error
    flag = verdict.infra_flag(flag, cause_was_not_the_agents=False, cause_is_not_the_agents=end.cause in verdict.NOT_THE_AGENTS)
    return verdict.verdict(status, infra_error=flag, reward=end.reward, cause=end.cause)


CASES = {
    # The agent's doing: counted, 0 without a reward.
    "agent crash": (End("failed", "NonZeroAgentExitCodeError", "exit 1", cause=AGENT_ERROR), AGENT, Disposition.COUNTED, 0.0),
    "out of memory": (End("failed", "SandboxEndedByAgentError", "the sandbox ran out of memory", cause=SANDBOX_ENDED),
                      AGENT, Disposition.COUNTED, 0.0),
    "fork bomb in its sandbox": (End("failed", "SandboxEndedByAgentError", "pids limit reached", cause=SANDBOX_ENDED),
                                 AGENT, Disposition.COUNTED, 0.0),
    "fork bomb while graded": (End("finished", cause=GRADING_DISRUPTED, reward=0.0), AGENT, Disposition.COUNTED, 0.0),
    "timeout with a reward": (End("finished", "AgentTimeoutError", "agent timed out", reward=0.4), AGENT, Disposition.COUNTED, 0.4),
    "timeout without one": (End("failed", "AgentTimeoutError", "agent timed out", cause=BUDGET_EXHAUSTED),
                            AGENT, Disposition.COUNTED, 0.0),
    "a crash the name does not explain, after the agent ran": (End("failed", "RuntimeError", "boom"), AGENT, Disposition.COUNTED, 0.0),
    # Not the agent's: left out, reported apart.
    "engine down before the agent ran": (End("failed", "RuntimeError", "Cannot connect to the Docker daemon", agent_started=False),
                                         INFRA, Disposition.INFRA, None),
    "image build failed": (End("failed", "SandboxBuildFailedError", "apt-get failed"), INFRA, Disposition.INFRA, None),
    "worker lost three times": (End(lost_attempts=3), INFRA, Disposition.INFRA, None),
    "provider down": (End("failed", "ServiceUnavailableError", "503"), INFRA, Disposition.INFRA, None),
    "missing API key": (End("failed", "AuthenticationError", "Missing credentials", cause=CONFIGURATION_ERROR),
                        CONFIG, Disposition.INFRA, None),
    "classified as the infrastructure's": (End("failed", cause=INFRASTRUCTURE_ERROR), INFRA, Disposition.INFRA, None),
    # No one's fault in question.
    "cancelled": (End("cancelled"), None, Disposition.CANCELLED, None),
    "worker lost, then cancelled": (End("cancelled", lost_attempts=1), None, Disposition.CANCELLED, None),
    "worker lost once: another try": (End(lost_attempts=1), None, Disposition.UNFINISHED, None),
    # A regrade's reward is the agent's result like any other.
    "regraded": (End("finished", reward=0.7), AGENT, Disposition.COUNTED, 0.7),
}


@pytest.mark.parametrize("name", CASES)
def test_every_way_a_run_ends(name):
    end, fault, disposition, score = CASES[name]
    got = settle(end)
    assert (got.fault, got.disposition, got.score) == (fault, disposition, score)
    assert got.counted is (disposition == Disposition.COUNTED)


def test_the_runner_never_retries_the_agents_result():
    # A crash after the agent ran is a result, never another attempt (an agent would crash until it got a good run).
    assert verdict.runner_decision("", "RuntimeError", agent_started=True) == Decision.RESULT
    assert verdict.runner_decision("sandbox_ended", "SandboxEndedByAgentError", agent_started=True) == Decision.RESULT
    assert verdict.runner_decision("infrastructure", "EnvironmentStartTimeoutError", agent_started=False) == Decision.INFRA_RETRY


@pytest.mark.parametrize(
    "flag, was, now, expected",
    [
        (False, False, True, True),  # a cause not the agent's sets it
        (True, True, False, False),  # a label that calls it the agent's clears what a cause had set
        (True, False, False, True),  # the runner's own reason is kept
        (False, False, False, False),
    ],
)
def test_infra_flag(flag, was, now, expected):
    assert verdict.infra_flag(flag, cause_was_not_the_agents=was, cause_is_not_the_agents=now) is expected


@pytest.mark.parametrize(
    "reward, log, final_only, clip, expected",
    [
        (0.7, (), False, True, 0.7),
        (1.4, (), False, True, 1.0),  # AutoLab v1.1 clips
        (1.4, (), False, False, 1.4),  # v1.0 published above 1
        (None, (), False, True, 0.0),  # counted, no reward: 0
        (float("nan"), (), False, True, 0.0),
    ],
)
def test_counted_score_autolab(reward, log, final_only, clip, expected):
    assert verdict.counted_score(reward, score_log=log, final_only=final_only, clip=clip) == expected


@pytest.mark.parametrize(
    "final, log, final_only, expected",
    [
        (0.2, (0.1, 0.9, 0.3), False, 0.9),  # the best of the score log
        (1.7, (), False, 1.7),  # no cap
        (-0.2, (-0.5, -0.1), False, 0.0),  # floored at 0
        (-0.2, (0.9,), True, 0.0),  # final-only: the final alone, floored
        (None, (), False, 0.0),
    ],
)
def test_counted_score_rebench(final, log, final_only, expected):
    got = verdict.counted_score(final, score_log=log, final_only=final_only, convention=scoring.BEST_OF_SCORE_LOG)
    assert got == expected


@pytest.mark.parametrize(
    "run, cut, expected",
    [
        (Run(((10.0, -0.5), (20.0, -0.1)), end=30.0, final=-0.2), 40.0, 0.0),  # floored at 0 in the curves too
        (Run(((10.0, -0.5),), end=30.0, final=-0.2, final_only=True), 15.0, 0.0),
        (Run(((10.0, 0.5), (20.0, 0.2)), end=30.0, final=0.1), 25.0, 0.5),
        (Run(((10.0, 0.5), (20.0, 0.2)), end=30.0, final=0.1, final_only=True), 25.0, 0.2),
        (Run(((10.0, 0.5),), end=30.0, final=0.1, final_only=True), 30.0, 0.1),
        (Run(((10.0, 0.5),), end=30.0, final=None), 5.0, 0.0),
    ],
)
def test_the_curves_cut_a_run_by_the_same_rule(run, cut, expected):
    assert score_at(run, cut) == expected


def test_a_clipped_score_says_so():
    got = verdict.verdict("finished", reward=1.3, clip=True)
    assert got.score == 1.0 and got.clipped
    assert not verdict.verdict("finished", reward=1.3, clip=False).clipped


# -- one writer --------------------------------------------------------------------

OWNER = "trajectories/lifecycle.py"
# Rows made whole, not a run's end (reviewed).
ALLOWED = {"evaluations/management/commands/generate_synthetic.py": "synthetic rollouts for the scale benchmarks"}


def verdict_writes() -> list[str]:
    found = []
    for relative, source in project_sources():
        if relative in (OWNER, *ALLOWED):
            continue
        tree = ast.parse(source)
        for field in ("infra_error", "outcome"):
            for line, write, _ in status_writes(tree, source, field=field, models={"Rollout"}):
                if field == "outcome" and "rollout" not in write.split("=")[0].lower():
                    continue  # another object's outcome (an import's report, a review check's)
                found.append(f"{relative}:{line}: {write}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and target.slice.value == "infra_error":
                        found.append(f"{relative}:{node.lineno}: {ast.get_source_segment(source, node)}")
    return found


def test_only_the_lifecycle_writes_the_verdicts_fields():
    assert verdict_writes() == []


def test_the_guard_sees_a_second_writer():
    source = "def f(rollout):\n    rollout.infra_error = True\n    rollout.outcome = 'scored'\n"
    assert len(status_writes(ast.parse(source), source, field="infra_error", models={"Rollout"})) == 1
    assert len(status_writes(ast.parse(source), source, field="outcome", models={"Rollout"})) == 1


SCORE_OWNERS = {"trajectories/verdict.py", "evaluations/figures/time_curves.py", "tasks/scoring.py"}


def test_only_the_verdict_composes_a_counted_score():
    """The board, the API, the CSV and the rollout page take a run's score from trajectories.verdict (RE-Bench's best of its log)."""
    found = []
    for relative, source in project_sources():
        if relative in SCORE_OWNERS:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name == "run_score" and not (isinstance(node.func, ast.Attribute) and ast.unparse(node.func) == "verdict.run_score"):
                    found.append(f"{relative}:{node.lineno}: {name}")
    assert found == []
