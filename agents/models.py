"""Who is evaluated: the language models and the agent harnesses that run them.

The bottom of the project's layers beside `tasks`: rollouts (trajectories)
and the leaderboard and runner (evaluations) name a model and a harness, so
both read these rows; nothing here knows about either.
"""
from __future__ import annotations

from django.db import models


class AgentModel(models.Model):
    """A language model as the leaderboard names it.

    `name` is normalised (no provider prefix: "claude-opus-4.6"); the litellm
    string says how a worker calls it ("openai/claude-opus-4.6"). API keys
    never live here: `api_key_env` names the worker's environment variable.
    """

    name = models.CharField(max_length=200, unique=True)
    display_name = models.CharField(max_length=200, blank=True)
    # Who made the model ("anthropic"), not the gateway it is called through; blank is unknown.
    provider = models.CharField(max_length=100, blank=True)
    litellm_model = models.CharField(max_length=300, blank=True)
    api_base = models.CharField(max_length=500, blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    sampling_params = models.JSONField(default=dict, blank=True)
    # Inferred from the name where certain (agents.model_metadata); None is unknown.
    open_weight = models.BooleanField(null=True, blank=True, default=None, help_text="empty: unknown")
    # Scripted stubs and similar are results of a kind, but not a model's.
    is_scripted = models.BooleanField(default=False)
    # Human baselines (RE-Bench's experts) are entries of their own kind: a
    # cohort ("Human experts, 8 h") whose attempts are rollouts.
    kind = models.CharField(
        max_length=10, choices=[("agent", "agent"), ("human", "human")], default="agent", db_default="agent"
    )
    # A model registered as a judge (trajectories' analyze_rollouts) is offered by the staff's "Analyse" button.
    is_judge = models.BooleanField(db_default=False, default=False, help_text="offered as the LLM judge of rollouts")
    # Prices in US dollars per million tokens: a judge's reading records its cost from them (blank: unknown).
    input_usd_per_mtok = models.FloatField(null=True, blank=True, help_text="USD per million input tokens")
    output_usd_per_mtok = models.FloatField(null=True, blank=True, help_text="USD per million output tokens")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        db_table = "evaluations_agentmodel"  # made by the evaluations app, before this one owned it

    def __str__(self) -> str:
        return self.display_name or self.name

    @property
    def label(self) -> str:
        return self.display_name or self.name

    @property
    def is_human(self) -> bool:
        return self.kind == "human"


class Harness(models.Model):
    """An agent harness: a Harbor agent name or a custom `module:Class`."""

    name = models.CharField(max_length=200)
    version = models.CharField(max_length=50, blank=True)
    import_path = models.CharField(max_length=300, blank=True)
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "version"]
        verbose_name_plural = "harnesses"
        db_table = "evaluations_harness"  # made by the evaluations app, before this one owned it
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="unique_harness_version"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}".strip()
