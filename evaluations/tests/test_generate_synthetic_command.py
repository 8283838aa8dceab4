"""python manage.py generate_synthetic: synthetic data the leaderboard can read."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from evaluations.boards import invalidation, serving
from tasks.models import BenchmarkVersion
from trajectories.models import Rollout, Step

pytestmark = pytest.mark.django_db


def test_creates_entries_tasks_rollouts_and_steps(capsys):
    cache.clear()
    call_command("generate_synthetic", "--entries", "3", "--tasks", "9", "--rollouts", "2", "--steps", "5")
    assert "3 entries, 54 rollouts" in capsys.readouterr().out
    version = BenchmarkVersion.objects.get(name="synthetic")
    assert version.tasks.count() == 9
    assert Rollout.objects.filter(task__version=version).count() == 54
    assert Step.objects.filter(rollout__task__version=version).count() >= 54 * 4
    # Searchable like imported steps.
    from trajectories.search import query as search

    hits = search.search_steps("inspect and edit", limit=1000)
    # Phrase hits rank 1.0, or 0.75 in a step that opens its rollout (a prompt): search.query.
    assert {h.where for h in hits} == {"message"} and {h.rank for h in hits} <= {1.0, 0.75} and hits[0].rank == 1.0
    assert len(hits) == min(search.CANDIDATES, Step.objects.filter(message__contains="inspect and edit").count())
    data = serving.build(version)
    assert len(data.entries) == 3
    assert len(data.categories) == 4
    for entry in data.entries:
        assert 0 <= entry.overall.avg <= entry.overall.best <= 1
        assert entry.scopes[""].budget_curve[0] == 0.0
        assert entry.scopes[""].budget_curve[-1] == pytest.approx(entry.overall.avg)
    assert any(r.curve for r in Rollout.objects.filter(task__version=version)[:10])
    # Each rollout counts its steps, and its curve's benchmark calls are steps of kind benchmark.
    for rollout in Rollout.objects.filter(task__version=version):
        steps = {s.step_id: s for s in rollout.steps.all()}
        assert rollout.n_steps == len(steps) > 0
        for point in rollout.curve:
            if point["step_id"] in steps:
                assert steps[point["step_id"]].kind_list == ["benchmark"]
        assert {kind for s in steps.values() for kind in s.kind_list} <= {"benchmark", "edit", "inspect"}


def test_refuses_to_overwrite_unless_asked():
    call_command("generate_synthetic", "--entries", "1", "--tasks", "2", "--rollouts", "1", "--steps", "0")
    with pytest.raises(CommandError, match="--replace"):
        call_command("generate_synthetic", "--entries", "1", "--tasks", "2", "--rollouts", "1", "--steps", "0")
    generation = invalidation.generation()
    call_command("generate_synthetic", "--entries", "2", "--tasks", "2", "--rollouts", "1", "--steps", "0", "--replace")
    assert Rollout.objects.count() == 4
    assert invalidation.generation() > generation  # bulk writes still invalidate the cache
