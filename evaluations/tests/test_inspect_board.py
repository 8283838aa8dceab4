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
    (entry,) = serving.build(version).entries
    assert entry.overall.avg == pytest.approx(0.5)  # Inspect's accuracy: 1 of the 2 scored samples
    assert entry.excluded["excluded"] == 1
    errored = Rollout.objects.get(trial_name__contains="__q3__")
    page = client.get(f"/rollouts/{errored.pk}/").content.decode()
    assert "excluded" in page and "the sandbox went away" in page
    assert "Inspect&#x27;s working time" in page or "Inspect's working time" in page


# 6 samples x 3 epochs, Inspect's letters; s6's third epoch errored, so s6 has two scored epochs.
GRADES = {"s1": "CCC", "s2": "CIP", "s3": "III", "s4": "CPP", "s5": "CCI", "s6": "CI!"}


@pytest.fixture(scope="module")
def epochs_logs(tmp_path_factory):
    from trajectories.tests.inspect_runs import make_graded_epochs_log

    folder = tmp_path_factory.mktemp("inspect-epochs")
    return {reducer: make_graded_epochs_log(folder / reducer, GRADES, reducer=None if reducer == "default" else reducer)
            for reducer in ("default", "median")}


def _version_with_capitals() -> BenchmarkVersion:
    version = BenchmarkVersion.objects.create(name="qa")
    Task.objects.create(version=version, name="capitals", category="qa", metric="accuracy", direction="higher",
                        baseline_score=0.0, reference_score=1.0)
    return version


@pytest.mark.django_db
@pytest.mark.parametrize("reducer", ["default", "median"])
def test_avg_is_inspects_own_accuracy_when_samples_have_different_numbers_of_scored_epochs(epochs_logs, reducer, client):
    """Inspect reduces each sample's epochs (the log's reducer), then averages the samples; a flat mean did not."""
    from inspect_ai.log import read_eval_log

    version = _version_with_capitals()
    import_inspect_log(epochs_logs[reducer], version="qa")
    accuracy = read_eval_log(str(epochs_logs[reducer]), header_only=True).results.scores[0].metrics["accuracy"].value
    (entry,) = serving.build(version).entries
    assert entry.overall.avg == pytest.approx(accuracy)
    assert entry.overall.n_rollouts == 17 and entry.excluded["excluded"] == 1
    (cell,) = client.get("/api/v1/heatmap/?version=qa").json()["cells"]
    assert cell["avg"] == pytest.approx(accuracy)
    # Best@k: each sample's best epoch, then the samples (Inspect's accuracy under its "max" reducer).
    assert entry.overall.best == pytest.approx(5 / 6) and cell["best"] == pytest.approx(5 / 6)
    # score@k: each sample's expected best of k of its epochs (k up to 3), ending at Best@k; it ran to k = 6
    # samples and read 1.0 there, the best of six different questions.
    at_k = entry.scope(None).score_at_k
    assert len(at_k) == 3 and at_k[-1] == pytest.approx(5 / 6)
    assert entry.overall.avg_ci[0] <= accuracy <= entry.overall.avg_ci[1] <= 1.0 and entry.overall.best_ci[1] <= 1.0


@pytest.mark.django_db
def test_an_errored_sample_has_no_score_on_the_api(epochs_logs, client):
    """Left out of the figures, it has no counted score: it read 0.0 beside its null reward."""
    _version_with_capitals()
    import_inspect_log(epochs_logs["default"], version="qa")
    rows = client.get("/api/v1/rollouts/?version=qa").json()["results"]
    (errored,) = [r for r in rows if r["excluded"]]
    assert errored["trial_name"].endswith("__s6__e3") and errored["counted"] == "excluded"
    assert errored["reward"] is None and errored["score"] is None
    assert sorted(r["score"] for r in rows if not r["excluded"]) == sorted(r["reward"] for r in rows if not r["excluded"])
