"""Each harness's trial imports with its edits as diffs, its step kinds and its benchmark metric."""
from __future__ import annotations

import pytest

from trajectories.models import Rollout
from trajectories.services import import_trial_dir

from . import harness_trajectories as h
from .trialdata import make_task, make_trial


@pytest.fixture
def task(db):
    task = make_task("demo_task")
    task.baseline_score, task.reference_score, task.benchmark_pattern = 20.0, 5.0, r"python3 bench\.py"
    task.save()
    return task


@pytest.mark.parametrize("harness", sorted(h.HARNESSES))
def test_harness_trial_imports_with_diffs_kinds_and_metrics(tmp_path, task, harness):
    make, expected_kinds = h.HARNESSES[harness]
    outcome = import_trial_dir(make_trial(tmp_path, trajectory_data=make()))
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get()
    steps = list(rollout.steps.filter(subtrajectory=None).order_by("position"))
    assert [s.kind_list for s in steps[1:]] == expected_kinds
    assert h.DIFF_LINES in steps[2].diff and "unknown" not in steps[2].diff
    assert (steps[3].metric_value, steps[3].metric_unit, steps[3].metric_status) == (8.0, "ms", "parsed")
    assert (rollout.n_benchmark_calls, rollout.n_edits, rollout.best_metric) == (1, 1 if harness != "inspect-ai" else 2, 8.0)
    changed = {row["path"]: row for row in rollout.files_changed}
    assert h.DIFF_LINES in changed[h.PATH]["diff"] and changed[h.PATH]["step_ids"] == [3]
    # Tool calls keep their own kinds; commands read from a message are no tool call rows.
    for step in steps[1:]:
        assert all(call.kinds.split() for call in step.tool_calls.all())


def test_a_reply_terminus_2_rejected_ran_nothing_and_the_write_after_it_is_the_edit(tmp_path, task):
    """It was shown as an executed edit, and the real write after it as "unchanged content"."""
    outcome = import_trial_dir(make_trial(tmp_path, trajectory_data=h.terminus_2_rejected_reply()))
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get()
    steps = list(rollout.steps.filter(subtrajectory=None).order_by("position"))
    assert [s.kind_list for s in steps[1:]] == [["inspect"], [], ["edit"], ["benchmark"], ["submit"]]
    rejected, write = steps[2], steps[3]
    assert rejected.diff == "" and rejected.tool_calls.count() == 0
    assert h.DIFF_LINES in write.diff and "unchanged" not in write.diff
    assert rollout.n_edits == 1
    assert {row["path"]: row["step_ids"] for row in rollout.files_changed}[h.PATH] == [4]
