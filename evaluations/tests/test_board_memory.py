"""A large board is put out of the cyclic collector's reach once (serving._freeze), not at every recall."""
from __future__ import annotations

import dataclasses
import gc
import pickle

import pytest

from evaluations.boards import compute, serving

from evaluations.tests.board_factories import hand_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def freezes(monkeypatch):
    """The calls of gc.freeze (each still freezes), from a process with nothing frozen."""
    calls = []
    real = gc.freeze

    def freeze():
        calls.append(1)
        real()

    gc.unfreeze()
    monkeypatch.setattr(serving, "_frozen", None, raising=False)
    monkeypatch.setattr(gc, "freeze", freeze)
    yield calls
    gc.unfreeze()
    serving.forget_recent_boards()


def test_a_large_board_is_frozen_once_however_often_it_is_recalled(freezes):
    world = hand_table()
    board = dataclasses.replace(compute.compute_board(world["version"]), n_rollouts=serving.FREEZE_MIN_ROLLOUTS)
    serving._remember("a", board)
    assert len(freezes) == 1 and gc.get_freeze_count() > 0
    # The same board read again (another key, the cache, the database): a new object, the same board.
    for _ in range(3):
        serving._remember("a", pickle.loads(pickle.dumps(board)))
    assert len(freezes) == 1
    serving._remember("b", dataclasses.replace(board, computed_at=board.computed_at + 1))
    assert len(freezes) == 2


def test_a_small_board_is_not_frozen(freezes):
    world = hand_table()
    serving._remember("a", compute.compute_board(world["version"]))
    assert freezes == [] and gc.get_freeze_count() == 0
