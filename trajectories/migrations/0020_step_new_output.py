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
writes only the new column (the documents are unchanged), in plain SQL.
"""
from django.db import migrations, models

BATCH = 500


def fill_new_output(apps, schema_editor):
    from trajectories.search.document import OutputLines

    Step = apps.get_model("trajectories", "Step")
    Observation = apps.get_model("trajectories", "Observation")
    # order_by() first: under Step's default ordering DISTINCT is of (rollout, subtrajectory, position),
    # a row per step, and each rollout was filled once per step it has.
    rollout_ids = Step.objects.filter(subtrajectory__isnull=True).order_by().values_list("rollout_id", flat=True).distinct()
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
        _write(schema_editor.connection, Step._meta.db_table, [(pk, "\n".join(texts)) for pk, texts in outputs.items()])


def _write(connection, table: str, rows: list[tuple[int, str]]) -> None:
    """Set new_output of each (step id, text): one UPDATE from a VALUES list per batch on PostgreSQL.

    Django's bulk_update writes a CASE of every id of the batch, which
    PostgreSQL evaluates for every row: the fill ran at a few hundred steps
    a second, hours on a large database.
    """
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            if connection.vendor == "postgresql":
                values = ", ".join(["(%s, %s)"] * len(batch))
                cursor.execute(
                    f"UPDATE {table} AS step SET new_output = fill.text FROM (VALUES {values}) AS fill (id, text)"
                    " WHERE step.id = fill.id",
                    [value for row in batch for value in row],
                )
            else:
                cursor.executemany(f"UPDATE {table} SET new_output = %s WHERE id = %s", [(text, pk) for pk, text in batch])


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
