"""Resolve every stored rollout's anchors (tasks.anchors) and re-score what used others.

Rollouts imported before anchors were resolved were scored against
task.toml's; where the verifier scored against other anchors, their
benchmark calls' scores and curves are worked out again from the stored
metrics. Uses only the pure modules tasks.anchors, tasks.scoring and
trajectories.analysis.curve.
"""
from django.db import migrations

BATCH = 500


def resolve_all(apps, schema_editor):
    from tasks.anchors import resolve
    from tasks.scoring import DEFAULT_RULE, rule_for, score_with
    from trajectories.analysis.curve import rescored

    Rollout = apps.get_model("trajectories", "Rollout")
    Step = apps.get_model("trajectories", "Step")
    pending = Rollout.objects.filter(anchors={}).select_related("task", "task__version").order_by("pk")
    for rollout in pending.iterator(chunk_size=BATCH):
        task = rollout.task
        try:
            rule = rule_for(task.category, task.scoring_rule)
        except ValueError:
            rule = DEFAULT_RULE
        clip = task.version.clip_rewards
        found = resolve(rule, task.direction, clip, task.baseline_score, task.reference_score, rollout.reward,
                        rollout.verifier_fields, rollout.verifier_outputs)
        rollout.anchors = found.as_dict()
        fields = ["anchors"]
        if found.differ_from_task and found.baseline is not None and found.reference is not None:

            def score(value, found=found, rule=rule, clip=clip):
                return score_with(rule, value, found.baseline, found.reference, clip)

            rollout.curve = rescored(rollout.curve or [], score)
            rollout.best_score = rollout.curve[-1]["best_score"] if rollout.curve else None
            fields += ["curve", "best_score"]
            steps = list(Step.objects.filter(rollout=rollout, metric_value__isnull=False).only("id", "metric_value"))
            for step in steps:
                step.metric_score = score(step.metric_value)
            Step.objects.bulk_update(steps, ["metric_score"], batch_size=BATCH)
        rollout.save(update_fields=fields)


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0012_rollout_anchors"),
        ("tasks", "0001_initial"),
    ]

    operations = [migrations.RunPython(resolve_all, migrations.RunPython.noop)]
