"""Chunks of steps' words behind a GIN index: search reads the steps that can match (issue 27).

Search found the rollouts holding a query's words (the GIN index of 0006),
then looked through every step document of those rollouts: a rare
combination of common words read whole corpora. StepChunk holds the union of
the documents of 16 consecutive main steps (trajectories.search.document),
a tsvector with a GIN index on PostgreSQL, so only the chunks holding every
word have their steps read. Existing rollouts get their chunks here, from
their steps' stored documents. The rollouts' GIN index goes: word search
no longer asks it (a database before this migration, which has it, is
searched by rollouts). lz4 for the words, as 0023 gave the others
(servers built without lz4 keep pglz).
"""
from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

import trajectories.search.fields

set_compression = import_module("trajectories.migrations.0007_fewer_step_indexes").set_compression

GIN_INDEX = "trajectories_stepchunk_words"
ROLLOUT_GIN_INDEX = "trajectories_rolloutdocument_words"


def index_and_chunks(apps, schema_editor):
    from trajectories.search.chunks import store_chunks
    from trajectories.search.document import stored_chunks

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX {GIN_INDEX} ON trajectories_stepchunk USING gin (words)")
        # Word search finds chunks, not rollouts, now: the rollouts' own GIN
        # index (0006) would be upkeep in every import for nothing. Their
        # trigram index (0022), which substring search reads, stays.
        schema_editor.execute(f"DROP INDEX IF EXISTS {ROLLOUT_GIN_INDEX}")
    set_compression(schema_editor, [("trajectories_stepchunk", "words"), ("trajectories_stepchunk", "words_text")], "lz4")
    step_model, chunk_model = apps.get_model("trajectories", "Step"), apps.get_model("trajectories", "StepChunk")
    # order_by() first: under Step's ordering DISTINCT would give a row per step.
    rollout_ids = list(step_model.objects.order_by().values_list("rollout_id", flat=True).distinct())
    for rollout_id in rollout_ids:
        steps = list(
            step_model.objects.filter(rollout_id=rollout_id, subtrajectory__isnull=True)
            .order_by("position")
            .values_list("position", "search_document")
        )
        store_chunks(
            rollout_id,
            stored_chunks([document for _, document in steps]),
            whole=True,
            positions=[position for position, _ in steps],
            model=chunk_model,
            new_rollout=True,  # the table is new: nothing to delete
        )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {GIN_INDEX}")
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {ROLLOUT_GIN_INDEX} ON trajectories_rolloutdocument USING gin (words)")


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0029_grades"),
    ]

    operations = [
        migrations.CreateModel(
            name="StepChunk",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("first", models.PositiveIntegerField()),
                ("last", models.PositiveIntegerField()),
                ("words", trajectories.search.fields.SearchDocumentField(blank=True, default="", indexed=True)),
                ("words_text", models.TextField(blank=True, default="", editable=False)),
                (
                    "rollout",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="step_chunks",
                        to="trajectories.rollout",
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("rollout", "first"), name="step_chunk_rollout_first")],
            },
        ),
        migrations.RunPython(index_and_chunks, drop_index),
    ]
