"""Scoring rules, checked against hand-computed cases."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.scoring import anchored_linear, describe_rule, log_stretch, normalised_score, rule_for
from tasks.spec import TaskSpec

# flash_attention as published: runtime_seconds, lower is better.
FA_BASE, FA_REF = 0.75, 0.10


@pytest.mark.parametrize(
    "value, clip, expected",
    [
        (0.10, True, 0.5),  # the reference scores exactly 0.5
        (0.75, True, 0.0),  # matching the baseline scores 0
        (0.75 * (0.10 / 0.75) ** 2, True, 1.0),  # one more equal factor: 1.0
        (1.50, True, 0.0),  # worse than the baseline: 0, never negative
        (1.50, False, 0.0),
        (0.75 * (0.10 / 0.75) ** 3, True, 1.0),  # clipped
        (0.75 * (0.10 / 0.75) ** 3, False, 1.5),  # not clipped: above 1
        # sqrt(0.75 * 0.10) is halfway in log space: 0.25
        (math.sqrt(0.75 * 0.10), True, 0.25),
    ],
)
def test_log_stretch_flash_attention(value, clip, expected):
    assert log_stretch(value, FA_BASE, FA_REF, clip=clip) == pytest.approx(expected)


@pytest.mark.parametrize(
    "value, baseline, reference, expected",
    [
        # higher is better: ratio the other way round
        (20.0, 10.0, 20.0, 0.5),
        (40.0, 10.0, 20.0, 1.0),
        (10.0, 10.0, 20.0, 0.0),
        (5.0, 10.0, 20.0, 0.0),
        (0.0, 10.0, 20.0, 0.0),  # no throughput at all: no credit, no error
        # hash_join: 20 s -> 0.04 s
        (0.04, 20.0, 0.04, 0.5),
        (20.0 * (0.04 / 20.0) ** 0.5, 20.0, 0.04, 0.25),
    ],
)
def test_log_stretch_cases(value, baseline, reference, expected):
    assert log_stretch(value, baseline, reference) == pytest.approx(expected)


@pytest.mark.parametrize(
    "value, baseline, reference, clip, expected",
    [
        # higher is better (grpo_multisource 0.20 -> 0.65)
        (0.65, 0.20, 0.65, True, 1.0),
        (0.425, 0.20, 0.65, True, 0.5),
        (0.20, 0.20, 0.65, True, 0.0),
        (0.10, 0.20, 0.65, True, 0.0),
        (0.10, 0.20, 0.65, False, 0.0),  # never negative
        (0.875, 0.20, 0.65, True, 1.0),
        (0.875, 0.20, 0.65, False, 1.5),
        # lower is better (discover_sorting 80 -> 60 comparators): flipped
        (60, 80, 60, True, 1.0),
        (70, 80, 60, True, 0.5),
        (80, 80, 60, True, 0.0),
        (90, 80, 60, True, 0.0),
        (50, 80, 60, False, 1.5),
        (50, 80, 60, True, 1.0),
        # flux2_klein_lora: baseline 0.0 is a fine anchor under linear
        (0.44, 0.0, 0.88, True, 0.5),
    ],
)
def test_anchored_linear_cases(value, baseline, reference, clip, expected):
    assert anchored_linear(value, baseline, reference, clip=clip) == pytest.approx(expected)


@pytest.mark.parametrize(
    "args",
    [
        (0.5, 0.0, 0.1),  # zero baseline
        (0.5, 0.75, -0.1),  # negative reference
        (0.0, 0.75, 0.10),  # zero runtime for a lower-is-better metric
        (-1.0, 0.75, 0.10),
        (0.5, 0.75, 0.75),  # equal anchors
        (float("nan"), 0.75, 0.10),
        (float("inf"), 0.75, 0.10),
        (None, 0.75, 0.10),
    ],
)
def test_log_stretch_rejects_unusable_input(args):
    with pytest.raises(ValueError):
        log_stretch(*args)


@pytest.mark.parametrize("args", [(1.0, 2.0, 2.0), (float("nan"), 0.0, 1.0), (1.0, None, 1.0)])
def test_anchored_linear_rejects_unusable_input(args):
    with pytest.raises(ValueError):
        anchored_linear(*args)


@pytest.mark.parametrize(
    "category, override, expected",
    [
        ("system_optimization", "", "log_stretch"),
        ("cuda", "", "log_stretch"),
        ("model_development", "", "anchored_linear"),
        ("puzzle_and_challenge", "", "anchored_linear"),
        ("robotics", "", "anchored_linear"),  # unknown category
        ("", "", "anchored_linear"),
        ("system_optimization", "anchored_linear", "anchored_linear"),
        ("puzzle_and_challenge", "log_stretch", "log_stretch"),
    ],
)
def test_rule_for(category, override, expected):
    assert rule_for(category, override) == expected


def test_rule_for_rejects_unknown_override():
    with pytest.raises(ValueError, match="unknown scoring rule"):
        rule_for("cuda", "quadratic")


def spec(**overrides) -> TaskSpec:
    values = dict(
        name="flash_attention",
        category="system_optimization",
        metric="runtime_seconds",
        direction="lower",
        baseline_score=FA_BASE,
        reference_score=FA_REF,
    )
    values.update(overrides)
    return TaskSpec(**values)


@pytest.mark.parametrize(
    "overrides, value, expected",
    [
        ({}, 0.10, 0.5),
        ({}, 0.75, 0.0),
        ({"clip": False}, 0.75 * (0.10 / 0.75) ** 3, 1.5),
        # the override switches flash_attention to linear: 0.10 is the reference
        ({"scoring_rule": "anchored_linear"}, 0.10, 1.0),
        ({"scoring_rule": "anchored_linear"}, 0.425, 0.5),
        # category default for a quality task
        (
            {"category": "model_development", "direction": "higher", "baseline_score": 0.2, "reference_score": 0.65},
            0.425,
            0.5,
        ),
        # a puzzle task under a log-stretch override
        (
            {"category": "puzzle_and_challenge", "scoring_rule": "log_stretch", "baseline_score": 80, "reference_score": 60},
            60,
            0.5,
        ),
    ],
)
def test_normalised_score(overrides, value, expected):
    assert normalised_score(spec(**overrides), value) == pytest.approx(expected)


@pytest.mark.parametrize(
    "overrides, value",
    [
        ({"baseline_score": None}, 0.1),
        ({"reference_score": None}, 0.1),
        ({"reference_score": FA_BASE}, 0.1),  # equal anchors
        ({"direction": "higher"}, 0.1),  # anchors contradict the direction
        ({"baseline_score": 0.0, "reference_score": -1.0}, 0.1),  # non-positive under log-stretch
        ({}, 0.0),  # zero runtime: a broken measurement
        ({}, float("nan")),
        ({"scoring_rule": "bogus"}, 0.1),
    ],
)
def test_normalised_score_is_none_when_unusable(overrides, value):
    assert normalised_score(spec(**overrides), value) is None


def test_describe_rule_names_formula_anchors_and_clipping():
    text = describe_rule(spec())
    assert text.startswith("Log-stretch")
    assert "baseline 0.75" in text and "reference 0.1 runtime_seconds" in text
    assert "lower is better" in text
    assert "clipped to [0, 1]" in text
    linear = describe_rule(spec(category="model_development", clip=False))
    assert linear.startswith("Anchored linear")
    assert "not capped at 1" in linear
    assert "set for this task" in describe_rule(spec(scoring_rule="anchored_linear"))
    assert "Warning" in describe_rule(spec(direction="higher"))


# Properties over many anchors, not just the published ones.
positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(baseline=positive, reference=positive, value=positive, other=positive)
def test_log_stretch_properties(baseline, reference, value, other):
    if abs(math.log(baseline / reference)) < 1e-6:
        return
    assert log_stretch(reference, baseline, reference) == pytest.approx(0.5)
    assert log_stretch(baseline, baseline, reference) == pytest.approx(0.0, abs=1e-9)
    clipped = log_stretch(value, baseline, reference)
    assert 0.0 <= clipped <= 1.0
    assert log_stretch(value, baseline, reference, clip=False) >= clipped
    # Better values never score less: "better" is towards the reference.
    better, worse = sorted((value, other), reverse=reference > baseline)
    assert log_stretch(better, baseline, reference, clip=False) >= log_stretch(worse, baseline, reference, clip=False)


@settings(max_examples=200, deadline=None)
@given(
    baseline=st.floats(-1e6, 1e6),
    reference=st.floats(-1e6, 1e6),
    value=st.floats(-1e6, 1e6),
)
def test_anchored_linear_properties(baseline, reference, value):
    if abs(reference - baseline) < 1e-6:
        return
    assert anchored_linear(reference, baseline, reference) == pytest.approx(1.0)
    assert anchored_linear(baseline, baseline, reference) == 0.0
    assert 0.0 <= anchored_linear(value, baseline, reference) <= 1.0
