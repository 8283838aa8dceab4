"""Cheaper step rows: three fewer indexes, and lz4 for the large texts.

An import writes hundreds of steps and observations, and every index is
upkeep on each row. `rollout_id` alone is the first column of the ordering
index; `kinds` is matched with LIKE '%...%', which neither of its b-trees
served; subagent steps get a partial index (main steps, almost all of them,
have none to keep).

PostgreSQL compresses large texts with pglz by default; lz4 compresses
terminal output about as well in a fraction of the time. Servers built
without lz4 keep pglz.
"""
import django.db.models.deletion
from django.db import DatabaseError, migrations, models, transaction

LZ4_COLUMNS = [("trajectories_observation", "content"), ("trajectories_step", "message"), ("trajectories_step", "diff")]


def set_compression(schema_editor, columns: list[tuple[str, str]], method: str) -> None:
    """SET COMPRESSION `method` on each (table, column), on PostgreSQL; a server built without lz4 keeps pglz."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, column in columns:
        try:
            with transaction.atomic():
                schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION {method}")
        except DatabaseError:
            if method == "lz4":
                return  # built without lz4
            raise


def use_lz4(apps, schema_editor):
    set_compression(schema_editor, LZ4_COLUMNS, "lz4")


def use_default_compression(apps, schema_editor):
    set_compression(schema_editor, LZ4_COLUMNS, "default")


class Migration(migrations.Migration):

    dependencies = [
        ('trajectories', '0006_search_words'),
    ]

    operations = [
        migrations.AlterField(
            model_name='step',
            name='kinds',
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AlterField(
            model_name='step',
            name='rollout',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='steps', to='trajectories.rollout'),
        ),
        migrations.AlterField(
            model_name='step',
            name='subtrajectory',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='steps', to='trajectories.subtrajectory'),
        ),
        migrations.AddIndex(
            model_name='step',
            index=models.Index(condition=models.Q(('subtrajectory__isnull', False)), fields=['subtrajectory'], name='step_subtrajectory_only'),
        ),
        migrations.RunPython(use_lz4, use_default_compression),
    ]
