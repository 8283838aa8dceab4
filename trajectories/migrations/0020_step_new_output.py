"""Substring search reads each step's new output lines (Step.new_output), behind a trigram index on PostgreSQL.

A trigram index of every observation (0016) was about 45% of a bulk
import's time: terminal screens repeat most of the previous screen, and
every trigram of every screen was an index entry (the shared opus trial's
outputs are 477 KB; the lines no earlier step showed, 76 KB). The search
documents already hold an output line at the first step that shows it
(trajectories.search.document); substring search now reads the same lines,
so both stages name the step that produced a line. The rollout page's
in-page find still reads whole outputs. Existing rollouts get their new
output lines here.
"""
from django.db import migrations, models

OUTPUT_INDEX = "trajectories_observation_content_trgm"
NEW_OUTPUT_INDEX = "trajectories_step_new_output_trgm"


def _has_trgm(schema_editor) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        return cursor.fetchone() is not None


def fill_new_output(apps, schema_editor):
    from trajectories.search.query import rebuild_documents

    names = ("Step", "ToolCall", "Observation", "RolloutDocument")
    classes = tuple(apps.get_model("trajectories", name) for name in names)
    rollout_ids = classes[0].objects.values_list("rollout_id", flat=True).distinct()
    rebuild_documents(list(rollout_ids), models=classes)


def swap_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql" or not _has_trgm(schema_editor):
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {OUTPUT_INDEX}")
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {NEW_OUTPUT_INDEX} ON trajectories_step USING gin (UPPER(new_output) gin_trgm_ops)"
    )


def swap_back(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql" or not _has_trgm(schema_editor):
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {NEW_OUTPUT_INDEX}")
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {OUTPUT_INDEX} ON trajectories_observation USING gin (UPPER(content) gin_trgm_ops)"
    )


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0019_step_repeats")]

    operations = [
        migrations.AddField(
            model_name="step",
            name="new_output",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        # The index first: PostgreSQL refuses CREATE INDEX on a table with pending trigger events (the fill's updates).
        migrations.RunPython(swap_indexes, swap_back),
        migrations.RunPython(fill_new_output, migrations.RunPython.noop),
    ]
