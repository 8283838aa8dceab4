"""The texts search finds beyond steps: each rollout's verifier output and trial log (issue 46).

Their words behind a GIN index on PostgreSQL, as the step chunks' (0030).
Existing rollouts' verifier outputs are indexed from their stored fields;
their trial logs when their files are stored again (import_trials
--store-files, or a run's end).
"""

import django.db.models.deletion
import trajectories.search.fields
from django.db import migrations, models

GIN_INDEX = "trajectories_rollouttext_words"


def index_and_verifier_texts(apps, schema_editor):
    from trajectories.search.texts import VERIFIER, cut, verifier_text
    from trajectories.search.document import document
    from autolab_site.masking import mask_text

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE INDEX {GIN_INDEX} ON trajectories_rollouttext USING gin (words)")
    rollout_model, text_model = apps.get_model("trajectories", "Rollout"), apps.get_model("trajectories", "RolloutText")
    rows = []
    fields = ("pk", "verifier_stdout", "verifier_fields", "verifier_outputs")
    for pk, stdout, verifier_fields, outputs in rollout_model.objects.order_by("pk").values_list(*fields).iterator(500):
        text = mask_text(cut(verifier_text(stdout, verifier_fields, outputs)))
        if text:
            rows.append(text_model(rollout_id=pk, kind=VERIFIER, text=text, words=document([text])))
        if len(rows) >= 500:
            text_model.objects.bulk_create(rows)
            rows = []
    text_model.objects.bulk_create(rows)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {GIN_INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ('trajectories', '0036_rollout_environment'),
    ]

    operations = [
        migrations.CreateModel(
            name='RolloutText',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=20)),
                ('text', models.TextField(blank=True, default='')),
                ('words', trajectories.search.fields.SearchDocumentField(blank=True, default='', indexed=True)),
                ('rollout', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='search_texts', to='trajectories.rollout')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('rollout', 'kind'), name='rollout_text_rollout_kind')],
            },
        ),
        migrations.RunPython(index_and_verifier_texts, drop_index),
    ]
