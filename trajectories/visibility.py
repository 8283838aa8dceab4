"""Which rollouts a visitor may open: a team's submission held back for review (`Rollout.held_back`) is staff's alone.

Every page, fragment, file and export of one rollout, and the rollouts
list and API, reads its rollouts through `shown`; once staff publish the
submission its rollouts are everyone's, as ours are.
"""
from __future__ import annotations

from django.db.models import QuerySet

from autolab_site.staff import is_staff
from trajectories.models import Rollout


def shown(request, rollouts: QuerySet[Rollout] | None = None) -> QuerySet[Rollout]:
    rollouts = Rollout.objects.all() if rollouts is None else rollouts
    if request is not None and is_staff(request.user):
        return rollouts
    return rollouts.filter(held_back=False)
