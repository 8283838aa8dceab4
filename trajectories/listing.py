"""The rollouts list's page: its GET parameters, and its rows found without reading every row they select.

`RolloutList` owns the page's parameters (the filters and order through
`RolloutFilters`, which the API and CSV read too, and the page number) and
answers what the template shows: the page's rows, whether there are pages
before and after, and how many rows match, counted up to `COUNT_CAP`.

A page costs about the same at 2,700 rollouts as at 32,400 (issue 49):

- the count stops at `COUNT_CAP` ("more than 1,000 rollouts"): no COUNT(*)
  over every row the filters select; a selection within it is sorted at
  once;
- an order led by a related row's name (task, model, harness: few rows
  against many rollouts) walks those names in order and reads the rollouts
  of a few names at a time, sorted by the rest of the order, until the page
  is full: a page sorts the rollouts of its own names, not every rollout
  (a name of very many, a site's one harness, is walked again by the next
  name of the order: its tasks); names before the page are skipped by their
  count;
- an order on a rollout's own column (reward, start, steps, benchmarks)
  reads it from the column's index, up to the page.

The rows and their order are the ones `RolloutFilters.rollouts()` gives
(the API's and the CSV's), page for page.
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from django.db.models import QuerySet
from django.http import QueryDict

from trajectories.forms import SORTS, RolloutFilters, listed_rows, related
from trajectories.models import Rollout

PAGE_SIZE = 50
# Rows counted at most: past it the page says "more than" and numbers its pages without a last one.
COUNT_CAP = 1000
# Names of the leading relation read together at most (the walk starts with one and doubles while the page is not full).
MAX_NAMES_AT_ONCE = 8
# A relation of at most this many names (a site's harnesses) has names of very many rollouts each: the walk
# reads one of its names' rows by the order's next name. (Tasks and models are many, each of few rollouts.)
FEW_NAMES = 16
MAX_PAGE = 1_000_000


class RolloutList:
    """The rollouts list as its GET parameters ask: filters, order, page (`?page=`, from 1)."""

    def __init__(self, params: QueryDict, page_size: int = PAGE_SIZE):
        self.form = RolloutFilters(params)
        self.valid = self.form.is_valid()
        self.sort = (self.form.cleaned_data.get("sort") if self.valid else "") or "task"
        self.page_size = page_size
        self.asked = _page_number(params.get("page"))
        query = params.copy()
        query.pop("page", None)
        self.query = query.urlencode()  # the parameters a page link keeps
        query.pop("sort", None)
        self.sort_query = query.urlencode()  # those a sort link keeps

    def selected(self) -> QuerySet[Rollout]:
        """Every row the filters select, in the order asked for (nothing when a filter is bad)."""
        return self.form.rollouts() if self.valid else Rollout.objects.none()

    @cached_property
    def counted(self) -> int:
        """Rows the filters select, counted up to COUNT_CAP + 1."""
        if not self.valid:
            return 0
        return self.selected().order_by()[: COUNT_CAP + 1].count()

    @property
    def count(self) -> int:
        return min(self.counted, COUNT_CAP)

    @property
    def count_is_exact(self) -> bool:
        return self.counted <= COUNT_CAP

    @property
    def num_pages(self) -> int | None:
        """The last page's number; None when the count stopped at its cap."""
        if not self.count_is_exact:
            return None
        return max(1, -(-self.count // self.page_size))

    @cached_property
    def number(self) -> int:
        """The page's number: the one asked for, or the last page when that is past it (as Paginator.get_page)."""
        return self.asked if self.num_pages is None else min(self.asked, self.num_pages)

    @cached_property
    def _ids(self) -> list[int]:
        """The page's ids and the next page's first (to know there is one)."""
        if not self.valid:
            return []
        skip = (self.number - 1) * self.page_size
        want = self.page_size + 1
        order = SORTS[self.sort]
        if self.count_is_exact:  # at most COUNT_CAP rows: sorted at once, in one query
            return list(self.selected().order_by(*order).values_list("pk", flat=True)[skip : skip + want])
        return ordered_ids(self.selected(), order, skip, want)

    @cached_property
    def object_list(self) -> list[Rollout]:
        """The page's rollouts with what the table shows (task, version, model, harness, label, cause)."""
        ids = self._ids[: self.page_size]
        # By id alone: the filters chose them already.
        found = {row.pk: row for row in listed_rows().filter(pk__in=ids)}
        return [found[pk] for pk in ids if pk in found]

    def __iter__(self) -> Iterator[Rollout]:
        return iter(self.object_list)

    def has_next(self) -> bool:
        return len(self._ids) > self.page_size

    def has_previous(self) -> bool:
        return self.number > 1

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1


def _page_number(text: str | None) -> int:
    """The page asked for: from 1, and below an OFFSET the database takes ("?page=99999999999999999999")."""
    try:
        return min(max(1, int(text or 1)), MAX_PAGE)
    except (TypeError, ValueError):
        return 1


def _name_lead(key: str) -> bool:
    """An ascending related row's name ("task__name"): a key the walk can read from its relation's table."""
    return key.endswith("__name") and not key.startswith("-")


def ordered_ids(rows: QuerySet[Rollout], order: list[str], skip: int, want: int) -> list[int]:
    """Ids of `rows` in `order`, `want` of them after `skip`: walked by name where the order leads with one."""
    if _name_lead(order[0]):
        return walk_by_name(rows, order, skip, want)
    return list(rows.order_by(*order).values_list("pk", flat=True)[skip : skip + want])


def walk_by_name(rows: QuerySet[Rollout], order: list[str], skip: int, want: int) -> list[int]:
    """Ids of `rows` in `order` (led by a relation's "<relation>__name"), `want` of them after `skip`.

    The relation's names are read in order (its table: tasks, models or harnesses, not the rollouts), and
    the rollouts of a few names at a time, sorted by the whole order: rows of one name are together in it,
    so a page sorts the rows of its names only. Names before the page are skipped by their rows' count
    (counted up to what is left to skip). The names of a relation of few (a site's harnesses) are walked
    again by the order's next name, when it has one: each holds very many rows.
    """
    lead = order[0]
    relation = lead.removesuffix("__name")
    names = list(related(relation)._default_manager.order_by("name").values_list("name", flat=True).distinct())
    found: list[int] = []
    at_once = 1
    for chunk in _chunks(iter(names), lambda: at_once):
        in_chunk = rows.filter(**{f"{lead}__in": chunk})
        if skip:
            n = in_chunk.order_by()[: skip + 1].count()
            if n <= skip:
                skip -= n
                at_once = min(at_once * 2, MAX_NAMES_AT_ONCE)
                continue
        left = want - len(found)
        if len(chunk) == 1 and len(order) > 1 and _name_lead(order[1]) and len(names) <= FEW_NAMES:
            part = walk_by_name(in_chunk, order[1:], skip, left)
        else:
            part = list(in_chunk.order_by(*order).values_list("pk", flat=True)[skip : skip + left])
        skip = 0
        found += part
        if len(found) >= want:
            break
        at_once = min(at_once * 2, MAX_NAMES_AT_ONCE)  # names of few rows: read more of them at once
    return found


def _chunks(names: Iterator[str], size) -> Iterator[list[str]]:
    chunk: list[str] = []
    for name in names:
        chunk.append(name)
        if len(chunk) >= size():
            yield chunk
            chunk = []
    if chunk:
        yield chunk
