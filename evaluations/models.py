"""Campaigns that evaluate a model and harness (agents), the leaderboard's entries and published results."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from evaluations.sandbox.backends import BACKENDS


# The sandbox backends' names and labels, from their one registry.
Backend = models.TextChoices("Backend", [(name.upper(), (name, spec.label)) for name, spec in BACKENDS.items()])


class Campaign(models.Model):
    """model x harness x benchmark version x tasks x k rollouts on one backend."""

    class Status(models.TextChoices):
        # evaluations.running.lifecycle.campaign_status says which, from the rollouts;
        # before it has any, a campaign is checking (its preflight).
        CHECKING = "checking"
        PENDING = "pending"
        RUNNING = "running"
        FINISHED = "finished"
        FINISHED_WITH_FAILURES = "finished_with_failures", "finished with failures"
        FAILED = "failed"
        CANCELLED = "cancelled"

    model = models.ForeignKey("agents.AgentModel", on_delete=models.PROTECT, related_name="campaigns")
    harness = models.ForeignKey("agents.Harness", on_delete=models.PROTECT, related_name="campaigns")
    version = models.ForeignKey("tasks.BenchmarkVersion", on_delete=models.PROTECT, related_name="campaigns")
    # Empty means every task of the version.
    tasks = models.ManyToManyField("tasks.Task", blank=True, related_name="campaigns")
    k = models.PositiveIntegerField(default=3)
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.DOCKER)
    status = models.CharField(max_length=30, choices=Status.choices, default=Status.PENDING)
    # Why it failed, in a line (a failed preflight's first reason).
    status_reason = models.CharField(max_length=1000, blank=True)
    # evaluations.running.preflight: each queue's report ({"cpu": {"worker", "ok", "checks"}}), and when it was asked for.
    preflight = models.JSONField(default=dict, blank=True)
    preflight_sent_at = models.DateTimeField(null=True, blank=True)
    # Re-evaluation: once it starts, earlier rollouts of the same entry and tasks are superseded.
    supersede = models.BooleanField(default=False)
    notes = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The launch page's one-time token: the same launch sent twice (a double click, a resend) is one campaign.
    launch_token = models.CharField(max_length=32, null=True, blank=True, unique=True, editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Campaign {self.pk}: {self.model} / {self.harness} / {self.version}"

    def get_absolute_url(self) -> str:
        return f"/campaigns/{self.pk}/"


class Entry(models.Model):
    """Leaderboard settings of one (model, harness, benchmark version).

    Rows exist only where staff changed a default: an entry without a row is
    in the comparison set and not an ablation.
    """

    model = models.ForeignKey("agents.AgentModel", on_delete=models.CASCADE, related_name="entries")
    harness = models.ForeignKey("agents.Harness", on_delete=models.CASCADE, related_name="entries")
    version = models.ForeignKey("tasks.BenchmarkVersion", on_delete=models.CASCADE, related_name="entries")
    ablation = models.BooleanField(default=False)
    in_comparison = models.BooleanField(default=True)
    # Human cohorts stay out of the agents' Dominance set unless staff tick this.
    humans_compete = models.BooleanField(default=False, help_text="human cohorts only: compare with the agents")
    note = models.TextField(blank=True)
    # A team's published submission (submissions.Submission, by id: that app sits above this one) and its mark,
    # "verified" (regraded, every check passed) or "self_reported"; "" for our own runs.
    submission_id = models.PositiveIntegerField(null=True, blank=True)
    submission_mark = models.CharField(max_length=20, blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model", "harness", "version"], name="unique_entry"),
        ]
        verbose_name_plural = "entries"

    def __str__(self) -> str:
        return f"{self.model} / {self.harness} / {self.version}"


class PublishedResult(models.Model):
    """A score published without a trajectory (a paper's table, say).

    Kept apart from evaluated rollouts and always shown with its source.
    """

    model = models.ForeignKey("agents.AgentModel", on_delete=models.PROTECT, related_name="published_results")
    harness = models.ForeignKey("agents.Harness", on_delete=models.PROTECT, related_name="published_results")
    version = models.ForeignKey("tasks.BenchmarkVersion", on_delete=models.PROTECT, related_name="published_results")
    task = models.ForeignKey("tasks.Task", on_delete=models.PROTECT, related_name="published_results")
    rollout_index = models.PositiveIntegerField(null=True, blank=True)
    score = models.FloatField()
    source = models.TextField(help_text="citation or URL")
    imported_at = models.DateTimeField(auto_now_add=True)
    # A paper's ablations (its `set` column) are shown apart, badged, and left
    # out of the published entries' Dominance unless staff include them.
    ablation = models.BooleanField(default=False, db_default=False)
    compared = models.BooleanField(
        default=True, db_default=True,
        help_text="in the published entries' Dominance comparison (ablations: only when staff include them)",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["model", "harness", "version", "task", "rollout_index"],
                name="unique_published_rollout",
            ),
            # A per-task score (no rollout index) is unique on its own.
            models.UniqueConstraint(
                fields=["model", "harness", "version", "task"],
                condition=models.Q(rollout_index__isnull=True),
                name="unique_published_task_score",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.task} = {self.score}"


class PublishedFigure(models.Model):
    """One figure of a paper's main table: an entry's Avg@k, Best@k or Dominance, overall or in a category.

    Kept as printed (`decimals` says how many digits were printed), so that
    the per-task scores of the same entry can be checked against it: the
    figure is reproduced when they give a number that rounds to it.
    """

    class Measure(models.TextChoices):
        AVG = "avg", "Avg@k"
        BEST = "best", "Best@k"
        DOMINANCE = "dom", "Dominance"

    model = models.ForeignKey("agents.AgentModel", on_delete=models.PROTECT, related_name="published_figures")
    harness = models.ForeignKey("agents.Harness", on_delete=models.PROTECT, related_name="published_figures")
    version = models.ForeignKey("tasks.BenchmarkVersion", on_delete=models.PROTECT, related_name="published_figures")
    # A task category, or "" for all tasks of the version.
    scope = models.CharField(max_length=100, blank=True)
    measure = models.CharField(max_length=10, choices=Measure.choices)
    value = models.FloatField()
    decimals = models.PositiveSmallIntegerField(default=3)
    source = models.TextField(help_text="citation or URL")
    imported_at = models.DateTimeField(auto_now_add=True)
    # A paper's ablations (its `set` column) are shown apart, badged, and left
    # out of the published entries' Dominance unless staff include them.
    ablation = models.BooleanField(default=False, db_default=False)
    compared = models.BooleanField(
        default=True, db_default=True,
        help_text="in the published entries' Dominance comparison (ablations: only when staff include them)",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model", "harness", "version", "scope", "measure"], name="unique_published_figure"),
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.scope or 'all'} {self.measure} = {self.value}"


class BoardGeneration(models.Model):
    """The boards' cache generation, in the database so that every process reads the same one.

    Each process caches boards under keys that carry the generation
    (evaluations.boards.invalidation); a change any process commits bumps it here, so
    the next request of every web worker recomputes. In a per-process cache
    (the embedded default's LocMemCache) the counter itself once lived in
    the cache: a worker's import never reached the site's board.
    """

    scope = models.CharField(max_length=100, unique=True, default="", blank=True)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"board generation {self.scope or 'all'}: {self.value}"


class StoredBoard(models.Model):
    """The last board built of a version and filters, and the claim of the build under way (boards.serving).

    The board (pickled, compressed) outlives the cache: after a flush, a
    restart or a deploy, a page serves it with its age instead of computing
    one. `build_claimed_at` is the single flight: a request that sets it
    sends the one build (the boards queue); others see it set and say the
    board is being built. Written by the boards worker (and by commands and
    tests that build a board themselves), never by a page's computation.
    """

    # "<version id>:<harness id>:<open_weight>": one row per board a page can ask for.
    scope = models.CharField(max_length=100, unique=True)
    version = models.ForeignKey("tasks.BenchmarkVersion", on_delete=models.CASCADE, related_name="+")
    shape = models.CharField(max_length=32, blank=True, default="")  # board.SHAPE of the pickled board
    key = models.CharField(max_length=300, blank=True, default="")  # the cache key it was stored under
    generation = models.CharField(max_length=100, blank=True, default="")  # Board.generation
    built_at = models.DateTimeField(null=True, blank=True)
    n_rollouts = models.IntegerField(default=0)
    data = models.BinaryField(null=True, blank=True)
    build_claimed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"stored board {self.scope} ({self.generation or 'not built'})"
