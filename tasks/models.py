"""Benchmark tasks and the benchmark versions that group them."""
from __future__ import annotations

from django.db import models


class Category(models.TextChoices):
    """AutoLab's four domains. Unknown domains are stored as they are."""

    SYSTEM_OPTIMIZATION = "system_optimization", "System optimization"
    PUZZLE_AND_CHALLENGE = "puzzle_and_challenge", "Puzzle and challenge"
    MODEL_DEVELOPMENT = "model_development", "Model development"
    CUDA = "cuda", "CUDA"


def category_label(value: str) -> str:
    """How a category is shown: AutoLab's by their label, another benchmark's id made readable
    ("optimize_kernel" -> "Optimize kernel"), none as "uncategorised". Pages showed the raw ids."""
    if not value:
        return "uncategorised"
    known = dict(Category.choices).get(value)
    return known or str(value).replace("_", " ").capitalize()


class Direction(models.TextChoices):
    LOWER = "lower", "lower is better"
    HIGHER = "higher", "higher is better"


class ScoringRule(models.TextChoices):
    """How a raw metric becomes a normalised score; see tasks.scoring."""

    AUTO = "", "by category"
    LOG_STRETCH = "log_stretch", "log-stretch"
    ANCHORED_LINEAR = "anchored_linear", "anchored linear"
    REBENCH = "rebench", "RE-Bench normalised"


class Transform(models.TextChoices):
    """RE-Bench's f before normalising: the raw score, or its log."""

    IDENTITY = "identity", "identity"
    LOG = "log", "log"


class ScoringConvention(models.TextChoices):
    """How a benchmark version turns a rollout into its score; see tasks.scoring."""

    VERIFIER_REWARD = "verifier_reward", "the verifier's reward (AutoLab)"
    BEST_OF_SCORE_LOG = "best_of_score_log", "best of the score log (RE-Bench)"


class BenchmarkVersion(models.Model):
    """A published release of a benchmark (AutoLab v1.0, v1.1, ...)."""

    benchmark = models.CharField(max_length=100, default="AutoLab")
    # Unique across benchmarks: it appears in URLs (/tasks/1.1/hash_join/).
    name = models.CharField(max_length=50, unique=True, help_text='e.g. "1.1"')
    # v1.0 published rewards above 1; later versions clip to [0, 1].
    clip_rewards = models.BooleanField(default=True)
    scoring = models.CharField(
        max_length=30, choices=ScoringConvention.choices, default=ScoringConvention.VERIFIER_REWARD,
        db_default=ScoringConvention.VERIFIER_REWARD,
    )
    # Sealed grading: the runner gives every task of the version a verifier
    # of its own, in a fresh sandbox that only sees what the agent left as
    # declared artifacts (its workspace by default), whatever the task says.
    # On for new versions; versions graded before it existed keep grading
    # as they did until staff switch it on (evaluations.sealing).
    sealed_grading = models.BooleanField(
        default=True, db_default=True,
        help_text="grade every rollout in a fresh sandbox of its own, never in the agent's",
    )
    # What an hour of a human expert costs, for the score-against-cost chart (RE-Bench's Figure 11).
    human_hourly_rate_usd = models.FloatField(null=True, blank=True, help_text="USD per hour of a human attempt")
    # Example tasks and synthetic data: shown when asked for, never the
    # leaderboard's default.
    # db_default: rows written by code that predates the field (older migrations' states) get False too.
    demo = models.BooleanField(
        default=False, db_default=False, help_text="example or synthetic content, never the default leaderboard"
    )
    # What a team's submission must meet (submissions.checks): trials per task at least this, and a regraded
    # reward within this of the submitted one (the verifier's declared noise) for the "verified" mark.
    min_trials_per_task = models.PositiveIntegerField(
        default=1, db_default=1, help_text="a submission's trials per task must be at least this"
    )
    regrade_tolerance = models.FloatField(
        default=0.05, db_default=0.05,
        help_text="the verifier's noise: a regraded reward further than this from the submitted one blocks 'verified'",
    )
    description = models.TextField(blank=True)
    released_on = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "-name"]

    def __str__(self) -> str:
        return f"{self.benchmark} {self.label}"

    @property
    def keeps_score_logs(self) -> bool:
        return self.scoring == ScoringConvention.BEST_OF_SCORE_LOG

    @property
    def label(self) -> str:
        """"v1.1" for numbered releases, the bare name otherwise ("examples")."""
        return f"v{self.name}" if self.name[:1].isdigit() else self.name


class Task(models.Model):
    """One Harbor task directory as published in one benchmark version.

    A task belongs to exactly one version: anchors and budgets can change
    between releases, and results must be read against the anchors they ran
    with.
    """

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.PROTECT, related_name="tasks")
    name = models.CharField(max_length=200)
    category = models.CharField(max_length=100, blank=True, db_index=True)
    difficulty = models.CharField(max_length=50, blank=True)
    tags = models.JSONField(default=list, blank=True)
    library = models.CharField(max_length=200, blank=True)
    author = models.CharField(max_length=200, blank=True)

    metric = models.CharField(max_length=200, blank=True)
    direction = models.CharField(max_length=10, choices=Direction.choices, blank=True)
    baseline_score = models.FloatField(null=True, blank=True)
    baseline_method = models.TextField(blank=True)
    reference_score = models.FloatField(null=True, blank=True)
    reference_method = models.TextField(blank=True)
    reference_source = models.TextField(blank=True)
    scoring_rule = models.CharField(max_length=20, choices=ScoringRule.choices, blank=True, default="")
    # RE-Bench's rule: f(y) = y or ln(y - transform_offset); final-only tasks count their last score alone.
    transform = models.CharField(max_length=10, choices=Transform.choices, default=Transform.IDENTITY, db_default="identity")
    transform_offset = models.FloatField(default=0.0, db_default=0.0)
    final_only = models.BooleanField(default=False, db_default=False)
    # Per-task hints for trajectory analysis: a regex that recognises the
    # task's local benchmark command, and one that extracts its metric.
    benchmark_pattern = models.TextField(blank=True)
    metric_pattern = models.TextField(blank=True)

    budget_sec = models.PositiveIntegerField(null=True, blank=True)
    verifier_timeout_sec = models.PositiveIntegerField(null=True, blank=True)
    build_timeout_sec = models.PositiveIntegerField(null=True, blank=True)
    cpus = models.FloatField(null=True, blank=True)
    memory_mb = models.PositiveIntegerField(null=True, blank=True)
    storage_mb = models.PositiveIntegerField(null=True, blank=True)
    gpus = models.PositiveIntegerField(default=0)
    gpu_type = models.CharField(max_length=100, blank=True)
    allow_internet = models.BooleanField(default=False)

    instruction = models.TextField(blank=True)
    # The whole [optimization] table (constraints, search_space, tier, ...)
    # and [metadata], kept verbatim for what the columns above do not hold.
    optimization = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # The site's own content checksum (an import's "changed?"), and Harbor's digest of the folder as imported
    # (hex; a trial's lock.json records "sha256:" + it): what a submitted trial's task must equal.
    checksum = models.CharField(max_length=64, blank=True)
    harbor_digest = models.CharField(max_length=64, blank=True, default="", db_default="")
    source_path = models.CharField(max_length=1000, blank=True)
    has_environment = models.BooleanField(default=False)
    has_tests = models.BooleanField(default=False)
    has_solution = models.BooleanField(default=False)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["category", "name"]
        constraints = [
            models.UniqueConstraint(fields=["version", "name"], name="unique_task_per_version"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def needs_gpu(self) -> bool:
        return self.gpus > 0


class TaskRevision(models.Model):
    """One content checksum a task has had, with what changed."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="revisions")
    checksum = models.CharField(max_length=64)
    changed_fields = models.JSONField(default=dict, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-imported_at", "-id"]

    def __str__(self) -> str:
        return f"{self.task.name} @ {self.checksum[:12]}"
