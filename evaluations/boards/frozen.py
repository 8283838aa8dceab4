"""Frozen dataclasses that pickle as their constructor's arguments.

A board is pickled into the shared cache by the worker that updates it and
unpickled by every web process that serves it: some 4,000 small frozen
dataclasses at 100 entries x 36 tasks. The dataclasses module pickles a
frozen class with slots through fields() and one object.__setattr__ per
field, in Python, for every object (a 100-entry board: dumps 19 ms, loads
25 ms, most of a worker's update and of a page's first view of it). As its
class and a tuple of its field values, read by one C-level attrgetter and
rebuilt by the class's own __init__, it takes about half of that.
"""
from __future__ import annotations

import operator
from dataclasses import fields
from typing import Any


def pickled_by_fields(cls: type) -> type:
    """Make `cls` (a dataclass whose every field is an __init__ argument) pickle as cls(*values)."""
    if any(not f.init for f in fields(cls)):
        raise TypeError(f"{cls.__qualname__}: a field outside __init__ would be lost")
    names = [f.name for f in fields(cls)]
    # attrgetter of two names or more returns their tuple in C; of one, the bare value.
    values = operator.attrgetter(*names) if len(names) > 1 else lambda obj: tuple(getattr(obj, n) for n in names)

    def __reduce__(self: Any) -> tuple:
        return cls, values(self)

    cls.__reduce__ = __reduce__
    return cls
