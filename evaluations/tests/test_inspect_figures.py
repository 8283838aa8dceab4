"""An Inspect task's figures from its samples' epochs, as Inspect computes them: a table of cases.

Each sample's scored epochs are reduced with the log's reducer (Avg@k, Inspect's accuracy); Best@k is each
sample's best epoch, then the mean over the samples (Inspect's accuracy under its "max" reducer: the same unit
as Avg@k, never above a sample's best score); score@k is each sample's expected best of k of its epochs, then
the mean over the samples, so that at k = its epochs it is Best@k. A log of 6 samples x 3 epochs read 1.0 at
score@6, the best of six different questions, which is no figure of Inspect's.
No database: `counting.table_scores` over what `counting._count` gathers, then `aggregation`.
"""
from __future__ import annotations

import pytest

from evaluations.boards import counting
from evaluations.figures import aggregation as agg

CELL = ("entry", 1)


def table_of(units: list[tuple[tuple[str, str, str] | None, list[float]]]) -> agg.ScoreTable:
    """One entry, one task, whose counted rollouts are `units`: (Inspect sample or None, its epochs' scores)."""
    counted = counting.Counted()
    for unit, epochs in units:
        log, name, reducer = unit or ("", None, "")
        row = {"job_id": log, "config__inspect__sample_id": name, "config__inspect__reducer": reducer}
        for score in epochs:
            counted.scores[CELL].append(score)
            counting._note_sample(counted, CELL, row, convention="")  # as `_count` notes each counted rollout
    cells = counting.table_scores(counted)
    return agg.ScoreTable(entries=["entry"], tasks=[1], scores=cells.scores, bests=cells.bests,
                          n_rollouts=cells.n_rollouts, epochs=cells.epochs)


def sample(name: str, reducer: str = "mean", log: str = "run-1") -> tuple[str, str, str]:
    return (log, name, reducer)


# Inspect's letters as value_to_float reads them.
C, I, P = 1.0, 0.0, 0.5

CASES = {
    # The log of the issue: 6 samples x 3 epochs, s6's third epoch errored (not counted).
    "six samples, three epochs, one errored": (
        [(sample("s1"), [C, C, C]), (sample("s2"), [C, I, P]), (sample("s3"), [I, I, I]),
         (sample("s4"), [C, P, P]), (sample("s5"), [C, C, I]), (sample("s6"), [C, I])],
        {"avg": (1 + 0.5 + 0 + 2 / 3 + 2 / 3 + 0.5) / 6, "best": 5 / 6, "at_k": [(1 + 0.5 + 0 + 2 / 3 + 2 / 3 + 0.5) / 6,
         (1 + 5 / 6 + 0 + 5 / 6 + 1 + 1) / 6, 5 / 6], "rollouts": 17},
    ),
    # Best@k is not the best sample: two questions, one right, one wrong.
    "one epoch each": ([(sample("q1"), [C]), (sample("q2"), [I])], {"avg": 0.5, "best": 0.5, "at_k": [0.5], "rollouts": 2}),
    "uneven epochs": ([(sample("q1"), [C, I, I]), (sample("q2"), [P])],
                      {"avg": (1 / 3 + 0.5) / 2, "best": 0.75, "at_k": [(1 / 3 + 0.5) / 2, (2 / 3 + 0.5) / 2, 0.75], "rollouts": 4}),
    "the max reducer": ([(sample("q1", "max"), [I, C]), (sample("q2", "max"), [I, I])],
                        {"avg": 0.5, "best": 0.5, "at_k": [0.25, 0.5], "rollouts": 4}),
    "the median reducer": ([(sample("q1", "median"), [I, C, C]), (sample("q2", "median"), [P, I, I])],
                           {"avg": 0.5, "best": 0.75, "at_k": [(2 / 3 + 1 / 6) / 2, (1 + 1 / 3) / 2, 0.75], "rollouts": 6}),
    # The same sample id in two logs (two runs) is two samples.
    "two logs": ([(sample("q1", log="a"), [C, C]), (sample("q1", log="b"), [I, I])],
                 {"avg": 0.5, "best": 0.5, "at_k": [0.5, 0.5], "rollouts": 4}),
    # A Harbor trial beside the log's samples is a unit of its own.
    "a trial beside the samples": ([(sample("q1"), [C, I]), (None, [P])],
                                   {"avg": 0.5, "best": 0.75, "at_k": [0.5, 0.75], "rollouts": 3}),
    # A numeric scorer on a version that does not clip: still each sample's best, then the mean.
    "scores above 1, unclipped": ([(sample("q1"), [1.5, 0.0, 0.0]), (sample("q2"), [0.0, 0.0, 0.0])],
                                  {"avg": 0.25, "best": 0.75, "at_k": [0.25, 0.5, 0.75], "rollouts": 6}),
    # Rollouts of no sample (Harbor trials): the task's best rollout, the expected best of k of them.
    "plain rollouts": ([(None, [C]), (None, [P]), (None, [I])],
                       {"avg": 0.5, "best": 1.0, "at_k": [0.5, (1 + 1 + 0.5) / 3, 1.0], "rollouts": 3}),
}


@pytest.mark.parametrize("units, expected", CASES.values(), ids=CASES.keys())
def test_an_inspect_tasks_figures(units, expected):
    table = table_of(units)
    (figures,) = agg.scope_figures(table, ["entry"], n_resamples=200).values()
    assert figures.avg == pytest.approx(expected["avg"])
    assert figures.best == pytest.approx(expected["best"])
    assert figures.n_rollouts == expected["rollouts"]
    assert agg.score_at_k(table, "entry") == pytest.approx(expected["at_k"])
    # In the unit of Avg@k: never above the best a sample got, and score@k ends at Best@k.
    assert figures.best <= max(score for _, epochs in units for score in epochs)
    assert agg.score_at_k(table, "entry")[-1] == pytest.approx(figures.best)
    assert figures.best_ci[1] <= max(max(epochs) for _, epochs in units)
