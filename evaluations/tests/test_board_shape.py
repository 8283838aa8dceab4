"""The board's shape (evaluations.boards.board): typed, frozen, pickled into the cache under its own fingerprint."""
from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path

import pytest
from django.core.cache import cache

from evaluations.boards import board
from evaluations.boards import compute, serving
from evaluations.models import PublishedFigure

from evaluations.tests.board_factories import hand_table

ROOT = Path(__file__).resolve().parents[2]


def test_every_type_of_the_board_is_in_its_fingerprint():
    defined = {
        value for _, value in inspect.getmembers(board, inspect.isclass)
        if dataclasses.is_dataclass(value) and value.__module__ == board.__name__
    }
    assert defined <= set(board.SHAPE_TYPES)
    assert board.Figures in board.SHAPE_TYPES  # aggregation's, carried as it is


def test_the_fingerprint_changes_with_any_field():
    cell = dataclasses.make_dataclass("Cell", [("avg", "float"), ("scores", "list[float]")])
    same = dataclasses.make_dataclass("Cell", [("avg", "float"), ("scores", "list[float]")])
    renamed = dataclasses.make_dataclass("Cell", [("mean", "float"), ("scores", "list[float]")])
    retyped = dataclasses.make_dataclass("Cell", [("avg", "float | None"), ("scores", "list[float]")])
    assert board.fingerprint((cell,)) == board.fingerprint((same,))
    assert len({board.fingerprint((t,)) for t in (cell, renamed, retyped)}) == 3


def test_the_fingerprint_changes_when_a_type_moves():
    """A pickle names its classes by module: a board pickled before a type moved must not be read after."""
    here = dataclasses.make_dataclass("Cell", [("avg", "float")], module="evaluations.figures.aggregation")
    moved = dataclasses.make_dataclass("Cell", [("avg", "float")], module=board.__name__)
    assert board.fingerprint((here,)) != board.fingerprint((moved,))


@pytest.mark.parametrize(
    "measure, value, interval",
    [("avg", "avg", "avg_ci"), ("best", "best", "best_ci"), ("dom", "dominance", "dominance_ci")],
)
def test_a_measure_names_a_figure_and_its_interval(measure, value, interval):
    figures = board.Figures(
        avg=0.1, best=0.2, avg_ci=(0.0, 0.3), best_ci=(0.1, 0.4), dominance=0.5, dominance_ci=(0.4, 0.6),
        rank=1, rank_range=(1, 2), n_tasks=1, n_tasks_total=2, n_rollouts=3,
    )
    assert board.measure_value(figures, measure) == getattr(figures, value)
    assert board.measure_interval(figures, measure) == getattr(figures, interval)


def test_the_measures_are_those_a_paper_prints():
    assert set(board.MEASURE_FIELDS) == set(PublishedFigure.Measure.values)


def test_the_measures_have_one_writer():
    """A second table of measure -> field (leaderboard had two that agreed by luck) fails here."""
    found = [
        str(path.relative_to(ROOT)) for path in (ROOT / "evaluations").rglob("*.py")
        if "tests" not in path.parts and '"dom": "dominance"' in path.read_text()
    ]
    assert found == ["evaluations/boards/board.py"]


def test_to_json_keeps_field_order_and_aggregations_own_figures():
    version = board.VersionInfo(id=3, name="1.1", benchmark="AutoLab", label="AutoLab v1.1", clip_rewards=True)
    assert list(board.to_json(version).items()) == [
        ("id", 3), ("name", "1.1"), ("benchmark", "AutoLab"), ("label", "AutoLab v1.1"), ("clip_rewards", True)
    ]
    figures = board.Figures(
        avg=0.1, best=0.2, avg_ci=(0.0, 0.3), best_ci=(0.1, 0.4), dominance=None, dominance_ci=None,
        rank=None, rank_range=None, n_tasks=1, n_tasks_total=2, n_rollouts=3,
    )
    cell = board.PublishedCell(avg=0.5, best=0.5, scores=[0.5])
    assert board.to_json({"f": figures, 7: cell, "pair": (1, 2)}) == {
        "f": figures.as_dict(), 7: {"avg": 0.5, "best": 0.5, "scores": [0.5]}, "pair": [1, 2]
    }
    assert list(board.to_json(figures)) == list(figures.as_dict())


@pytest.mark.django_db
def test_a_board_is_frozen_and_pickles_whole():
    data = compute.compute_board(hand_table()["version"])
    assert isinstance(data, board.Board) and all(isinstance(e, board.BoardEntry) for e in data.entries)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.entries[0].comparison = False
    again = pickle.loads(pickle.dumps(data))
    assert again == data and again is not data
    assert again.entries[0].figures(None) == data.entries[0].overall


@pytest.mark.django_db
def test_the_cache_key_carries_the_shape_and_no_other_shape_is_read():
    version = hand_table()["version"]
    key = serving.board_key(version.pk)
    assert f":{board.SHAPE}:" in key
    # A board cached as a dict (code from before the shape, sharing the cache) under this very key.
    cache.set(key, {"entries": [], "cells": {}}, 60)
    data = serving.build(version)
    assert isinstance(data, board.Board) and len(data.entries) == 3
    assert serving.board(version) is data
    # A board stored in the database by code of another shape is never unpickled as this one: being built.
    from evaluations.models import StoredBoard

    StoredBoard.objects.update(shape="another")
    serving.forget_recent_boards()
    cache.clear()
    assert serving.board(version) is None
