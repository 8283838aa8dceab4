"""Rollouts of one (task, model, harness) that share a number get distinct ones (trajectories.storing.numbering).

Numbers used to be recomputed in run order at every import, and a
campaign queued its rollouts as 0..k-1 whatever its entry already had, so
two repeats could read "#1" until an import renumbered them. From now on a
number is given once; this gives each group's clashing repeats, in their
current order (number, then start, then id), the numbers 0..n-1 once.
"""
from django.db import migrations
from django.db.models import Count


def distinct_numbers(apps, schema_editor):
    Rollout = apps.get_model("trajectories", "Rollout")
    clashing = (
        Rollout.objects.values("task_id", "model_id", "harness_id", "index")
        .annotate(n=Count("id")).filter(n__gt=1).values_list("task_id", "model_id", "harness_id").distinct()
    )
    for task_id, model_id, harness_id in set(clashing):
        group = list(
            Rollout.objects.filter(task_id=task_id, model_id=model_id, harness_id=harness_id)
            .order_by("index", "started_at", "id").only("id", "index")
        )
        changed = []
        for number, rollout in enumerate(group):
            if rollout.index != number:
                rollout.index = number
                changed.append(rollout)
        Rollout.objects.bulk_update(changed, ["index"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0023_lz4_for_search_texts")]

    operations = [migrations.RunPython(distinct_numbers, migrations.RunPython.noop)]
