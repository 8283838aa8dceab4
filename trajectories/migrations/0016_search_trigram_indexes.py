"""Trigram indexes (pg_trgm) for search's substring stage, on PostgreSQL only.

The substring stage filters with Django's icontains, which PostgreSQL runs
as UPPER(text) LIKE UPPER('%query%'): GIN indexes of the same expressions
with gin_trgm_ops answer it for any query holding a trigram of letters or
digits, instead of a scan of every text. Where pg_trgm cannot be created
(no privilege), the indexes are left out and search's time budget alone
bounds the scans. A no-op on SQLite.
"""
import logging

from django.db import migrations, transaction

logger = logging.getLogger(__name__)

INDEXES = [
    ("trajectories_step_message_trgm", "trajectories_step", "UPPER(message)"),
    ("trajectories_step_reasoning_trgm", "trajectories_step", "UPPER(reasoning)"),
    ("trajectories_toolcall_arguments_trgm", "trajectories_toolcall", "UPPER((arguments)::text)"),
    ("trajectories_observation_content_trgm", "trajectories_observation", "UPPER(content)"),
]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=schema_editor.connection.alias):
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except Exception as exc:  # noqa: BLE001  (a database user without the privilege)
        logger.warning("pg_trgm could not be created (%s): substring search runs without trigram indexes", exc)
        return
    for name, table, expression in INDEXES:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin ({expression} gin_trgm_ops)")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _, _ in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0015_rollout_incomplete_trajectory_format_reward_valid")]

    operations = [migrations.RunPython(forwards, backwards)]
