from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('tasks', '0004_benchmarkversion_sealed_grading'),
        ('evaluations', '0011_entry_submission_mark'),
    ]

    operations = [
        migrations.CreateModel(
            name='StoredBoard',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('scope', models.CharField(max_length=100, unique=True)),
                ('shape', models.CharField(blank=True, default='', max_length=32)),
                ('key', models.CharField(blank=True, default='', max_length=300)),
                ('generation', models.CharField(blank=True, default='', max_length=100)),
                ('built_at', models.DateTimeField(blank=True, null=True)),
                ('n_rollouts', models.IntegerField(default=0)),
                ('data', models.BinaryField(blank=True, null=True)),
                ('build_claimed_at', models.DateTimeField(blank=True, null=True)),
                ('version', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tasks.benchmarkversion')),
            ],
        ),
    ]
