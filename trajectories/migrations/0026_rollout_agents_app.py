"""A rollout's model and harness are the agents app's now (same tables, same constraint)."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0001_initial'),
        ('trajectories', '0025_rollout_excluded'),
    ]

    operations = [
        # The tables stay where they are (evaluations_agentmodel, evaluations_harness):
        # only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='rollout',
                    name='harness',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='rollouts', to='agents.harness'),
                ),
                migrations.AlterField(
                    model_name='rollout',
                    name='model',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='rollouts', to='agents.agentmodel'),
                ),
            ],
            database_operations=[],
        ),
    ]
