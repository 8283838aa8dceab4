"""Rows made with a migration state's historical models (the `migrate` fixture's apps)."""
from __future__ import annotations


def old_rollout(apps, *, trial_name: str = "old", task_fields: dict | None = None, **fields):
    """A rollout of a new task, model and harness, as a database before the migration under test held it."""
    Version = apps.get_model("tasks", "BenchmarkVersion")
    Task = apps.get_model("tasks", "Task")
    AgentModel = apps.get_model("evaluations", "AgentModel")
    Harness = apps.get_model("evaluations", "Harness")
    Rollout = apps.get_model("trajectories", "Rollout")
    task = Task.objects.create(version=Version.objects.create(name="9.9"), name="old_task", **(task_fields or {}))
    return Rollout.objects.create(
        task=task, model=AgentModel.objects.create(name="old-model"), harness=Harness.objects.create(name="h"),
        trial_name=trial_name, **fields,
    )


def build_documents(apps, rollout) -> None:
    """The rollout's search documents, as the importer wrote them (trajectories.search.query.rebuild_documents)."""
    from trajectories.search.query import rebuild_documents

    names = ("Step", "ToolCall", "Observation", "RolloutDocument")
    rebuild_documents([rollout.pk], models=tuple(apps.get_model("trajectories", name) for name in names))
