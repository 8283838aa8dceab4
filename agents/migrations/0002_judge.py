from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="agentmodel",
            name="is_judge",
            field=models.BooleanField(db_default=False, default=False, help_text="offered as the LLM judge of rollouts"),
        ),
        migrations.AddField(
            model_name="agentmodel",
            name="input_usd_per_mtok",
            field=models.FloatField(blank=True, null=True, help_text="USD per million input tokens"),
        ),
        migrations.AddField(
            model_name="agentmodel",
            name="output_usd_per_mtok",
            field=models.FloatField(blank=True, null=True, help_text="USD per million output tokens"),
        ),
    ]
