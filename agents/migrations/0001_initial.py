"""AgentModel and Harness, moved here from evaluations (their tables keep their names and rows)."""
from django.db import migrations, models


def content_types_to(app_label: str):
    """Move the two models' content types (and so their permissions and admin log) to `app_label`."""

    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        ContentType.objects.filter(model__in=("agentmodel", "harness")).exclude(app_label=app_label).filter(
            app_label__in=("agents", "evaluations")
        ).update(app_label=app_label)

    return move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('evaluations', '0008_published_sets'),
    ]

    operations = [
        # The tables stay where they are (evaluations_agentmodel, evaluations_harness):
        # only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='AgentModel',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200, unique=True)),
                        ('display_name', models.CharField(blank=True, max_length=200)),
                        ('provider', models.CharField(blank=True, max_length=100)),
                        ('litellm_model', models.CharField(blank=True, max_length=300)),
                        ('api_base', models.CharField(blank=True, max_length=500)),
                        ('api_key_env', models.CharField(blank=True, max_length=100)),
                        ('sampling_params', models.JSONField(blank=True, default=dict)),
                        ('open_weight', models.BooleanField(blank=True, default=None, help_text='empty: unknown', null=True)),
                        ('is_scripted', models.BooleanField(default=False)),
                        ('kind', models.CharField(choices=[('agent', 'agent'), ('human', 'human')], db_default='agent', default='agent', max_length=10)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'evaluations_agentmodel',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='Harness',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200)),
                        ('version', models.CharField(blank=True, max_length=50)),
                        ('import_path', models.CharField(blank=True, max_length=300)),
                        ('params', models.JSONField(blank=True, default=dict)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'evaluations_harness',
                        'ordering': ['name', 'version'],
                        'constraints': [models.UniqueConstraint(fields=('name', 'version'), name='unique_harness_version')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to('agents'), content_types_to('evaluations')),
    ]
