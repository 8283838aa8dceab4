"""Full-text indexes of messages, reasoning and commands over a bounded prefix.

PostgreSQL refuses a tsvector over 1 MB ("string is too long for tsvector"),
and the indexes of migration 0002 covered whole fields: one enormous message
or heredoc would have failed the whole trial's import. The same indexes are
rebuilt over the first DOCUMENT_CHARS characters (as the output document of
0004 is); trajectories.search.query uses the same expressions, and finds words
beyond the cut with its substring fallback.
"""
from django.db import migrations

DOCUMENT_CHARS = 262_144

INDEXES = [
    ("trajectories_step_message_fts", "trajectories_step", "message"),
    ("trajectories_step_reasoning_fts", "trajectories_step", "reasoning"),
    ("trajectories_toolcall_arguments_fts", "trajectories_toolcall", "(arguments)::text"),
]


def _create(schema_editor, expression: str) -> None:
    for name, table, column in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
        schema_editor.execute(
            f"CREATE INDEX {name} ON {table} USING gin (to_tsvector('simple'::regconfig, {expression.format(column=column)}))"
        )


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        _create(schema_editor, f"COALESCE(left({{column}}, {DOCUMENT_CHARS}), '')")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        _create(schema_editor, "COALESCE({column}, '')")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0004_h8speed_output_search_document")]

    operations = [migrations.RunPython(forwards, backwards)]
