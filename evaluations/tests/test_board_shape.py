"""The board's shape (evaluations.board): typed, frozen, pickled into the cache under its own fingerprint."""
from __future__ import annotations

import dataclasses
import inspect

import pytest

from evaluations import board
from evaluations.models import PublishedFigure


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
