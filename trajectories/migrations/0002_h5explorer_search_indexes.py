"""Full-text indexes for trajectory search (PostgreSQL only).

trajectories.search.query filters with `to_tsvector('simple', COALESCE(field, ''))`
on step messages and reasoning, tool-call arguments and observations; these
expression indexes let PostgreSQL answer that without reading every row.
Other databases use the substring search and get nothing here.
"""
from django.db import migrations

INDEXES = [
    ("trajectories_step_message_fts", "trajectories_step", "message"),
    ("trajectories_step_reasoning_fts", "trajectories_step", "reasoning"),
    ("trajectories_toolcall_arguments_fts", "trajectories_toolcall", "(arguments)::text"),
    ("trajectories_observation_content_fts", "trajectories_observation", "content"),
]


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, table, column in INDEXES:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} "
            f"USING gin (to_tsvector('simple'::regconfig, COALESCE({column}, '')))"
        )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _, _ in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0001_initial")]

    operations = [migrations.RunPython(create_indexes, drop_indexes)]
