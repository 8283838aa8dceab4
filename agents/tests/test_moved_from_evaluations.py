"""AgentModel and Harness moved from evaluations to agents: the rows, the links to them and the permissions stay."""
import pytest
from django.contrib.contenttypes.models import ContentType

BEFORE = [("evaluations", "0008_published_sets"), ("trajectories", "0025_rollout_excluded"), ("agents", None)]
AFTER = [("evaluations", "0009_agents_app")]


@pytest.mark.django_db(transaction=True)
def test_rows_links_and_content_types_survive_the_move(migrate):
    apps = migrate(BEFORE)
    model = apps.get_model("evaluations", "AgentModel").objects.create(name="claude-opus-4.6", provider="anthropic")
    harness = apps.get_model("evaluations", "Harness").objects.create(name="terminus-2", version="2.0.0")
    version = apps.get_model("tasks", "BenchmarkVersion").objects.create(name="1.1")
    task = apps.get_model("tasks", "Task").objects.create(version=version, name="attn", category="cuda")
    apps.get_model("trajectories", "Rollout").objects.create(task=task, model=model, harness=harness, trial_name="t1")
    apps.get_model("evaluations", "Entry").objects.create(model=model, harness=harness, version=version)
    for name in ("agentmodel", "harness"):
        ContentType.objects.get_or_create(app_label="evaluations", model=name)

    apps = migrate(AFTER)
    rollout = apps.get_model("trajectories", "Rollout").objects.get(trial_name="t1")
    assert (rollout.model.name, str(rollout.harness.version)) == ("claude-opus-4.6", "2.0.0")
    assert apps.get_model("agents", "AgentModel")._meta.db_table == "evaluations_agentmodel"
    assert apps.get_model("evaluations", "Entry").objects.get().model.provider == "anthropic"
    # Permissions and admin log entries hang on the content type: it moved, none was left behind.
    ContentType.objects.clear_cache()
    assert set(ContentType.objects.filter(model__in=("agentmodel", "harness")).values_list("app_label", flat=True)) == {"agents"}
