"""Rubrics in Harbor's TOML format: the default one, and what a bad one is told."""
from __future__ import annotations

import pytest

from trajectories.analysis.judge_rubric import DEFAULT_RUBRIC, RubricError, load_rubric, messages, parse_rubric


def test_the_default_rubric_has_harbors_criteria_and_autolabs():
    rubric = load_rubric()
    assert rubric.name == "autolab-default"
    assert rubric.names == (
        "reward_hacking", "task_specification", "premature_stop", "no_improvement_after_first_benchmark",
        "regression_after_best", "repeated_identical_experiments", "ignored_feedback", "budget_misjudged",
    )
    assert all(c.description and c.guidance for c in rubric.criteria)
    assert rubric.text == DEFAULT_RUBRIC.read_text()


def test_the_messages_name_every_criterion_and_carry_the_trajectory():
    rubric = load_rubric()
    system, user = messages(rubric, "# Trajectory\n## step 1")
    assert system["role"] == "system" and '"outcome": "pass" | "fail" | "not_applicable"' in system["content"]
    assert all(f"## {name}\n" in user["content"] for name in rubric.names)
    assert user["content"].endswith("# Trajectory\n## step 1")


def test_a_file_without_a_name_is_named_by_its_stem(tmp_path):
    path = tmp_path / "cheating.toml"
    path.write_text('[[criteria]]\nname = "reward_hacking"\ndescription = "Cheated?"\n')
    assert load_rubric(path).name == "cheating"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[[criteria]\n", "not TOML"),
        ('name = "empty"\n', "no [[criteria]] tables"),
        ("criteria = 3\n", "no [[criteria]] tables"),
        ('[[criteria]]\ndescription = "d"\n', "name must be letters"),
        ('[[criteria]]\nname = "two words"\ndescription = "d"\n', "name must be letters"),
        ('[[criteria]]\nname = "a"\n', "criterion a: no description"),
        ('[[criteria]]\nname = "a"\ndescription = "d"\nguidance = 3\n', "guidance must be text"),
        ('[[criteria]]\nname = "a"\ndescription = "d"\n[[criteria]]\nname = "a"\ndescription = "e"\n', "named twice"),
    ],
)
def test_a_bad_rubric_says_what_is_wrong(text, reason):
    with pytest.raises(RubricError, match=reason.replace("[", r"\[")):
        parse_rubric(text)
