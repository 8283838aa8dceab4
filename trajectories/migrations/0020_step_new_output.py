"""Substring search reads each step's new output lines (Step.new_output); existing steps get theirs here.

A trigram index of every observation (0016) was about 45% of a bulk
import's time: terminal screens repeat most of the previous screen, and
every trigram of every screen was an index entry (the shared opus trial's
outputs are 477 KB; the lines no earlier step showed, 76 KB). The search
documents already hold an output line at the first step that shows it
(trajectories.search.document); substring search now reads the same lines,
so both stages name the step that produced a line. The rollout page's
in-page find still reads whole outputs. 0021 moves the trigram index.

The fill reads every main step's outputs once, rollout by rollout, and
writes only the new column (the documents are unchanged).
"""
from django.db import migrations, models

BATCH = 500


def fill_new_output(apps, schema_editor):
    from trajectories.search.document import OutputLines

    Step = apps.get_model("trajectories", "Step")
    Observation = apps.get_model("trajectories", "Observation")
    rollout_ids = Step.objects.filter(subtrajectory__isnull=True).values_list("rollout_id", flat=True).distinct()
    for rollout_id in rollout_ids.iterator():
        lines = OutputLines()
        outputs: dict[int, list[str]] = {}
        for step_pk, content in (
            Observation.objects.filter(step__rollout_id=rollout_id, step__subtrajectory__isnull=True)
            .order_by("step__position", "position")
            .values_list("step_id", "content")
            .iterator()
        ):
            fresh = lines.new(content)
            if fresh:
                outputs.setdefault(step_pk, []).append(fresh)
        changed = [Step(pk=pk, new_output="\n".join(texts)) for pk, texts in outputs.items()]
        Step.objects.bulk_update(changed, ["new_output"], batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0019_step_repeats")]

    operations = [
        migrations.AddField(
            model_name="step",
            name="new_output",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.RunPython(fill_new_output, migrations.RunPython.noop),
    ]
