"""Provider and open weights inferred from a model's name only where certain (agents.model_metadata)."""
from __future__ import annotations

import pytest

from agents import model_metadata
from agents.models import AgentModel
from agents.services import ensure_model


@pytest.mark.parametrize(
    "name, litellm, expected",
    [
        ("claude-opus-4.6", "openai/claude-opus-4.6", ("anthropic", False)),  # behind an OpenAI-compatible gateway
        ("anthropic/claude-sonnet-4-5", "", ("anthropic", False)),
        ("gpt-5", "", ("openai", False)),
        ("gpt-4o-mini", "", ("openai", False)),
        ("o3-mini", "", ("openai", False)),
        ("gpt-oss-120b", "", ("openai", True)),
        ("xai-grok-4-20-reasoning", "", ("xai", False)),  # the real trial's name
        ("grok-code-fast-1", "", ("xai", None)),
        ("gemini-2.5-pro", "", ("google", False)),
        ("gemma-3-27b-it", "", ("google", True)),
        ("kimi-k2-instruct", "", ("moonshot", True)),
        ("moonshotai/Kimi-K2-Thinking", "", ("moonshot", True)),
        ("kimi-latest", "", ("moonshot", None)),
        ("MiniMax-M2", "", ("minimax", True)),
        ("minimax-text-01", "", ("minimax", None)),
        ("qwen3-coder-480b-a35b-instruct", "", ("alibaba", True)),
        ("Qwen2.5-72B-Instruct", "", ("alibaba", True)),
        ("qwen3-max", "", ("alibaba", False)),
        ("qwen3-coder-plus", "", ("alibaba", False)),
        ("qwen-vl", "", ("alibaba", None)),
        ("glm-4.6", "", ("zhipu", True)),
        ("zai-org/GLM-4.5-Air", "", ("zhipu", True)),
        ("glm-4-plus", "", ("zhipu", None)),
        ("deepseek-v3.1", "", ("deepseek", True)),
        ("deepseek-reasoner", "", ("deepseek", True)),
        ("meta-llama/Llama-3.1-70B-Instruct", "", ("meta", True)),
        ("my-finetune", "", ("", None)),
        ("scripted-stub", "", ("", None)),
        ("openai/my-model", "openai/my-model", ("", None)),  # a gateway's prefix says nothing of the maker
    ],
)
def test_infer(name, litellm, expected):
    assert model_metadata.infer(name, litellm) == expected


@pytest.mark.django_db
def test_new_models_get_what_is_certain_and_staff_edits_stay():
    claude = ensure_model("openai/claude-opus-4.6", provider="openai", litellm_model="openai/claude-opus-4.6")
    assert (claude.provider, claude.open_weight) == ("anthropic", False)
    kimi = ensure_model("kimi-k2-instruct")
    assert (kimi.provider, kimi.open_weight) == ("moonshot", True)
    mystery = ensure_model("my-finetune")
    assert (mystery.provider, mystery.open_weight) == ("", None)
    # Staff say what the name cannot: kept on the next import.
    AgentModel.objects.filter(pk=mystery.pk).update(provider="acme", open_weight=True)
    again = ensure_model("my-finetune", provider="openai")
    assert (again.provider, again.open_weight) == ("acme", True)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "existing, asked, expected, count",
    [
        ([], ("terminus-2", ""), "terminus-2", 1),
        ([("terminus-2", "2.0.0")], ("terminus-2", ""), "terminus-2 2.0.0", 1),  # a name alone: the harness there is
        ([("terminus-2", "")], ("terminus-2", "2.0.0"), "terminus-2 2.0.0", 1),  # a version fills in the unversioned
        ([("terminus-2", "2.0.0")], ("terminus-2", "2.1.0"), "terminus-2 2.1.0", 2),  # another version: its own
        ([("terminus-2", "")], ("terminus-2", ""), "terminus-2", 1),
    ],
)
def test_one_harness_per_name_where_the_version_is_not_known(existing, asked, expected, count):
    """"terminus-2" and "terminus-2 2.0.0" were two harnesses everywhere."""
    from agents.models import Harness
    from agents.services import ensure_harness

    for name, version in existing:
        Harness.objects.create(name=name, version=version)
    assert str(ensure_harness(*asked)) == expected
    assert Harness.objects.count() == count
