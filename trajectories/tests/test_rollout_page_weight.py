"""A rollout page's weight does not grow with the rollout beyond a compact outline of its steps."""
from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.urls import reverse

from trajectories import explorer
from trajectories.models import Step

from . import factories


def long_rollout(n_steps: int):
    """A rollout of `n_steps`: every 50th a benchmark call, every 7th an edit, the rest waits."""
    rollout = factories.make_rollout(n_steps=n_steps)
    start = rollout.agent_started_at
    rows = []
    for position in range(n_steps):
        kinds = " benchmark " if position % 50 == 49 else " edit " if position % 7 == 3 else " wait "
        elapsed = 2.0 * position
        rows.append(
            Step(
                rollout=rollout, position=position, step_id=position + 1, source="agent", message=f"step {position}",
                elapsed_sec=elapsed, timestamp=start + timedelta(seconds=elapsed) if start else None, kinds=kinds,
            )
        )
    Step.objects.bulk_create(rows, batch_size=1000)
    return rollout


@pytest.mark.django_db
def test_the_first_page_grows_by_a_few_bytes_per_step(client):
    sizes = {}
    for n in (400, 4000):
        rollout = long_rollout(n)
        response = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]))
        assert response.status_code == 200
        body = response.content.decode()
        # The strip is binned: a thousand marks at most, whatever the length.
        strip = body.index('<div class="timeline-strip">'), body.index('<div class="timeline-axis">')
        assert body.count('class="mark ', *strip) <= explorer.TIMELINE_COLUMNS + 1
        sizes[n] = len(body) - (strip[1] - strip[0])
    per_step = (sizes[4000] - sizes[400]) / 3600
    # Beyond the strip, the outline of every step costs a few bytes a step.
    assert per_step < 8, sizes


def outline(ids, times, kinds):
    return [
        SimpleNamespace(step_id=i, elapsed_sec=t, kind_list=k.split()) for i, t, k in zip(ids, times, kinds)
    ]


def decode(compact):
    """What static/js/explorer.js decodeOutline does."""
    ids = [first + i for first, count in compact["ids"] for i in range(count)]
    rows, t = [], 0
    for n, step_id in enumerate(ids):
        delta = compact["t"][n]
        at = None
        if delta is not None:
            t += delta
            at = t
        bits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(compact["k"][n])
        rows.append([step_id, at, " ".join(k for i, k in enumerate(compact["kinds"]) if bits & (1 << i))])
    return rows


# (ids, elapsed seconds, kinds)
OUTLINE_CASES = [
    ([], [], []),
    ([1, 2, 3], [0.0, 61.4, 122.6], ["", "benchmark", "edit wait"]),
    ([1, 2, 5, 6, 6], [None, 3.0, None, 10.0, 9.0], ["wait", "benchmark edit build inspect wait submit", "", "other", "edit"]),
    ([10, 11], [-5.0, 7200.0], ["submit", "inspect"]),
]


@pytest.mark.parametrize("ids, times, kinds", OUTLINE_CASES)
def test_the_compact_outline_decodes_to_every_step(ids, times, kinds):
    compact = explorer.compact_outline(outline(ids, times, kinds))
    known = [k for k in explorer.STEP_KINDS]
    expected = [
        [i, None if t is None else round(t), " ".join(k for k in known if k in kind.split())]
        for i, t, kind in zip(ids, times, kinds)
    ]
    assert decode(compact) == expected


def test_consecutive_ids_are_one_run():
    compact = explorer.compact_outline(outline(range(1, 20001), [float(i) for i in range(20000)], ["wait"] * 20000))
    assert compact["ids"] == [[1, 20000]]
    assert set(compact["t"][1:]) == {1}


@pytest.mark.django_db
def test_a_long_rollouts_cached_outline_follows_new_steps_and_changes(client):
    import json
    import re

    rollout = long_rollout(2100)
    url = reverse("trajectories:rollout_detail", args=[rollout.pk])

    def outline_of_page():
        body = client.get(url).content.decode()
        data = json.loads(re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', body, re.S).group(1))
        return decode(data["outline"])

    assert len(outline_of_page()) == 2100
    Step.objects.create(rollout=rollout, position=2100, step_id=2101, source="agent", elapsed_sec=5000.0, kinds=" submit ")
    assert outline_of_page()[-1] == [2101, 5000, "submit"]
    Step.objects.filter(rollout=rollout, step_id=2101).update(kinds=" edit ")
    rollout.save()  # every import of a rollout saves it
    assert outline_of_page()[-1] == [2101, 5000, "edit"]
