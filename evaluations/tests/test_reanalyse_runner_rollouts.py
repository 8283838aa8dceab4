"""`manage.py reanalyse_rollouts` on our runner's rollout (trajectories/tests/test_reanalyse_rollouts.py has the rest)."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from evaluations.models import Campaign
from trajectories.models import Rollout
from trajectories.tests.test_reanalyse_rollouts import as_stored_before, stored  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db


def test_a_runner_rollout_keeps_its_campaign_and_status(stored):
    """Our runner's rollout (its only folder is the storage's copy) is updated in place, as its own import was."""
    kept = stored["kept"]
    campaign = Campaign.objects.create(model=kept.model, harness=kept.harness, version=kept.task.version, k=1)
    Rollout.objects.filter(pk=kept.pk).update(campaign=campaign, status="failed")
    kept.refresh_from_db()
    fresh = kept.curve
    as_stored_before(kept)
    call_command("reanalyse_rollouts", "--task", "demo_task", "--rollout", str(kept.pk), stdout=io.StringIO())
    kept.refresh_from_db()
    assert (kept.campaign_id, kept.status, kept.curve) == (campaign.pk, "failed", fresh)
