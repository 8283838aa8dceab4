"""Public API of the evaluations app: models and harnesses as others need them.

Other apps (trajectory import, the runner) reach AgentModel and Harness rows
through these functions, so that names are normalised in one place.
"""
from __future__ import annotations

from .models import AgentModel, Harness

# litellm-style routing prefixes that say how a model was called, not which
# model it is: "openai/claude-opus-4.6" is Claude served behind an
# OpenAI-compatible endpoint. Only the first segment is ever stripped, so a
# name such as "meta-llama/Llama-3-70b" keeps its organisation.
PROVIDER_PREFIXES = frozenset(
    {
        "openai",
        "anthropic",
        "azure",
        "azure_ai",
        "bedrock",
        "vertex_ai",
        "gemini",
        "google",
        "xai",
        "groq",
        "together_ai",
        "togetherai",
        "fireworks_ai",
        "deepseek",
        "mistral",
        "openrouter",
        "hosted_vllm",
        "vllm",
        "ollama",
        "ollama_chat",
        "huggingface",
        "litellm_proxy",
        "cohere",
        "perplexity",
        "deepinfra",
        "cerebras",
        "sambanova",
        "nebius",
        "moonshot",
        "dashscope",
    }
)


def normalise_model_name(name: str) -> str:
    """The leaderboard name of a model: provider routing prefixes removed.

    >>> normalise_model_name("openai/claude-opus-4.6")
    'claude-opus-4.6'
    >>> normalise_model_name("openrouter/anthropic/claude-opus-4.6")
    'claude-opus-4.6'
    """
    name = (name or "").strip()
    while "/" in name:
        head, rest = name.split("/", 1)
        if head.lower() not in PROVIDER_PREFIXES or not rest:
            break
        name = rest
    return name


def ensure_model(name: str, *, provider: str = "", litellm_model: str = "") -> AgentModel:
    """The AgentModel called `name` (normalised), created when missing.

    An existing row is never overwritten except to fill blank provider and
    litellm fields: staff may have edited display names and settings.
    """
    normalised = normalise_model_name(name)[: AgentModel._meta.get_field("name").max_length]
    if not normalised:
        raise ValueError("a model name is required")
    model, created = AgentModel.objects.get_or_create(
        name=normalised,
        defaults={"provider": (provider or "")[:100], "litellm_model": (litellm_model or "")[:300]},
    )
    if not created:
        changed = []
        if provider and not model.provider:
            model.provider = provider[:100]
            changed.append("provider")
        if litellm_model and not model.litellm_model:
            model.litellm_model = litellm_model[:300]
            changed.append("litellm_model")
        if changed:
            model.save(update_fields=changed)
    return model


def ensure_harness(name: str, version: str = "", *, import_path: str = "") -> Harness:
    """The Harness (name, version), created when missing."""
    name = (name or "").strip()[: Harness._meta.get_field("name").max_length]
    version = (version or "").strip()[: Harness._meta.get_field("version").max_length]
    if not name:
        raise ValueError("a harness name is required")
    harness, _ = Harness.objects.get_or_create(
        name=name, version=version, defaults={"import_path": (import_path or "")[:300]}
    )
    return harness
