"""evaluations.running.estimates: a campaign's cost and time from earlier rollouts, by hand."""
from __future__ import annotations

from evaluations.running.estimates import Sample, TaskBasis, estimate


def test_same_entry_first_then_same_harness_then_the_budget():
    tasks = [
        # $2 and $4 for 1 h and 2 h before: $3 and 1.5 h a rollout.
        TaskBasis("a", 7200, [Sample(2.0, 3600), Sample(4.0, 7200)], [Sample(100.0, 60)]),
        # Only other models with this harness: $1 and 0.5 h.
        TaskBasis("b", 7200, [], [Sample(1.0, 1800)]),
        # Nothing: the budget (4 h) in full, no cost.
        TaskBasis("c", 14400, [], []),
    ]
    result = estimate(tasks, k=3)
    assert result.cost_usd == (3.0 + 1.0) * 3
    assert result.agent_hours == (1.5 + 0.5 + 4.0) * 3
    assert result.budget_hours == (2 + 2 + 4) * 3
    assert result.costed_tasks == 2 and result.n_tasks == 3
    assert "for the 2 of 3 tasks with a recorded cost" in result.text
    assert result.basis == (
        "1 task(s) from this model and harness's earlier rollouts; 1 from this harness with other models; "
        "1 with nothing to go by (their budget counted in full)"
    )


def test_no_cost_recorded_anywhere_is_unknown_not_zero():
    result = estimate([TaskBasis("a", 3600, [Sample(None, 1800)], [])], k=2)
    assert result.cost_usd is None and result.agent_hours == 1.0
    assert result.text.startswith("cost unknown, about 1.0 h")
