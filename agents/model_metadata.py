"""Who made a model and whether its weights are open, from its name alone: no ORM.

Imports only see a model's name and how it was called ("openai/claude-opus-4.6"
through an OpenAI-compatible gateway), and the routing prefix says nothing of
the maker. `infer` answers only where the name is certain (one ordered table,
first match wins, specific patterns before general ones) and leaves the rest
unknown ("" and None) for staff to fill in.
"""
from __future__ import annotations

import re

# litellm-style routing prefixes that say how a model was called, not which
# model it is: "openai/claude-opus-4.6" is Claude served behind an
# OpenAI-compatible endpoint.
PROVIDER_PREFIXES = frozenset(
    {
        "openai", "anthropic", "azure", "azure_ai", "bedrock", "vertex_ai", "gemini", "google", "xai", "groq",
        "together_ai", "togetherai", "fireworks_ai", "deepseek", "mistral", "openrouter", "hosted_vllm", "vllm",
        "ollama", "ollama_chat", "huggingface", "litellm_proxy", "cohere", "perplexity", "deepinfra", "cerebras",
        "sambanova", "nebius", "moonshot", "dashscope",
    }
)  # fmt: skip

# (pattern, provider, open weights: True, False or None for "not certain").
# A pattern matches at the start of the name or after a separator.
RULES: tuple[tuple[str, str, bool | None], ...] = (
    (r"claude-", "anthropic", False),
    (r"gpt-oss", "openai", True),
    (r"(gpt-|chatgpt|o[134](-|$))", "openai", False),
    (r"gemma", "google", True),
    (r"gemini", "google", False),
    (r"grok-[34]", "xai", False),
    (r"grok", "xai", None),
    (r"kimi-k2", "moonshot", True),
    (r"kimi", "moonshot", None),
    (r"minimax-m\d", "minimax", True),
    (r"minimax", "minimax", None),
    (r"qwen.*-(max|plus|turbo|flash)\b", "alibaba", False),
    (r"qwen.*\d+b\b", "alibaba", True),
    (r"qwen", "alibaba", None),
    (r"glm-(4\.[5-9]|5)", "zhipu", True),
    (r"glm", "zhipu", None),
    (r"deepseek", "deepseek", True),
    (r"llama", "meta", True),
)


def infer(name: str, litellm_model: str = "") -> tuple[str, bool | None]:
    """(provider, open weights) from the name and litellm string; ("", None) when not certain."""
    for text in (name, litellm_model):
        text = (text or "").strip().lower()
        for pattern, provider, open_weight in RULES:
            if re.search(rf"(^|[/_\-.\s]){pattern}", text):
                return provider, open_weight
    return "", None
