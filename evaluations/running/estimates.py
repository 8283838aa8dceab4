"""What a campaign will cost, from earlier rollouts of comparable entries.

For each task, the earlier ended rollouts of the same model and harness on
the same task are the best guide; without them, those of the same harness
with any model on that task; without either, the task's budget bounds the
agent time and the cost is unknown. Plain data in, plain data out.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import mean


@dataclass(frozen=True)
class Sample:
    cost_usd: float | None
    agent_sec: float | None


@dataclass(frozen=True)
class TaskBasis:
    task: str
    budget_sec: float | None
    same_entry: list[Sample]
    same_harness: list[Sample]


@dataclass(frozen=True)
class Estimate:
    cost_usd: float | None  # None when no task has a cost to go by
    agent_hours: float  # expected agent time, all rollouts together
    budget_hours: float  # the tasks' budgets x k: the most it can take
    costed_tasks: int  # tasks whose cost comes from earlier rollouts
    n_tasks: int
    basis: str  # in words, what the figures come from

    @property
    def text(self) -> str:
        cost = f"about ${self.cost_usd:,.2f}" if self.cost_usd is not None else "cost unknown"
        if self.cost_usd is not None and self.costed_tasks < self.n_tasks:
            cost += f" for the {self.costed_tasks} of {self.n_tasks} tasks with a recorded cost"
        return (f"{cost}, about {self.agent_hours:.1f} h of agent time (at most {self.budget_hours:.1f} h, "
                f"the tasks' budgets); {self.basis}")


def estimate(tasks: list[TaskBasis], k: int) -> Estimate:
    cost = 0.0
    hours = 0.0
    costed = entry = harness = 0
    for task in tasks:
        samples = task.same_entry or task.same_harness
        entry += bool(task.same_entry)
        harness += bool(not task.same_entry and task.same_harness)
        costs = [s.cost_usd for s in samples if s.cost_usd is not None]
        seconds = [s.agent_sec for s in samples if s.agent_sec is not None]
        if costs:
            cost += mean(costs) * k
            costed += 1
        hours += (mean(seconds) if seconds else (task.budget_sec or 0)) * k / 3600
    budget = sum((task.budget_sec or 0) for task in tasks) * k / 3600
    parts = []
    if entry:
        parts.append(f"{entry} task(s) from this model and harness's earlier rollouts")
    if harness:
        parts.append(f"{harness} from this harness with other models")
    rest = len(tasks) - entry - harness
    if rest:
        parts.append(f"{rest} with nothing to go by (their budget counted in full)")
    return Estimate(
        cost_usd=round(cost, 2) if costed else None,
        agent_hours=round(hours, 2),
        budget_hours=round(budget, 2),
        costed_tasks=costed,
        n_tasks=len(tasks),
        basis="; ".join(parts) or "no tasks",
    )
