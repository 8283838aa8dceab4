"""AgentModel and Harness leave this app for `agents` (state only: the tables keep their names)."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0001_initial'),
        ('evaluations', '0008_published_sets'),
        ('trajectories', '0026_rollout_agents_app'),
    ]

    operations = [
        # The tables stay where they are (evaluations_agentmodel, evaluations_harness):
        # only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='campaign',
                    name='model',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='campaigns', to='agents.agentmodel'),
                ),
                migrations.AlterField(
                    model_name='entry',
                    name='model',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entries', to='agents.agentmodel'),
                ),
                migrations.AlterField(
                    model_name='publishedfigure',
                    name='model',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='published_figures', to='agents.agentmodel'),
                ),
                migrations.AlterField(
                    model_name='publishedresult',
                    name='model',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='published_results', to='agents.agentmodel'),
                ),
                migrations.RemoveConstraint(
                    model_name='harness',
                    name='unique_harness_version',
                ),
                migrations.AlterField(
                    model_name='entry',
                    name='harness',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entries', to='agents.harness'),
                ),
                migrations.AlterField(
                    model_name='publishedfigure',
                    name='harness',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='published_figures', to='agents.harness'),
                ),
                migrations.AlterField(
                    model_name='publishedresult',
                    name='harness',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='published_results', to='agents.harness'),
                ),
                migrations.AlterField(
                    model_name='campaign',
                    name='harness',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='campaigns', to='agents.harness'),
                ),
                migrations.DeleteModel(
                    name='AgentModel',
                ),
                migrations.DeleteModel(
                    name='Harness',
                ),
            ],
            database_operations=[],
        ),
    ]
