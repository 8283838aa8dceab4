"""The status of a trial read from its folder: one rule, a table of cases."""
from __future__ import annotations

import pytest

from evaluations import aggregation as agg
from trajectories import statuses as s
from trajectories.models import ACTIVE_STATUSES, RolloutStatus

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
    assert {status.value for status in ACTIVE_STATUSES} == s.ACTIVE
    assert agg.UNFINISHED_STATUSES == s.UNFINISHED and s.INCOMPLETE not in s.ACTIVE
