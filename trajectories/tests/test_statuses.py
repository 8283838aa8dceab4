"""The status of a trial read from its folder: one rule, a table of cases."""
from __future__ import annotations

import pytest

from trajectories import statuses as s
from trajectories.models import RolloutStatus

CASES = [
    # finished, exception, reward, reward_valid, previous, runner_active -> status
    (True, "", 0.5, None, "", False, s.FINISHED),
    (True, "", None, None, "", False, s.FINISHED),  # no reward, no fault: the verifier's business
    (True, "AgentTimeoutError", 0.5, None, "", False, s.FINISHED),  # Harbor 0.25: a reward counts
    (True, "AgentTimeoutError", None, None, "", False, s.FAILED),
    (True, "NonZeroAgentExitCodeError", 0.0, True, "", False, s.FINISHED),  # Harbor 0.26: valid
    (True, "ApiRateLimitError", 0.5, False, "", False, s.FAILED),  # Harbor 0.26: void
    (False, "", 0.5, None, "", False, s.INCOMPLETE),  # no result.json, even with a reward
    (False, "", None, None, s.RUNNING, False, s.INCOMPLETE),  # an imported "running" one is not live
    (False, "", None, None, s.RUNNING, True, s.RUNNING),  # our runner's keeps its own
    (False, "", None, None, s.VERIFYING, True, s.VERIFYING),
    (True, "", 0.5, None, s.CANCELLED, False, s.CANCELLED),
    (False, "", None, None, s.CANCELLED, False, s.CANCELLED),
]


@pytest.mark.parametrize(("finished", "exception", "reward", "valid", "previous", "runner", "expected"), CASES)
def test_imported_status(finished, exception, reward, valid, previous, runner, expected):
    assert s.imported_status(
        finished=finished, exception_type=exception, reward=reward, reward_valid=valid, previous=previous,
        runner_active=runner,
    ) == expected


def test_every_status_is_a_model_choice_and_the_sets_agree():
    assert {choice.value for choice in RolloutStatus} == set(s.ALL)
    # The model's choices are statuses' constants, member for member (one vocabulary, no second spelling).
    assert [(choice.name, choice.value) for choice in RolloutStatus] == [(value.upper(), value) for value in s.ALL]
    assert s.INCOMPLETE not in s.ACTIVE and s.UNFINISHED == s.ACTIVE | {s.INCOMPLETE}


# -- our runner's changes ---------------------------------------------------------------

# (from, to, allowed): every pair that matters, hand-written.
TRANSITION_CASES = [
    (s.QUEUED, s.PREPARING, True),  # a worker claims it
    (s.QUEUED, s.CANCELLED, True),  # staff cancel before it starts
    (s.QUEUED, s.FAILED, True),  # out of attempts at the claim
    (s.QUEUED, s.RUNNING, False),  # a run starts with its preparation
    (s.QUEUED, s.FINISHED, False),
    (s.PREPARING, s.RUNNING, True),
    (s.PREPARING, s.QUEUED, True),  # an infrastructure retry, or the reaper
    (s.PREPARING, s.PREPARING, True),  # a new attempt takes over an abandoned one
    (s.PREPARING, s.FAILED, True),
    (s.PREPARING, s.VERIFYING, False),
    (s.RUNNING, s.VERIFYING, True),
    (s.RUNNING, s.FINISHED, True),
    (s.RUNNING, s.CANCELLED, True),
    (s.RUNNING, s.QUEUED, True),
    (s.VERIFYING, s.FINISHED, True),
    (s.VERIFYING, s.FAILED, True),
    (s.VERIFYING, s.RUNNING, False),  # grading never hands back to the agent
    (s.FINISHED, s.QUEUED, False),  # a result is never re-run: re-evaluate instead
    (s.FINISHED, s.FAILED, False),
    (s.FAILED, s.QUEUED, False),
    (s.CANCELLED, s.PREPARING, False),
]


@pytest.mark.parametrize("old, new, ok", TRANSITION_CASES)
def test_transition_table(old, new, ok):
    assert s.allowed(old, new) is ok


def test_every_status_has_a_row_and_ended_ones_lead_nowhere():
    assert set(s.TRANSITIONS) == set(s.ALL)
    for status in s.ENDED + (s.INCOMPLETE,):
        assert s.TRANSITIONS[status] == frozenset()
    for status in s.ACTIVE:
        assert s.CANCELLED in s.TRANSITIONS[status]


# -- an import's changes ------------------------------------------------------------------

IMPORT_CASES = [
    ("", s.FINISHED, True),  # a new rollout, as its trial says
    ("", s.INCOMPLETE, True),
    ("", s.QUEUED, False),  # only our runner queues
    ("", s.RUNNING, False),  # an imported trial is never live
    (s.INCOMPLETE, s.FINISHED, True),  # its result.json arrived
    (s.FINISHED, s.FAILED, True),  # the folder changed (--force)
    (s.FINISHED, s.QUEUED, False),
    (s.RUNNING, s.RUNNING, True),  # our runner's keeps its own: no change
    (s.RUNNING, s.FINISHED, False),  # ... and an import never ends it
    (s.CANCELLED, s.CANCELLED, True),
    (s.CANCELLED, s.FINISHED, False),
]


@pytest.mark.parametrize("old, new, ok", IMPORT_CASES)
def test_import_table(old, new, ok):
    assert s.import_allowed(old, new) is ok


# -- how a rollout counts ------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, superseded, infra, expected",
    [
        ("finished", False, False, s.Disposition.COUNTED),
        ("failed", False, False, s.Disposition.COUNTED),  # agent failure counts 0
        ("finished", False, True, s.Disposition.INFRA),
        ("failed", True, False, s.Disposition.SUPERSEDED),
        ("running", False, False, s.Disposition.UNFINISHED),
        ("queued", False, True, s.Disposition.UNFINISHED),
        ("cancelled", False, False, s.Disposition.CANCELLED),
        ("incomplete", False, False, s.Disposition.UNFINISHED),  # imported without result.json
    ],
)
def test_disposition(status, superseded, infra, expected):
    assert s.disposition(status, superseded, infra) == expected


def test_what_its_source_leaves_out_is_excluded_not_counted():
    assert s.disposition("finished", False, False, "the sample errored") == s.Disposition.EXCLUDED
