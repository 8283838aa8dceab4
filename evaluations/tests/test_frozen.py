"""Frozen dataclasses pickled as their constructor's arguments (evaluations.boards.frozen), as the board's types are."""
from __future__ import annotations

import copyreg
import dataclasses
import io
import pickle

import pytest

from evaluations.boards import board
from evaluations.boards.frozen import pickled_by_fields


@pickled_by_fields
@dataclasses.dataclass(frozen=True, slots=True)
class Empty:
    pass


@pickled_by_fields
@dataclasses.dataclass(frozen=True, slots=True)
class One:
    value: list[int]


@pickled_by_fields
@dataclasses.dataclass(frozen=True, slots=True)
class Several:
    name: str
    inner: One | None = None
    pair: tuple[int, int] = (0, 0)


@pytest.mark.parametrize("value", [Empty(), One([1, 2]), Several("a", One([3]), (1, 2)), Several("b")])
def test_a_value_comes_back_equal_and_frozen(value):
    again = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    assert again == value and type(again) is type(value)
    for field in dataclasses.fields(again):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(again, field.name, None)


def test_it_is_pickled_as_the_class_and_its_values():
    assert Several("a", None, (1, 2)).__reduce__() == (Several, ("a", None, (1, 2)))
    assert One([1]).__reduce__() == (One, ([1],))


def test_a_field_outside_init_is_refused():
    @dataclasses.dataclass(frozen=True)
    class Derived:
        a: int
        b: int = dataclasses.field(init=False, default=0)

    with pytest.raises(TypeError, match="outside __init__"):
        pickled_by_fields(Derived)


def test_every_type_of_the_board_pickles_by_its_fields():
    for shape_type in board.SHAPE_TYPES:
        assert shape_type.__reduce__ is not object.__reduce__, shape_type
        assert shape_type.__reduce__.__qualname__.startswith("pickled_by_fields"), shape_type


class _DataclassWay(pickle.Pickler):
    """Pickles a frozen dataclass the way the dataclasses module does (what a cache holds from before frozen)."""

    def reducer_override(self, obj):
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return copyreg.__newobj__, (type(obj),), obj.__getstate__()
        return NotImplemented


def test_a_value_pickled_the_dataclasses_way_still_loads():
    value = Several("a", One([3]), (1, 2))
    stream = io.BytesIO()
    _DataclassWay(stream, pickle.HIGHEST_PROTOCOL).dump(value)
    assert b"Several" in stream.getvalue() and pickle.loads(stream.getvalue()) == value
