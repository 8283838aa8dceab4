"""Migration 0005 mends what imports stored before: routing prefixes as providers, every model closed."""
import pytest

BEFORE = [("evaluations", "0004_published_figure")]
AFTER = [("evaluations", "0005_model_metadata")]


@pytest.mark.django_db(transaction=True)
def test_providers_and_weights_are_inferred_where_certain(migrate):
    apps = migrate(BEFORE)
    AgentModel = apps.get_model("evaluations", "AgentModel")
    for name, provider, open_weight in [
        ("claude-opus-4.6", "openai", False),
        ("kimi-k2-instruct", "openai", False),
        ("my-model", "openai", False),
        ("house-model", "acme", True),  # set by staff
        ("scripted-stub", "", False),
    ]:
        AgentModel.objects.create(name=name, provider=provider, open_weight=open_weight, is_scripted=name == "scripted-stub")
    apps = migrate(AFTER)
    found = {m.name: (m.provider, m.open_weight) for m in apps.get_model("evaluations", "AgentModel").objects.all()}
    assert found == {
        "claude-opus-4.6": ("anthropic", False),
        "kimi-k2-instruct": ("moonshot", True),
        "my-model": ("", None),
        "house-model": ("acme", True),
        "scripted-stub": ("", None),
    }
