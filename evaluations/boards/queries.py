"""What pages ask of boards beyond one board: the versions to choose from, a task's results, a model's entries.

Each reads the served boards (`serving.board`); the version list is cached
under the same generation as the boards.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from django.core.cache import cache
from django.db.models import Exists, OuterRef

from agents.models import AgentModel
from tasks.models import BenchmarkVersion, Task
from trajectories.models import Rollout

from evaluations.boards import board as board_shape
from evaluations.boards.invalidation import generation
from evaluations.boards.serving import BOARD_TIMEOUT, board
from evaluations.links import rollout_url, rollouts_url
from evaluations.models import PublishedFigure, PublishedResult


def release_key(name: str) -> tuple:
    """Orders version names as releases: "1.10" after "1.9", numbers before words."""
    parts = re.findall(r"\d+|[^\d.\-_ ]+", name.lower().lstrip("v"))
    return tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts)


def versions_with_results() -> list[BenchmarkVersion]:
    """Versions that have rollouts or published results: real releases, newest first, then demo content.

    Cached like boards, and asked with EXISTS: counting every version's
    rollouts (and joining its published results) after each new rollout cost
    more than the incremental board itself at 10,000 rollouts.
    """
    key = "evaluations:versions:{}.{}.{}".format(*generation())
    ids = cache.get(key)
    if ids is None:
        versions = BenchmarkVersion.objects.filter(
            Exists(Rollout.objects.filter(task__version=OuterRef("pk")))
            | Exists(PublishedResult.objects.filter(version=OuterRef("pk")))
            | Exists(PublishedFigure.objects.filter(version=OuterRef("pk")))
        )
        ordered = sorted(versions, key=lambda v: (release_key(v.name), v.created_at), reverse=True)
        ids = [v.id for v in sorted(ordered, key=lambda v: v.demo)]
        cache.set(key, ids, BOARD_TIMEOUT)
    found = BenchmarkVersion.objects.in_bulk(ids)
    return [found[i] for i in ids if i in found]


def default_version() -> BenchmarkVersion | None:
    """The newest real release with results; demo content only when there is nothing else."""
    versions = versions_with_results()
    if versions:
        return versions[0]
    return BenchmarkVersion.objects.first()


def rollout_numbers(ids: Iterable[int | None]) -> dict[int, int]:
    """Each rollout's number by its id: pages link a rollout by its id and call it by the number its own
    page gives it ("rollout 1"), never "#<id>"."""
    return {r.id: r.number for r in Rollout.objects.filter(id__in={i for i in ids if i}).only("id", "index")}


def task_results(task: Task) -> list[board_shape.TaskResult] | None:
    """Every entry on one task: Avg/Best, the scores and the best rollout; None while its board is being built."""
    data = board(task.version)
    if data is None:
        return None
    cells = [(entry, cell) for entry in data.entries if (cell := data.cell(task.id, entry.key)) is not None]
    numbers = rollout_numbers(cell.best_rollout_id for _, cell in cells)
    results = []
    for entry, cell in cells:
        results.append(
            board_shape.TaskResult(
                entry=entry,
                cell=cell,
                best_url=rollout_url(cell.best_rollout_id) if cell.best_rollout_id else None,
                best_number=numbers.get(cell.best_rollout_id),
                rollouts_url=rollouts_url(task.id, entry.model_id, entry.harness_id),
            )
        )
    results.sort(key=lambda r: -(r.cell.avg if r.cell.avg is not None else -1))
    return results


def model_board(model: AgentModel) -> tuple[list[board_shape.EntryOnBoard], list[BenchmarkVersion]]:
    """The model's entries on every version it ran, each with its version's board; and the versions whose
    board is being built (none stored yet)."""
    version_ids = Rollout.objects.filter(model=model).order_by().values_list("task__version", flat=True).distinct()
    found, building = [], []
    for version in BenchmarkVersion.objects.filter(id__in=set(version_ids)):
        data = board(version)
        if data is None:
            building.append(version)
            continue
        found.extend(board_shape.EntryOnBoard(entry=entry, board=data) for entry in data.entries if entry.model_id == model.id)
    return found, building

