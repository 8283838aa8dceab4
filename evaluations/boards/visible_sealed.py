"""Per counted rollout of a board, the best and last score its agent saw beside its sealed grade (figures.visible).

The rollouts are the board's counted ones (its cells' rollout ids, with
the scores the board counted); their stored curves are read here.
"""
from __future__ import annotations

from trajectories.models import Rollout

from evaluations.boards import board as board_shape
from evaluations.figures import visible


def rollout_gaps(board: board_shape.Board) -> dict[str, list[visible.RolloutGap]]:
    """Entry key -> its counted rollouts' gaps, in the board's task order."""
    wanted = {}
    for task in board.tasks:
        for key, cell in board.cells.get(task.id, {}).items():
            for rollout_id, score in zip(cell.rollout_ids, cell.scores):
                wanted[rollout_id] = (key, task.id, score)
    curves = dict(Rollout.objects.filter(pk__in=list(wanted)).values_list("pk", "curve"))
    clip_to = 1.0 if board.version.clip_rewards else None
    result: dict[str, list[visible.RolloutGap]] = {}
    for rollout_id, (key, task, sealed) in wanted.items():
        best, last = visible.visible_scores(curves.get(rollout_id), clip_to)
        result.setdefault(key, []).append(visible.RolloutGap(rollout_id, task, best, last, sealed))
    return result
