"""Search documents built by Python (trajectories.search.document).

Migrations 0002, 0004 and 0005 had PostgreSQL build full-text vectors of
every message, reasoning, command and output with `to_tsvector` during the
import's COPY: about half of an import's time, for 240 KB of terminal text
per trial. The importer now writes each step's distinct words itself (an
order of magnitude faster to split than PostgreSQL's parser), output lines
once at the first step that shows them, into `Step.search_document`, and
their union into `RolloutDocument.words`, a tsvector behind one GIN index
on PostgreSQL. The old vectors, indexes and the distinct-lines function go;
existing rollouts get their documents here.
"""
from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

import trajectories.search.fields

OLD_INDEXES = [
    "trajectories_step_message_fts",
    "trajectories_step_reasoning_fts",
    "trajectories_toolcall_arguments_fts",
    "trajectories_observation_search_document",
    "trajectories_observation_content_fts",
]
GIN_INDEX = "trajectories_rolloutdocument_words"


def drop_old_search(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE trajectories_observation DROP COLUMN IF EXISTS search_document")
    for name in OLD_INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
    schema_editor.execute("DROP FUNCTION IF EXISTS trajectories_distinct_lines(text)")


def restore_old_search(apps, schema_editor):
    import_module("trajectories.migrations.0004_h8speed_output_search_document").forwards(apps, schema_editor)
    import_module("trajectories.migrations.0005_h8speed_capped_search_indexes").forwards(apps, schema_editor)


def build_documents(apps, schema_editor):
    from trajectories.search.query import rebuild_documents

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX {GIN_INDEX} ON trajectories_rolloutdocument USING gin (words)")
    names = ("Step", "ToolCall", "Observation", "RolloutDocument")
    classes = tuple(apps.get_model("trajectories", name) for name in names)
    # order_by() first: under Step's ordering DISTINCT would give a row per step.
    rollout_ids = classes[0].objects.order_by().values_list("rollout_id", flat=True).distinct()
    rebuild_documents(list(rollout_ids), models=classes)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {GIN_INDEX}")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0005_h8speed_capped_search_indexes")]

    operations = [
        migrations.RunPython(drop_old_search, restore_old_search),
        migrations.AddField(
            model_name="step",
            name="search_document",
            field=trajectories.search.fields.SearchDocumentField(blank=True, default="", editable=False),
        ),
        migrations.CreateModel(
            name="RolloutDocument",
            fields=[
                (
                    "rollout",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="document",
                        serialize=False,
                        to="trajectories.rollout",
                    ),
                ),
                ("words", trajectories.search.fields.SearchDocumentField(blank=True, default="", indexed=True)),
            ],
        ),
        migrations.RunPython(build_documents, drop_index),
    ]
