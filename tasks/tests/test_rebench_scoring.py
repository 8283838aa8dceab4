"""RE-Bench's scoring conventions, checked against hand-computed cases.

Normalised score y_n = (f(y) - f(y_s)) / (f(y_r) - f(y_s)), floored at 0, not
capped; a run scores the best of its score log except on final-only tasks.
"""
from __future__ import annotations

import math

import pytest

from tasks.scoring import (
    BEST_OF_SCORE_LOG,
    REBENCH,
    VERIFIER_REWARD,
    describe_rule,
    normalised_score,
    rebench_normalised,
    run_score,
)
from tasks.spec import TaskSpec

# (raw y, start y_s, reference y_r, transform, offset, expected y_n) worked by hand.
NORMALISATION = [
    # A kernel task: start 5 ms, reference 0.4 ms, log transform.
    (0.2, 5.0, 0.4, "log", 0.0, (math.log(0.2) - math.log(5)) / (math.log(0.4) - math.log(5))),  # ≈ 1.2744
    (0.4, 5.0, 0.4, "log", 0.0, 1.0),  # the reference scores 1
    (5.0, 5.0, 0.4, "log", 0.0, 0.0),  # the start scores 0
    (1.0, 5.0, 0.4, "log", 0.0, 0.6372),  # ln 0.2 / ln 0.08
    (6.0, 5.0, 0.4, "log", 0.0, 0.0),  # slower than the start: floored at 0
    # A loss task under log(loss - 1.5): start 4.0, reference 2.0.
    (2.0, 4.0, 2.0, "log", 1.5, 1.0),
    (3.0, 4.0, 2.0, "log", 1.5, 0.3174),  # ln(1.5/2.5) / ln(0.5/2.5)
    (1.75, 4.0, 2.0, "log", 1.5, 1.4307),  # ln 0.1 / ln 0.2: above 1, not capped
    (4.5, 4.0, 2.0, "log", 1.5, 0.0),  # a loss worse than the start scores 0
    # Identity, higher is better: accuracy from 0.2 to 0.8.
    (0.5, 0.2, 0.8, "identity", 0.0, 0.5),
    (1.0, 0.2, 0.8, "identity", 0.0, 4 / 3),  # not capped
    (0.1, 0.2, 0.8, "identity", 0.0, 0.0),
]


@pytest.mark.parametrize("value, start, reference, transform, offset, expected", NORMALISATION)
def test_normalisation_table(value, start, reference, transform, offset, expected):
    assert rebench_normalised(value, start, reference, transform, offset) == pytest.approx(expected, abs=5e-5)


def test_the_kernel_example_of_the_issue():
    assert rebench_normalised(0.2, 5.0, 0.4, "log") == pytest.approx(1.27, abs=0.005)


@pytest.mark.parametrize(
    "value, start, reference, transform, offset",
    [
        (1.5, 4.0, 2.0, "log", 1.5),  # a loss at the log's floor: a broken measurement
        (-1.0, 5.0, 0.4, "log", 0.0),
        (1.0, 2.0, 2.0, "identity", 0.0),  # equal anchors
        (1.0, 2.0, 1.0, "sqrt", 0.0),
        (float("nan"), 2.0, 1.0, "identity", 0.0),
    ],
)
def test_undefined_inputs_raise(value, start, reference, transform, offset):
    with pytest.raises(ValueError):
        rebench_normalised(value, start, reference, transform, offset)


def kernel_spec(**extra) -> TaskSpec:
    values = dict(name="kernel", metric="runtime_ms", direction="lower", baseline_score=5.0, reference_score=0.4,
                  scoring_rule=REBENCH, transform="log", clip=False)
    return TaskSpec(**{**values, **extra})


def test_the_task_spec_scores_with_its_rule_and_never_caps():
    assert normalised_score(kernel_spec(), 0.2) == pytest.approx(1.2744, abs=1e-4)
    # Even a version that clips does not cap RE-Bench's rule.
    assert normalised_score(kernel_spec(clip=True), 0.2) == pytest.approx(1.2744, abs=1e-4)
    assert normalised_score(kernel_spec(), 0.0) is None  # no log of 0: no score, not a crash


# (convention, final score, score log, final-only, expected run score)
RUN_SCORES = [
    (BEST_OF_SCORE_LOG, 0.3, [0.1, 0.7, 0.4], False, 0.7),  # the best of the log
    (BEST_OF_SCORE_LOG, 0.3, [0.1, 0.7, 0.4], True, 0.3),  # final-only: the last submission alone
    (BEST_OF_SCORE_LOG, 0.9, [0.1, 0.7], False, 0.9),  # the final score is part of the log
    (BEST_OF_SCORE_LOG, None, [0.2, 0.5], False, 0.5),  # no final score: the log still counts
    (BEST_OF_SCORE_LOG, None, [0.2, 0.5], True, None),  # final-only without a final: no score
    (BEST_OF_SCORE_LOG, 0.0, [], False, 0.0),
    (BEST_OF_SCORE_LOG, None, [], False, None),
    (BEST_OF_SCORE_LOG, 1.8, [], False, 1.8),  # no cap
    (BEST_OF_SCORE_LOG, 0.2, [float("nan"), 0.4], False, 0.4),  # junk in the log is ignored
    (VERIFIER_REWARD, 0.3, [0.1, 0.7], False, 0.3),  # AutoLab: the reward is the score
    (VERIFIER_REWARD, None, [0.7], False, None),
]


@pytest.mark.parametrize("convention, final, log, final_only, expected", RUN_SCORES)
def test_run_score_table(convention, final, log, final_only, expected):
    got = run_score(convention, final, log, final_only)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_describe_rule_says_the_transform_and_final_only():
    words = describe_rule(kernel_spec())
    assert "ln(y)" in words and "no upper cap" in words and "best of its score log" in words
    loss = TaskSpec(name="loss", direction="lower", baseline_score=4.0, reference_score=2.0, scoring_rule=REBENCH,
                    transform="log", transform_offset=1.5, final_only=True)
    words = describe_rule(loss)
    assert "ln(y − 1.5)" in words and "final submission" in words
