"""A stored full-text document for outputs, cheaper to build (PostgreSQL only).

Migration 0002 indexed `to_tsvector('simple', content)` of every observation.
Terminal outputs repeat themselves (progress lines, a whole screen redrawn):
in the real opus trial 477 KB of output holds 189 KB of distinct lines, and
building the text-search vector was most of an import's time. Here the
output's search document is a generated column built from each distinct line
once (first occurrence order), cut at DOCUMENT_CHARS so that a huge output
can never fail the import with PostgreSQL's "string is too long for
tsvector". Which words an output matches is unchanged (the lexeme sets are
the same); ranking counts a repeated line once. Words beyond the cut are
still found by trajectories.search.query's substring fallback.

A generated column keeps the document right for every writer (importer,
admin, tests) without code in each. Django's model does not declare it:
SQLite has no tsvector, and there the search is the substring match.
"""
from django.db import migrations

DOCUMENT_CHARS = 262_144

# string_to_array is several times faster than regexp_split_to_table here.
FUNCTION = """
CREATE OR REPLACE FUNCTION trajectories_distinct_lines(body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT string_agg(line, E'\\n' ORDER BY first_at)
    FROM (
        SELECT line, min(n) AS first_at
        FROM unnest(string_to_array(body, E'\\n')) WITH ORDINALITY AS lines(line, n)
        GROUP BY line
    ) AS distinct_lines
$$
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION)
    schema_editor.execute("DROP INDEX IF EXISTS trajectories_observation_content_fts")
    schema_editor.execute(
        "ALTER TABLE trajectories_observation ADD COLUMN search_document tsvector GENERATED ALWAYS AS "
        f"(to_tsvector('simple'::regconfig, left(COALESCE(trajectories_distinct_lines(content), ''), {DOCUMENT_CHARS}))) STORED"
    )
    schema_editor.execute(
        "CREATE INDEX trajectories_observation_search_document ON trajectories_observation USING gin (search_document)"
    )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE trajectories_observation DROP COLUMN IF EXISTS search_document")
    schema_editor.execute("DROP FUNCTION IF EXISTS trajectories_distinct_lines(text)")
    schema_editor.execute(
        "CREATE INDEX IF NOT EXISTS trajectories_observation_content_fts ON trajectories_observation "
        "USING gin (to_tsvector('simple'::regconfig, COALESCE(content, '')))"
    )


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0003_h7runner_runner_fields")]

    operations = [migrations.RunPython(forwards, backwards)]
