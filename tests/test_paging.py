"""IdsFirstPaginator gives the pages Django's Paginator gives: same rows, same order, same bounds."""
from __future__ import annotations

import pytest
from django.core.paginator import Paginator
from django.db.models import F

from autolab_site.paging import IdsFirstPaginator
from trajectories.models import Rollout
from trajectories.tests.factories import make_model, make_rollout, make_task


@pytest.mark.django_db
@pytest.mark.parametrize(("per_page", "orphans"), [(7, 0), (7, 3), (50, 0), (1, 0)])
def test_the_same_pages_as_djangos(per_page, orphans):
    tasks = [make_task(f"t{i}") for i in range(3)]
    models = [make_model(f"m{i}") for i in range(4)]
    for i in range(23):
        make_rollout(tasks[i % 3], models[i % 4], index=i % 5)
    listed = Rollout.objects.select_related("task", "model").annotate(task_name=F("task__name")).order_by(
        "-task__name", "model__name", "index", "id"
    )
    ours, theirs = IdsFirstPaginator(listed, per_page, orphans=orphans), Paginator(listed, per_page, orphans=orphans)
    assert ours.num_pages == theirs.num_pages
    for number in ours.page_range:
        mine, expected = ours.page(number), theirs.page(number)
        assert [r.pk for r in mine] == [r.pk for r in expected]
        assert [r.task_name for r in mine] == [r.task_name for r in expected]
        assert (mine.start_index(), mine.end_index()) == (expected.start_index(), expected.end_index())
    assert list(IdsFirstPaginator(Rollout.objects.none(), 5).get_page(3)) == []
