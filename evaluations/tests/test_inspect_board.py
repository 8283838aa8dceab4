"""The board counts an Inspect log's samples as Inspect does: scored ones by value_to_float, errored ones left out."""
from __future__ import annotations

import pytest

from evaluations.boards import serving
from tasks.models import BenchmarkVersion, Task
from trajectories.models import Rollout
from trajectories.storing.inspect_import import import_inspect_log
from trajectories.tests.test_inspect_import import qa_logs  # noqa: F401  (logs made by inspect_ai itself)


@pytest.mark.django_db
def test_the_board_counts_as_inspect_does(qa_logs, client):
    version = BenchmarkVersion.objects.create(name="qa")
    Task.objects.create(version=version, name="capitals", category="qa", metric="accuracy", direction="higher",
                        baseline_score=0.0, reference_score=1.0)
    import_inspect_log(qa_logs["graded"], version="qa")
    (entry,) = serving.board(version).entries
    assert entry.overall.avg == pytest.approx(0.5)  # Inspect's accuracy: 1 of the 2 scored samples
    assert entry.excluded["excluded"] == 1
    errored = Rollout.objects.get(trial_name__contains="__q3__")
    page = client.get(f"/rollouts/{errored.pk}/").content.decode()
    assert "excluded" in page and "the sandbox went away" in page
    assert "Inspect&#x27;s working time" in page or "Inspect's working time" in page
