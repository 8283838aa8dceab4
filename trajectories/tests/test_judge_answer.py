"""The judge's answer, read strictly: a table of answers and what each becomes (a Reading, or the reason it is refused)."""
from __future__ import annotations

import json

import pytest

from trajectories.reading.judge_answer import parse_answer
from trajectories.reading.review_data import Check, ReadingError

CRITERIA = ("reward_hacking", "premature_stop")
STEPS = frozenset(range(1, 140))


def answer(**checks) -> str:
    base = {
        "reward_hacking": {"outcome": "pass", "explanation": "worked on the task", "steps": []},
        "premature_stop": {"outcome": "fail", "explanation": "stopped at 2 h of 4", "steps": [120, 139]},
    }
    base.update(checks)
    return json.dumps({"summary": "Trained once, stopped early.", "checks": {k: v for k, v in base.items() if v is not None}})


def test_a_good_answer():
    reading = parse_answer(answer(), CRITERIA, STEPS, tokens_in=10, tokens_out=5, cost_usd=0.01)
    assert reading.summary == "Trained once, stopped early."
    assert reading.checks == (
        Check("reward_hacking", "pass", "worked on the task", ()),
        Check("premature_stop", "fail", "stopped at 2 h of 4", (120, 139)),
    )
    assert (reading.tokens_in, reading.tokens_out, reading.cost_usd) == (10, 5, 0.01)
    assert reading.extra == {}


@pytest.mark.parametrize(
    ("text", "checks_of_premature_stop", "extra"),
    [
        # One Markdown fence around the object is taken off.
        ("```json\n" + answer() + "\n```", (120, 139), {}),
        # Steps the trajectory does not have are dropped (and counted), the others kept.
        (answer(premature_stop={"outcome": "fail", "steps": [120, 5000, -1]}), (120,), {"dropped_steps": {"premature_stop": [5000, -1]}}),
        # A step cited twice is kept once.
        (answer(premature_stop={"outcome": "fail", "steps": [12, 12]}), (12,), {}),
        # An outcome's case and spaces do not matter; a missing explanation or steps list is empty.
        (answer(premature_stop={"outcome": " Not_Applicable "}), (), {}),
    ],
)
def test_what_is_tolerated(text, checks_of_premature_stop, extra):
    reading = parse_answer(text, CRITERIA, STEPS)
    assert reading.checks[1].steps == checks_of_premature_stop
    assert reading.extra == extra


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "answered nothing"),
        ("   ", "answered nothing"),
        ('{"summary": "cut off', "not JSON"),
        ("Here is my verdict: " + answer(), "not JSON"),
        ("```json\n" + answer() + "\n```\nHope this helps!", "not JSON"),
        ("[1, 2]", "not an object (list)"),
        (json.dumps({"checks": {}}), "no summary"),
        (json.dumps({"summary": "  ", "checks": {}}), "no summary"),
        (json.dumps({"summary": "s", "checks": [{"name": "reward_hacking"}]}), "not an object of criterion name"),
        (answer(premature_stop=None), "leaves out premature_stop"),
        (answer(budget_misjudged={"outcome": "fail"}), "criteria the rubric does not: budget_misjudged"),
        (answer(premature_stop={"outcome": "maybe"}), "outcome must be one of pass, fail, not_applicable, not 'maybe'"),
        (answer(premature_stop={"outcome": "FAILED"}), "not 'failed'"),
        (answer(premature_stop={"explanation": "no outcome"}), "premature_stop: no outcome"),
        (answer(premature_stop={"outcome": "fail", "explanation": ["a"]}), "explanation is not text"),
        (answer(premature_stop={"outcome": "fail", "steps": "12, 14"}), "steps must be a list"),
        (answer(premature_stop={"outcome": "fail", "steps": [12.5]}), "steps must be a list"),
        (answer(premature_stop={"outcome": "fail", "steps": [True]}), "steps must be a list"),
        (answer(premature_stop="fail"), "premature_stop: not an object"),
    ],
)
def test_what_is_refused(text, reason):
    with pytest.raises(ReadingError) as refused:
        parse_answer(text, CRITERIA, STEPS)
    assert reason in str(refused.value)
