"""Reviews of rollouts against a rubric: Harbor's analysis.json and our own judge's."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('trajectories', '0026_rollout_agents_app'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Review',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('source', models.CharField(choices=[('harbor', 'Harbor analysis.json'), ('judge', 'our judge')], max_length=10)),
                ('judge', models.CharField(blank=True, max_length=200)),
                ('rubric', models.CharField(blank=True, help_text="the rubric's name", max_length=200)),
                ('rubric_digest', models.CharField(blank=True, max_length=64)),
                ('state', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='done', max_length=10)),
                ('error', models.TextField(blank=True)),
                ('summary', models.TextField(blank=True)),
                ('tokens_in', models.PositiveIntegerField(blank=True, null=True)),
                ('tokens_out', models.PositiveIntegerField(blank=True, null=True)),
                ('cost_usd', models.FloatField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ('rollout', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reviews', to='trajectories.rollout')),
            ],
            options={
                'ordering': ['-updated_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='ReviewCheck',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(db_index=True, max_length=100)),
                ('outcome', models.CharField(choices=[('pass', 'Pass'), ('fail', 'Fail'), ('not_applicable', 'not applicable')], max_length=20)),
                ('explanation', models.TextField(blank=True)),
                ('steps', models.JSONField(blank=True, default=list)),
                ('review', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='checks', to='trajectories.review')),
            ],
            options={
                'ordering': ['review', 'id'],
            },
        ),
        migrations.AddConstraint(
            model_name='review',
            constraint=models.UniqueConstraint(fields=('rollout', 'source', 'judge', 'rubric_digest'), name='one_review_per_rubric'),
        ),
        migrations.AddIndex(
            model_name='reviewcheck',
            index=models.Index(fields=['name', 'outcome'], name='trajectorie_name_b767e8_idx'),
        ),
    ]
