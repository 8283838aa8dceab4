"""The trajectory the judge reads: folded waits, outputs cut to head and tail, key steps in full, within the budget."""
from __future__ import annotations

import re

import pytest

from trajectories.analysis.judge_digest import (
    LEVELS, DigestHeader, DigestStep, compress, estimate_tokens, head_tail, units,
)

HEADER = DigestHeader(task="hash_join", instruction="Make the join fast. " * 50, budget_sec=4 * 3600,
                      duration_sec=3 * 3600, reward=0.0, n_benchmark_calls=1)
DIFF = "--- a/join.c\n+++ b/join.c\n@@ -1 +1 @@\n-int slow;\n+int fast;\n"


def cycle(start: int, t: float) -> list[DigestStep]:
    """One experiment: a look, an edit, a build, a benchmark call, then a long wait (ten polls)."""
    steps = [
        DigestStep(start, kinds=("inspect",), elapsed_sec=t, message="Let me look.", commands=("cat join.c",),
                   outputs=("int slow;\n" * 400,)),
        DigestStep(start + 1, kinds=("edit",), elapsed_sec=t + 10, message="Make it fast.", diff=DIFF,
                   commands=("sed -i s/slow/fast/ join.c",)),
        DigestStep(start + 2, kinds=("build",), elapsed_sec=t + 20, commands=("make",), outputs=("cc -O2 join.c\n" * 50,)),
        DigestStep(start + 3, kinds=("benchmark",), elapsed_sec=t + 30, commands=("python bench.py",),
                   outputs=("warming up\n" * 300 + "time: 1.25 s\n",), metric="metric 1.25 s (normalised score 0.4)"),
    ]
    steps += [DigestStep(start + 4 + i, kinds=("wait",), elapsed_sec=t + 40 + 60 * i, commands=("sleep 60",)) for i in range(10)]
    return steps


def trajectory(n_cycles: int) -> list[DigestStep]:
    steps = [DigestStep(0, source="user", message="You are an agent. " * 100)]
    for c in range(n_cycles):
        steps += cycle(1 + 14 * c, 700.0 * c)
    return steps


def cited(text: str) -> set[int]:
    """Every step number the text names (titles, one-liners, fold and gap ranges' ends)."""
    found = set()
    for first, last in re.findall(r"steps? (\d+)(?:-(\d+))?", text):
        found.add(int(first))
        if last:
            found.add(int(last))
    return found


def test_a_short_rollout_is_sent_in_full_its_waits_folded():
    steps = trajectory(3)
    digest = compress(HEADER, steps, 30_000)
    assert digest.level == "full"
    assert digest.folded == 30 and digest.omitted == 0 and digest.shown == len(steps) - 30
    assert "[steps 5-14 folded: 10 waits, t=0m40s to t=9m40s]" in digest.text
    assert digest.text.count(DIFF.strip()) == 3  # every edit's diff, whole
    assert digest.text.count("=> metric 1.25 s (normalised score 0.4)") == 3
    assert "time: 1.25 s" in digest.text  # an output's tail is kept...
    assert "characters cut ..." in digest.text  # ...its middle is not
    assert digest.step_ids == frozenset(s.step_id for s in steps)


@pytest.mark.parametrize("budget", [2_000, 8_000, 30_000, 400_000])
def test_a_20000_step_rollout_fits_every_budget(budget):
    steps = trajectory(1_430)  # 20,021 steps
    assert len(steps) > 20_000
    digest = compress(HEADER, steps, budget)
    assert digest.tokens == estimate_tokens(digest.text) <= budget
    assert digest.n_steps == len(steps)
    assert cited(digest.text) <= digest.step_ids  # every number it shows is a real step
    assert f"Steps: {len(steps)}" in digest.text
    if budget >= 8_000:
        # Key steps thinned evenly: the first and the last benchmark calls are always there.
        assert "step 4 (" in digest.text and "step 20010 (" in digest.text
    if budget >= 400_000:
        # Room for every key step: every benchmark call with its metric.
        assert digest.text.count("metric 1.25 s") == 1_430


def test_levels_lose_detail_in_order():
    steps = trajectory(40)
    sizes = [compress(HEADER, steps, budget).tokens for budget in (200_000, 40_000, 12_000, 5_000, 3_000)]
    assert sizes == sorted(sizes, reverse=True)
    levels = [compress(HEADER, steps, budget).level for budget in (200_000, 40_000, 12_000)]
    assert levels[0] == LEVELS[0].name and levels[0] != levels[-1]


def test_a_gap_counts_the_steps_it_stands_for():
    digest = compress(HEADER, trajectory(40), 3_000)
    counted = sum(int(n) for n in re.findall(r"not shown: (\d+) steps", digest.text))
    assert counted == digest.omitted > 0


@pytest.mark.parametrize(
    ("kinds", "repeats", "folds"),
    [
        (("wait",), False, True),
        (("inspect",), True, True),  # the same look again
        (("inspect",), False, False),
        (("inspect", "wait"), True, True),
        (("benchmark", "wait"), True, False),  # a benchmark call never folds
        ((), False, False),  # a message without a call
    ],
)
def test_what_folds(kinds, repeats, folds):
    steps = [DigestStep(i, kinds=kinds, repeats=repeats) for i in range(3)]
    assert (len(units(steps)) == 1) is folds


def test_two_foldable_steps_stay_steps():
    assert len(units([DigestStep(1, kinds=("wait",)), DigestStep(2, kinds=("wait",))])) == 2


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 100, "short"),
        ("a" * 60 + "b" * 40, 10, "aaaaaa\n[... 90 characters cut ...]\nbbbb"),
        ("anything", 0, ""),
        ("kept whole", None, "kept whole"),
    ],
)
def test_head_tail(text, limit, expected):
    assert head_tail(text, limit) == expected


def test_tokens_are_estimated_high_for_text_that_is_not_ascii():
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("日本語") == 3
