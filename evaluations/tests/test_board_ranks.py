"""Ranks on whole boards: the synthetic full-size board and entries with nothing counted."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluations.boards import compute, serving
from agents.models import AgentModel
from tasks.models import BenchmarkVersion

from evaluations.tests.board_factories import make_rollout

pytestmark = pytest.mark.django_db


def test_entries_with_distinct_intervals_get_distinct_ranks_on_the_synthetic_board():
    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    data = compute.compute_board(BenchmarkVersion.objects.get(name="synthetic"))
    ranked = [e.overall for e in data.entries if e.overall.rank is not None]
    assert len(ranked) == 17
    separated = 0
    for a in ranked:
        for b in ranked:
            if a.avg_ci[0] > b.avg_ci[1]:
                separated += 1
                assert a.rank < b.rank, (a, b)
    assert separated > 20
    assert len({f.rank for f in ranked}) > 3
    for figures in ranked:
        low, high = figures.rank_range
        assert 1 <= low <= high <= 17


def test_an_entry_with_no_counted_rollout_is_listed_but_unranked(world):
    only_infra = AgentModel.objects.create(name="model-infra")
    for task in world["tasks"].values():
        make_rollout(task, only_infra, world["harness"], None, infra_error=True)
    data = serving.build(world["version"])
    entry = next(e for e in data.entries if e.model == "model-infra")
    assert entry.overall.n_rollouts == 0 and entry.excluded == {"infra": 4}
    assert entry.overall.rank is None
    assert entry.overall.dominance is None
    assert not entry.comparison
    # The others' Dominance is among themselves alone (0.625 for B, as without it).
    b = next(e for e in data.entries if e.model == "model-b")
    assert b.overall.dominance == pytest.approx(0.625)


def test_a_rank_outside_its_resampled_range_says_why(client):
    """Two rules, both documented: the rank (LMArena's: who lies wholly above) and the range of ranks over the
    resamples. A QA pass read "1" beside the hover "rank 2 to 11" as a contradiction; the hover now says both."""
    import html
    import re

    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    data = serving.build(BenchmarkVersion.objects.get(name="synthetic"))
    outside = [e for e in data.entries if e.overall.rank and not e.overall.rank_range[0] <= e.overall.rank <= e.overall.rank_range[1]]
    assert outside  # the case exists on this board
    page = html.unescape(client.get("/?version=synthetic").content.decode())
    for entry in outside:
        figures = entry.overall
        above = figures.rank - 1
        wholly = {0: "no entry's", 1: "1 entry's"}.get(above, f"{above} entries'")
        expected = (f'title="Rank {figures.rank}: {wholly} Avg@k interval lies wholly above this one\'s; '
                    f"rank {figures.rank_range[0]} to {figures.rank_range[1]} by Avg@k in 95% of the bootstrap resamples\"")
        assert expected in page, entry.key
    assert len(re.findall(r'title="Rank \d+: ', page)) == len([e for e in data.entries if e.overall.rank])
