"""Migration 0024: repeats of one entry on one task that shared a number get distinct ones, once."""
from __future__ import annotations

import pytest

from .migration_rows import old_rollout

pytestmark = pytest.mark.django_db(transaction=True)


def test_clashing_numbers_become_distinct_in_their_order(migrate):
    apps = migrate([("trajectories", "0023_lz4_for_search_texts")])
    Rollout = apps.get_model("trajectories", "Rollout")
    first = old_rollout(apps, trial_name="imported", index=0)
    group = {"task_id": first.task_id, "model_id": first.model_id, "harness_id": first.harness_id}
    for i in (0, 1):  # a campaign queued its rollouts as 0..k-1, whatever the entry had
        Rollout.objects.create(trial_name=f"campaign-{i}", index=i, status="queued", **group)
    apps = migrate([("trajectories", "0024_unique_rollout_numbers")])
    numbers = dict(apps.get_model("trajectories", "Rollout").objects.values_list("trial_name", "index"))
    assert numbers == {"imported": 0, "campaign-0": 1, "campaign-1": 2}
