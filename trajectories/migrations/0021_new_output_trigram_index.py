"""The trigram index of outputs moves from every observation to each step's new output lines (PostgreSQL only).

See 0020: substring search reads Step.new_output. Built after the fill,
in a transaction of its own (PostgreSQL refuses CREATE INDEX on a table
with pending trigger events, which the fill's updates leave). A no-op on
SQLite and where pg_trgm is missing.
"""
from django.db import migrations

OUTPUT_INDEX = "trajectories_observation_content_trgm"
NEW_OUTPUT_INDEX = "trajectories_step_new_output_trgm"


def _has_trgm(schema_editor) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        return cursor.fetchone() is not None


INDEXES = {
    OUTPUT_INDEX: "trajectories_observation USING gin (UPPER(content) gin_trgm_ops)",
    NEW_OUTPUT_INDEX: "trajectories_step USING gin (UPPER(new_output) gin_trgm_ops)",
}


def _swap(schema_editor, old: str, new: str) -> None:
    if schema_editor.connection.vendor != "postgresql" or not _has_trgm(schema_editor):
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {old}")
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {new} ON {INDEXES[new]}")


def forwards(apps, schema_editor):
    _swap(schema_editor, OUTPUT_INDEX, NEW_OUTPUT_INDEX)


def backwards(apps, schema_editor):
    _swap(schema_editor, NEW_OUTPUT_INDEX, OUTPUT_INDEX)


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0020_step_new_output")]

    operations = [migrations.RunPython(forwards, backwards)]
