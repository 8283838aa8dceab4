"""Visible against sealed: the best score the agent saw in its benchmark calls beside the verifier's grade."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import call_command

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task

from evaluations.figures import visible
from evaluations.tests.board_factories import make_rollout
from trajectories.services import classify_and_store


@pytest.mark.parametrize(
    "curve, clip_to, expected",
    [
        ([], None, (None, None)),
        (None, None, (None, None)),
        ([{"t": 10, "score": 0.4, "best_score": 0.4}, {"t": 20, "score": 0.2, "best_score": 0.4}], None, (0.4, 0.2)),
        ([{"t": 10, "score": 1.3, "best_score": 1.3}], 1.0, (1.0, 1.0)),  # on the version's footing
        ([{"t": 10, "score": None, "best_score": 0.7}], None, (0.7, None)),
        ([{"t": 10, "metric": 3.0}], None, (None, None)),  # a call without a score (no anchors)
    ],
)
def test_visible_scores(curve, clip_to, expected):
    assert visible.visible_scores(curve, clip_to) == expected


def test_the_figures_and_the_behaviour_flag_read_a_call_the_same_way():
    """The sealed_below_visible flag (trajectories.failures.rules) reads tasks.scoring's: one reading, not two."""
    from tasks import scoring

    assert visible.visible_scores is scoring.visible_scores and visible.visible_best_call is scoring.visible_best_call


def test_entry_gap_is_the_mean_over_tasks_of_the_mean_over_rollouts():
    gaps = [
        visible.RolloutGap(1, "t1", 0.9, 0.9, 0.5),  # +.4
        visible.RolloutGap(2, "t1", 0.6, 0.5, 0.6),  # 0
        visible.RolloutGap(3, "t2", 0.3, 0.3, 0.4),  # -.1
        visible.RolloutGap(4, "t3", None, None, 0.8),  # no benchmark call: left out
    ]
    g = visible.entry_gap("e", gaps, {"t1": "a", "t2": "b", "t3": "b"}, n_resamples=500)
    assert g.n_rollouts == 3 and g.n_tasks == 2 and g.n_above == 1
    assert g.mean_gap == pytest.approx((0.2 - 0.1) / 2)
    # t1 redraws {.4, 0} (category a), t2 is alone in b: (mean of two draws of t1 - .1) / 2: 0 .. .15.
    assert g.ci[0] == pytest.approx(-0.05) and g.ci[1] == pytest.approx(0.15)
    assert visible.entry_gap("e", gaps[3:], {}).mean_gap is None


@pytest.mark.django_db
def test_the_command_prints_each_entrys_mean_gap():
    cache.clear()
    version = BenchmarkVersion.objects.create(name="1.0", clip_rewards=False)
    tasks = [Task.objects.create(version=version, name=f"t{j}", category="c", budget_sec=3600) for j in range(3)]
    harness = Harness.objects.create(name="terminus-2", version="2.0.0")
    seen = {"model-a": [(0.9, 0.7), (0.5, 0.5), (0.4, 0.1)], "model-b": [(0.2, 0.3), (0.6, 0.6), (None, 0.2)]}
    for name, rows in seen.items():
        model = AgentModel.objects.create(name=name, display_name=name)
        for task, (best, sealed) in zip(tasks, rows):
            curve = [] if best is None else [{"t": 60, "score": best, "best_score": best}]
            classify_and_store(make_rollout(task, model, harness, sealed, curve=curve))
    out = io.StringIO()
    call_command("compare_entries", "--version", "1.0", "--resamples", "200", "--rollouts", stdout=out)
    section = out.getvalue().split("Visible against sealed", 1)[1]
    lines = re.findall(r"^\[(\d)\]\s+(\d+)\s+(\d+)\s+(\S+)\s+\[(\S+), (\S+)\]\s+(\d+)\s+(\d+)$", section, flags=re.M)
    by_row = {int(row): rest for row, *rest in lines}
    # Plain numpy: one rollout a task, so the mean over tasks of visible best - sealed.
    a = np.mean([0.9 - 0.7, 0.5 - 0.5, 0.4 - 0.1])
    b = np.mean([0.2 - 0.3, 0.6 - 0.6])
    assert by_row[1][:3] == ["3", "3", f"{a:+.4f}"] and by_row[1][-2:] == ["2", "2"]
    assert by_row[2][:3] == ["2", "2", f"{b:+.4f}"] and by_row[2][-2:] == ["0", "0"]
    # Beyond the grader's noise (0.05 by default): the 0.2 and 0.3 gaps are flagged, each marked in the listing.
    assert section.count("[sealed_below_visible]") == 2
    assert "visible best –, last –, sealed 0.200, gap –" in section
