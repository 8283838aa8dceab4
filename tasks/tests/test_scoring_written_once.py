"""Each scoring formula and the clip agree wherever two callers use them.

`raw_score` (the anchors' check of a stored reward) and the floored scorers
(`log_stretch`, `anchored_linear`) must compute one formula; `counted_reward`
(what the board counts) and the scorers' bound must clip alike. A copy of a
formula edited in one place only, or a clip that drifts, fails this table.
"""
from __future__ import annotations

import math

import pytest

from tasks.scoring import ANCHORED_LINEAR, LOG_STRETCH, anchored_linear, counted_reward, log_stretch, raw_score

# (value, baseline, reference): both directions, inside [0, 1], above 1, below the baseline.
LOG_CASES = [
    (0.10, 0.75, 0.10),  # flash_attention's reference: 0.5
    (math.sqrt(0.75 * 0.10), 0.75, 0.10),  # 0.25
    (0.75 * (0.10 / 0.75) ** 2, 0.75, 0.10),  # 1.0
    (0.75 * (0.10 / 0.75) ** 3, 0.75, 0.10),  # 1.5: only the unclipped score keeps it
    (1.50, 0.75, 0.10),  # worse than the baseline: raw is negative
    (20.0, 10.0, 20.0),  # higher is better: 0.5
    (40.0, 10.0, 20.0),  # 1.0
    (160.0, 10.0, 20.0),  # 2.0
    (5.0, 10.0, 20.0),  # below the baseline
    (0.04, 20.0, 0.04),  # hash_join: 0.5
    (0.03, 20.0, 0.04),
]
LINEAR_CASES = [
    (0.65, 0.20, 0.65),  # 1.0
    (0.425, 0.20, 0.65),  # 0.5
    (0.10, 0.20, 0.65),  # below the baseline
    (1.10, 0.20, 0.65),  # 2.0
    (2.0, 4.0, 1.0),  # lower is better: 2/3
    (0.5, 4.0, 1.0),  # 7/6
    (5.0, 4.0, 1.0),  # worse
    (-3.0, -1.0, -5.0),  # negative metrics are fine for a linear rule
]
# The hand-computed raw values of the table, so that one formula changed everywhere fails too.
LOG_RAW = [0.5, 0.25, 1.0, 1.5, -0.5 * math.log(2) / math.log(7.5), 0.5, 1.0, 2.0, -0.5, 0.5, 0.5 * math.log(20.0 / 0.03) / math.log(20.0 / 0.04)]
LINEAR_RAW = [1.0, 0.5, -0.1 / 0.45, 2.0, 2 / 3, 7 / 6, -1 / 3, 0.5]


@pytest.mark.parametrize("case, expected", zip(LOG_CASES, LOG_RAW))
def test_log_stretch_raw_values(case, expected):
    assert raw_score(LOG_STRETCH, *case) == pytest.approx(expected)


@pytest.mark.parametrize("case, expected", zip(LINEAR_CASES, LINEAR_RAW))
def test_linear_raw_values(case, expected):
    assert raw_score(ANCHORED_LINEAR, *case) == pytest.approx(expected)


@pytest.mark.parametrize(
    "rule, scorer, case",
    [(LOG_STRETCH, log_stretch, case) for case in LOG_CASES] + [(ANCHORED_LINEAR, anchored_linear, case) for case in LINEAR_CASES],
)
def test_raw_score_and_the_floored_scorer_agree(rule, scorer, case):
    raw = raw_score(rule, *case)
    unclipped, clipped = scorer(*case, clip=False), scorer(*case, clip=True)
    if raw <= 0:
        assert unclipped == clipped == 0.0
        return
    assert unclipped == raw
    assert clipped == min(1.0, raw)


def test_log_stretch_of_no_throughput_is_zero_where_raw_score_is_undefined():
    assert log_stretch(0.0, 10.0, 20.0) == 0.0
    assert raw_score(LOG_STRETCH, 0.0, 10.0, 20.0) is None


@pytest.mark.parametrize("reward", [-2.0, -0.1, 0.0, 0.3, 1.0, 1.2, 7.5])
@pytest.mark.parametrize("clip", [True, False])
def test_counted_reward_clips_as_the_scorers_bound_does(reward, clip):
    """Anchored-linear from 0 to 1 is the identity, bounded: the same clip as a counted reward's."""
    bounded = anchored_linear(reward, 0.0, 1.0, clip=clip)
    if clip:
        assert counted_reward(reward, clip) == bounded == min(1.0, max(0.0, reward))
    else:
        # An unclipped version publishes what the verifier wrote, even below 0; a scorer floors.
        assert counted_reward(reward, clip) == reward
        assert bounded == max(0.0, reward)


@pytest.mark.parametrize("reward", [None, math.nan, math.inf, -math.inf])
def test_counted_reward_of_no_usable_reward_is_zero(reward):
    assert counted_reward(reward, True) == counted_reward(reward, False) == 0.0
