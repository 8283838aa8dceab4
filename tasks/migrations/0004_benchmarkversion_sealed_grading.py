from django.db import migrations, models


class Migration(migrations.Migration):
    """Sealed grading: on for versions made from now on; versions graded before keep grading as they did."""

    dependencies = [
        ("tasks", "0003_rebench_scoring"),
    ]

    operations = [
        migrations.AddField(
            model_name="benchmarkversion",
            name="sealed_grading",
            field=models.BooleanField(default=False),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="benchmarkversion",
            name="sealed_grading",
            field=models.BooleanField(
                db_default=True, default=True,
                help_text="grade every rollout in a fresh sandbox of its own, never in the agent's",
            ),
        ),
    ]
