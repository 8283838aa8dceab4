"""Substring search's trigram index moves from every step's texts to each rollout's words (PostgreSQL only).

Four trigram indexes (a step's message, reasoning and new output lines, a
tool call's arguments) were more than half of PostgreSQL's work in a bulk
import: pg_trgm splits and sorts every byte of every text. The substring
stage already read only the rollouts whose words could hold the query
(search.document.infix_filters, a LIKE per word over each rollout's words);
one trigram index of those words, a distinct set a fraction of the texts'
size, makes that filter an index probe, and the steps of the rollouts it
finds are read through the rollout's btree. A no-op on SQLite and where
pg_trgm is missing.
"""
from django.db import migrations

WORDS_INDEX = ("trajectories_rolloutdocument_words_trgm", "trajectories_rolloutdocument USING gin (((words)::text) gin_trgm_ops)")
TEXT_INDEXES = [
    ("trajectories_step_message_trgm", "trajectories_step USING gin (UPPER(message) gin_trgm_ops)"),
    ("trajectories_step_reasoning_trgm", "trajectories_step USING gin (UPPER(reasoning) gin_trgm_ops)"),
    ("trajectories_toolcall_arguments_trgm", "trajectories_toolcall USING gin (UPPER((arguments)::text) gin_trgm_ops)"),
    ("trajectories_step_new_output_trgm", "trajectories_step USING gin (UPPER(new_output) gin_trgm_ops)"),
]


def _has_trgm(schema_editor) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        return cursor.fetchone() is not None


def _swap(schema_editor, old: list[tuple[str, str]], new: list[tuple[str, str]]) -> None:
    if schema_editor.connection.vendor != "postgresql" or not _has_trgm(schema_editor):
        return
    for name, _ in old:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
    for name, definition in new:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {definition}")


def forwards(apps, schema_editor):
    _swap(schema_editor, TEXT_INDEXES, [WORDS_INDEX])


def backwards(apps, schema_editor):
    _swap(schema_editor, [WORDS_INDEX], TEXT_INDEXES)


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0021_new_output_trigram_index")]

    operations = [migrations.RunPython(forwards, backwards)]
