"""Public API of the evaluations app: models and harnesses as others need them.

Other apps (trajectory import, the runner) reach AgentModel and Harness rows
through these functions, so that names are normalised in one place.
"""
from __future__ import annotations

from .model_metadata import PROVIDER_PREFIXES, infer
from .models import AgentModel, Harness

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

    Provider (the maker) and open weights come from the name where it is
    certain (agents.model_metadata), else stay unknown; a `provider`
    that is only a routing prefix ("openai" for Claude behind a gateway) is
    not the maker and is ignored. An existing row is never overwritten
    except to fill what is still unknown: staff may have edited it.
    """
    normalised = normalise_model_name(name)[: AgentModel._meta.get_field("name").max_length]
    if not normalised:
        raise ValueError("a model name is required")
    maker, open_weight = infer(name, litellm_model)
    if not maker and provider and provider.lower() not in PROVIDER_PREFIXES:
        maker = provider
    model, created = AgentModel.objects.get_or_create(
        name=normalised,
        defaults={"provider": maker[:100], "litellm_model": (litellm_model or "")[:300], "open_weight": open_weight},
    )
    if not created:
        changed = []
        if maker and not model.provider:
            model.provider = maker[:100]
            changed.append("provider")
        if open_weight is not None and model.open_weight is None:
            model.open_weight = open_weight
            changed.append("open_weight")
        if litellm_model and not model.litellm_model:
            model.litellm_model = litellm_model[:300]
            changed.append("litellm_model")
        if changed:
            model.save(update_fields=changed)
    return model


HUMAN_HARNESS = "human"


def ensure_human_cohort(name: str) -> tuple[AgentModel, Harness]:
    """The entry of a human cohort ("Human experts, 8 h"): a model of the human kind, harness "human".

    Raises ValueError when an agent's model already has that name: a cohort
    must never be merged into an agent's results.
    """
    name = " ".join((name or "").split())[: AgentModel._meta.get_field("name").max_length]
    if not name:
        raise ValueError("a human cohort needs a name")
    model, _ = AgentModel.objects.get_or_create(name=name, defaults={"kind": "human", "provider": "human"})
    if model.kind != "human":
        raise ValueError(f"{name!r} is an agent's model, not a human cohort: choose another cohort name")
    return model, ensure_harness(HUMAN_HARNESS)


def ensure_harness(name: str, version: str = "", *, import_path: str = "") -> Harness:
    """The Harness (name, version), created when missing; one harness per name where a version is not known.

    "terminus-2" (registered without a version, or a paper's) and
    "terminus-2 2.0.0" (what its trials record) were two harnesses on every
    page. So a name without a version is the harness of that name there is
    (the newest, if several), and a version met for the first time fills in
    a harness of that name registered without one.
    """
    name = (name or "").strip()[: Harness._meta.get_field("name").max_length]
    version = (version or "").strip()[: Harness._meta.get_field("version").max_length]
    if not name:
        raise ValueError("a harness name is required")
    same_name = Harness.objects.filter(name=name)
    exact = same_name.filter(version=version).first()
    if exact is not None:
        return exact
    if not version:
        newest = same_name.order_by("-created_at", "-pk").first()
        if newest is not None:
            return newest
    else:
        unversioned = same_name.filter(version="").first()
        if unversioned is not None:
            Harness.objects.filter(pk=unversioned.pk).update(version=version)
            unversioned.version = version
            return unversioned
    harness, _ = Harness.objects.get_or_create(
        name=name, version=version, defaults={"import_path": (import_path or "")[:300]}
    )
    return harness
