"""A board's table rows and heatmap cells as HTML, made once per board.

A leaderboard row shows one entry's figures for one scope (all tasks or a
category), a heatmap cell one entry's score on one task, and neither
anything of the request: so a sort or a page click on a 100-entry board
re-lists HTML already made instead of rendering some 30 rows' 17 cells
through the template, or 900 cells, again (most of a click's server time).
The row templates stay the one source of a row's markup.

Boards are immutable (a new rollout makes a new Board), so the HTML is kept
by the board's identity (Board.identity).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe

from evaluations.boards.board import Board

BOARD_ROW = "evaluations/_board_row.html"
USAGE_ROW = "evaluations/_usage_row.html"
# Boards whose HTML is kept in this process (a page's version with a few filters, and the one before).
KEPT = 8

_kept: OrderedDict[tuple, dict[tuple, SafeString]] = OrderedDict()  # board -> what was made for it
_lock = threading.Lock()


class Made:
    """What was made for one board (rows, cells), found once per page: a heatmap asks for up to 3,600 cells."""

    __slots__ = ("_made",)

    def __init__(self, made: dict[tuple, SafeString]):
        self._made = made

    def get(self, key: tuple, make: Callable[[], SafeString]) -> SafeString:
        """make(), for this board and `key`: from memory after the first time."""
        html = self._made.get(key)
        if html is None:
            html = self._made[key] = make()
        return html

    def rendered(self, template: str, category: str | None, entry_key: str, row: dict, marks: tuple = ()) -> SafeString:
        """`template` rendered with {"row": row}, for this board, scope and entry (and the row's best and
        second marks, which the entries shown decide: most rows have none, and share one HTML)."""

        def render() -> SafeString:
            return mark_safe(get_template(template).render({"row": row}))  # noqa: S308 (a template's output)

        return self.get((template, category, entry_key, marks), render)


def made_for(data: Board) -> Made:
    """What this process made for `data` so far (nothing, for a board it has not shown)."""
    which = data.identity
    with _lock:
        made = _kept.get(which)
        if made is None:
            made = _kept[which] = {}
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
        else:
            _kept.move_to_end(which)
    return Made(made)


def forget() -> None:
    """Drop everything made (tests)."""
    with _lock:
        _kept.clear()
