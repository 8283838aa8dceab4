"""Rollouts (Harbor trials) and their trajectory steps.

A rollout is one trial of (task, model, harness). Its steps are the ATIF
steps of `agent/trajectory.json`, one row each, with the analysis results
(step kinds, parsed benchmark metric, edit diffs) stored beside them so pages
never re-analyse.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from trajectories import provenance, run_environment, statuses, verdict as verdicts
from trajectories.search.fields import SearchDocumentField


class RolloutStatus(models.TextChoices):
    """The values of trajectories.statuses (which counts where is said there)."""

    QUEUED = statuses.QUEUED
    PREPARING = statuses.PREPARING
    RUNNING = statuses.RUNNING
    VERIFYING = statuses.VERIFYING
    FINISHED = statuses.FINISHED
    FAILED = statuses.FAILED
    CANCELLED = statuses.CANCELLED
    INCOMPLETE = statuses.INCOMPLETE




class Rollout(models.Model):
    task = models.ForeignKey("tasks.Task", on_delete=models.PROTECT, related_name="rollouts")
    model = models.ForeignKey("agents.AgentModel", on_delete=models.PROTECT, related_name="rollouts")
    harness = models.ForeignKey("agents.Harness", on_delete=models.PROTECT, related_name="rollouts")
    campaign = models.ForeignKey(
        "evaluations.Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="rollouts"
    )
    # Harbor's trial name ("musubi-tuner__flux2_klein_lora__2TyoFTQ") is the
    # identity used for idempotent import.
    trial_name = models.CharField(max_length=300, unique=True)
    trial_id = models.CharField(max_length=100, blank=True)
    # Harbor's job (config.json `job_id`): the trials run together, shown as one on /jobs/<job_id>/.
    job_id = models.CharField(max_length=100, blank=True, db_index=True)
    index = models.PositiveIntegerField(default=0, help_text="position among repeats of task x model x harness")
    status = models.CharField(max_length=20, choices=RolloutStatus.choices, default=RolloutStatus.FINISHED, db_index=True)
    # Re-evaluation keeps old rollouts viewable but out of the figures.
    superseded = models.BooleanField(default=False)
    # Infrastructure errors are excluded from figures and flagged.
    infra_error = models.BooleanField(default=False)
    # Why the run's source leaves it out of the figures ("" when it counts): an
    # Inspect sample that errored is not scored, nor counted as 0 (Inspect's rule).
    excluded = models.CharField(max_length=2000, blank=True, default="", db_default="")

    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    environment_setup_started_at = models.DateTimeField(null=True, blank=True)
    environment_setup_finished_at = models.DateTimeField(null=True, blank=True)
    agent_setup_started_at = models.DateTimeField(null=True, blank=True)
    agent_setup_finished_at = models.DateTimeField(null=True, blank=True)
    agent_started_at = models.DateTimeField(null=True, blank=True)
    agent_finished_at = models.DateTimeField(null=True, blank=True)
    verifier_started_at = models.DateTimeField(null=True, blank=True)
    verifier_finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Our runner: the Celery task running this rollout, and a staff cancel
    # request that the running worker honours within seconds.
    celery_task_id = models.CharField(max_length=100, blank=True)
    cancel_requested = models.BooleanField(default=False)
    # When its message was sent to be run (plus any back-off): a queued
    # rollout whose message the broker lost is sent again after this.
    due_at = models.DateTimeField(null=True, blank=True)
    # Why it is where it is, in a line people read (the runner's last word:
    # "configuration error: OPENAI_API_KEY is not set on worker gpu-1").
    status_reason = models.CharField(max_length=1000, blank=True)
    # The worker running it ("host:pid"), so each host cleans only its own leftovers.
    worker = models.CharField(max_length=200, blank=True)
    # Its trial folder's files in the shared artifact storage
    # (trajectories.storing.artifacts.ArtifactFile as dicts: path, size, cut).
    artifacts = models.JSONField(default=list, blank=True)

    # Counted usage: what every cost and token figure reads. Filled only from a source whose numbers count
    # (trajectories.provenance: measured on the host, or as an imported trial reports it).
    n_input_tokens = models.BigIntegerField(null=True, blank=True)
    n_cache_tokens = models.BigIntegerField(null=True, blank=True)
    n_output_tokens = models.BigIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    # Where the usage and the steps come from (trajectories.provenance): "harness" (the host), "agent" (the
    # agent's sandbox), "none" (no model called; usage only), "trial" (an imported folder, as it says).
    usage_source = models.CharField(
        max_length=10, default=provenance.TRIAL, choices=[(s, s) for s in provenance.USAGE_SOURCES],
    )
    trajectory_source = models.CharField(
        max_length=10, default=provenance.TRIAL, choices=[(s, s) for s in provenance.TRAJECTORY_SOURCES],
    )
    # Usage known only from the agent's side (usage_source "agent"): shown as reported, never counted.
    reported_usage = models.JSONField(default=dict, blank=True)
    n_episodes = models.PositiveIntegerField(null=True, blank=True)
    api_request_times_msec = models.JSONField(default=list, blank=True)

    exception_type = models.CharField(max_length=200, blank=True)
    exception_message = models.TextField(blank=True)
    exception_traceback = models.TextField(blank=True)

    reward = models.FloatField(null=True, blank=True, db_index=True)
    # Harbor 0.26's result.json says whether the reward counts; None when it does not say (0.25).
    reward_valid = models.BooleanField(null=True, blank=True)
    # Where Harbor 0.26 ran the verifier (result.json): "separate" (an environment of its own, given only
    # the agent's artifacts: sealed grading), "shared" (the agent's sandbox), or "" when it does not say.
    verifier_mode = models.CharField(max_length=20, blank=True, default="", db_default="")
    # The image the trial ran in and the base images the worker substituted (trajectories.run_environment).
    environment = models.JSONField(default=dict, blank=True)
    # What the trial ran with, as Harbor recorded it (lock.json, config.json: trajectories.reading.harbor_lock):
    # its task's digest (hex), Harbor's version, and the rest (agent, verifier, multipliers, overrides).
    task_digest = models.CharField(max_length=64, blank=True, default="", db_default="")
    harbor_version = models.CharField(max_length=50, blank=True, default="", db_default="")
    run_settings = models.JSONField(default=dict, blank=True)
    # SHA-256 of agent/trajectory.json: a trajectory sent twice is found by it.
    trajectory_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="", db_index=True)
    # Imported from a team's submission that staff have not published: on no board until they do
    # (submissions.services, through trajectories.services.hold_back / release).
    held_back = models.BooleanField(default=False, db_default=False, db_index=True)
    # Every field of reward.json, numeric or not ("reason": "no_lora_file").
    verifier_fields = models.JSONField(default=dict, blank=True)
    verifier_stdout = models.TextField(blank=True)
    # The verifier's other JSON files by name: AutoLab's measured scores
    # ("baseline_score.json", "optimized_score.json") with their components.
    verifier_outputs = models.JSONField(default=dict, blank=True)
    # The anchors its reward was computed with (tasks.anchors.Anchors.as_dict()):
    # its benchmark calls' scores and its curve use them. {} until resolved.
    anchors = models.JSONField(default=dict, blank=True)
    # RE-Bench's score log: every intermediate score of the run, normalised,
    # with its elapsed time ([{"t": sec, "score": s, "raw": y}]); the final
    # score is the reward. Versions scored by the best of the log read it.
    score_log = models.JSONField(default=list, blank=True)

    source_path = models.CharField(max_length=1000, blank=True)
    checksum = models.CharField(max_length=64, blank=True)
    schema_version = models.CharField(max_length=30, blank=True)
    # "atif", "converted from <native format>" or "none" (trial_folder.TrialFolder.trajectory_format);
    # "" for rollouts imported before it was recorded.
    trajectory_format = models.CharField(max_length=100, blank=True)
    # The main trajectory's root session_id and final_metrics (total_steps, extra, ...), as written.
    session_id = models.CharField(max_length=200, blank=True)
    final_metrics = models.JSONField(default=dict, blank=True)
    validation_warnings = models.JSONField(default=list, blank=True)
    agent_extra = models.JSONField(default=dict, blank=True)
    config = models.JSONField(default=dict, blank=True)

    # Analysis summary (trajectories.analysis.rollout), stored at import.
    n_steps = models.PositiveIntegerField(default=0)
    n_benchmark_calls = models.PositiveIntegerField(default=0)
    n_edits = models.PositiveIntegerField(default=0)
    first_benchmark_sec = models.FloatField(null=True, blank=True)
    last_improvement_sec = models.FloatField(null=True, blank=True)
    budget_used_fraction = models.FloatField(null=True, blank=True)
    best_metric = models.FloatField(null=True, blank=True)
    best_score = models.FloatField(null=True, blank=True)
    # Best-so-far curve: [{"step_id": id, "t": elapsed_sec, "metric": v, "score": s, "best_metric": .., "best_score": ..}]
    curve = models.JSONField(default=list, blank=True)
    # Each changed file from before its first change to the end (analysis.FileChange as
    # dicts, by path); None for rollouts imported before it was worked out.
    files_changed = models.JSONField(null=True, blank=True, default=None)

    # Failure analysis (automatic); staff labels live in FailureLabel.
    outcome = models.CharField(max_length=30, blank=True, db_index=True)
    failure_cause = models.CharField(max_length=50, blank=True, db_index=True)
    failure_secondary = models.JSONField(default=list, blank=True)
    failure_evidence = models.JSONField(default=list, blank=True)
    behaviour_flags = models.JSONField(default=list, blank=True)

    imported_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task__name", "model__name", "index"]
        indexes = [
            # A group's repeats in their order: its last number (numbering.group_last) and a page's window of
            # siblings are read from the index, not the whole group.
            models.Index(fields=["task", "model", "harness", "index"], name="rollout_group_index"),
            # The rollouts list's orders on a rollout's own columns read a page from these (trajectories.listing;
            # reward has its own index).
            models.Index(fields=["started_at", "id"], name="rollout_started_order"),
            models.Index(fields=["n_steps", "id"], name="rollout_steps_order"),
            models.Index(fields=["n_benchmark_calls", "id"], name="rollout_benchmarks_order"),
        ]

    def __str__(self) -> str:
        return self.trial_name

    @property
    def number(self) -> int:
        """The 1-based repeat number people read ("rollout 1 of 3")."""
        return self.index + 1

    @property
    def is_active(self) -> bool:
        return self.status in statuses.ACTIVE

    @property
    def is_regradable(self) -> bool:
        """Its page offers a regrade (statuses.REGRADABLE): ended, and not cancelled."""
        return self.status in statuses.REGRADABLE

    @property
    def has_no_trajectory(self) -> bool:
        """Imported with its reward and result but without steps (no ATIF file, nothing to convert)."""
        return self.trajectory_format == "none"

    @property
    def usage_label(self) -> str:
        """Where its tokens and cost come from, in words (trajectories.provenance)."""
        return provenance.USAGE_LABELS.get(self.usage_source, "")

    @property
    def environment_substitutions(self) -> str:
        """The base images the worker built from instead of the task's, in words ("" when none: trajectories.run_environment)."""
        return run_environment.summary(self.environment)

    @property
    def trajectory_label(self) -> str:
        """Where its steps come from, in words (trajectories.provenance)."""
        return provenance.TRAJECTORY_LABELS.get(self.trajectory_source, "")

    @property
    def steps_are_the_agents_account(self) -> bool:
        """Its trajectory was written inside the agent's sandbox: shown, counted nowhere."""
        return self.trajectory_source == provenance.AGENT

    @property
    def agent_duration_sec(self) -> float | None:
        if self.agent_started_at and self.agent_finished_at:
            return (self.agent_finished_at - self.agent_started_at).total_seconds()
        return None

    @property
    def verdict(self) -> verdicts.Verdict:
        """Whether it enters the figures, why (`reason`), and its counted score, as trajectories.verdict decides
        from its stored fields and its version's rules (reads its task and version: select them with it)."""
        version = self.task.version
        return verdicts.verdict(
            self.status, superseded=self.superseded, infra_error=self.infra_error, excluded=self.excluded,
            reward=self.reward, score_log=[score for _, score in verdicts.score_points(self.score_log)],
            final_only=self.task.final_only, convention=version.scoring, clip=version.clip_rewards,
        )


class RolloutDocument(models.Model):
    """The words of all a rollout's main steps: what its search index holds.

    A table of its own, not a Rollout column, so that the many queries
    reading rollouts never carry it. See trajectories.search.document.
    """

    rollout = models.OneToOneField(Rollout, on_delete=models.CASCADE, primary_key=True, related_name="document")
    words = SearchDocumentField(indexed=True, blank=True, default="")

    def __str__(self) -> str:
        return f"words of {self.rollout_id}"


class StepChunk(models.Model):
    """The words of CHUNK_STEPS consecutive main steps of a rollout (positions first to last).

    What search reads between a rollout's document and its steps' (see
    trajectories.search.document): the chunks holding every word of a query,
    by a GIN index of their words on PostgreSQL (migration 0030), or every
    fragment of a substring, name the steps worth reading. Written with the steps' documents, by the same builder.
    """

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="step_chunks", db_index=False)
    first = models.PositiveIntegerField()
    last = models.PositiveIntegerField()
    words = SearchDocumentField(indexed=True, blank=True, default="")
    # The same words as text, which substring search LIKEs: casting a
    # tsvector back to text for each chunk read cost more than the step
    # documents it spares, and a GIN index of text cast to tsvector is one the
    # planner would rather skip for a scan that casts every row.
    words_text = models.TextField(blank=True, default="", editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rollout", "first"], name="step_chunk_rollout_first")]

    def __str__(self) -> str:
        return f"words of {self.rollout_id} steps {self.first}-{self.last}"


class RolloutText(models.Model):
    """A text of a rollout beyond its steps that search finds: its verifier's output or its trial's log.

    A run's failure is often said there and in no step ("ERROR: No LoRA
    file found"). One row per rollout and kind, the text masked and cut to
    its head and tail (trajectories.search.texts), its words as a step's
    are (trajectories.search.document), behind a GIN index on PostgreSQL.
    """

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="search_texts", db_index=False)
    kind = models.CharField(max_length=20)  # trajectories.search.texts.KINDS
    text = models.TextField(blank=True, default="")
    words = SearchDocumentField(indexed=True, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rollout", "kind"], name="rollout_text_rollout_kind")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.rollout_id}"


class SubTrajectory(models.Model):
    """A subagent's trajectory (terminus-2 summarisation, embedded subagents)."""

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="subtrajectories")
    parent_step = models.ForeignKey(
        "Step", null=True, blank=True, on_delete=models.SET_NULL, related_name="spawned_subtrajectories"
    )
    name = models.CharField(max_length=300, help_text="file name or subagent id")
    session_id = models.CharField(max_length=200, blank=True)
    agent_name = models.CharField(max_length=200, blank=True)
    raw = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "subtrajectory"
        verbose_name_plural = "subtrajectories"

    def __str__(self) -> str:
        return self.name


class Step(models.Model):
    # Every index here is upkeep in every import (hundreds of rows a trial):
    # the rollout is the first column of the ordering index, subagent steps
    # have a partial index of their own, and kinds are matched with LIKE
    # '%...%', which no b-tree serves.
    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="steps", db_index=False)
    # Null for the main trajectory's steps.
    subtrajectory = models.ForeignKey(
        SubTrajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="steps", db_index=False
    )
    position = models.PositiveIntegerField(help_text="0-based order within its trajectory")
    step_id = models.IntegerField()
    timestamp = models.DateTimeField(null=True, blank=True)
    elapsed_sec = models.FloatField(null=True, blank=True, help_text="seconds since the agent started")
    source = models.CharField(max_length=20)
    message = models.TextField(blank=True)
    reasoning = models.TextField(blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.IntegerField(null=True, blank=True)
    completion_tokens = models.IntegerField(null=True, blank=True)
    cached_tokens = models.IntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)

    # Space-delimited step kinds (" benchmark edit "), so that a plain
    # substring filter works on SQLite and PostgreSQL alike.
    kinds = models.CharField(max_length=200, blank=True)
    metric_value = models.FloatField(null=True, blank=True)
    metric_unit = models.CharField(max_length=50, blank=True)
    metric_score = models.FloatField(null=True, blank=True)
    metric_status = models.CharField(max_length=20, blank=True, help_text="parsed | unparseable | ''")
    diff = models.TextField(blank=True, help_text="unified diffs of the files this step edited")
    repeats = models.BooleanField(
        default=False, help_text="it only looks, with the same calls as the step before: a check repeated (folds on the page)"
    )
    # The words search finds this step by: its message, reasoning, commands
    # and the output lines it first showed (trajectories.search.document).
    # The importer writes it and the rollout's; trajectories.search.query.
    # rebuild_documents after any other change to those fields.
    search_document = SearchDocumentField(blank=True, default="", editable=False)
    # The lines of its outputs that no earlier step showed, in order: what
    # substring search reads of outputs (a terminal redraws its screen every
    # step; a trigram index of every screen was near half an import's time).
    new_output = models.TextField(blank=True, default="", editable=False)

    class Meta:
        ordering = ["rollout", "subtrajectory", "position"]
        indexes = [
            models.Index(fields=["rollout", "subtrajectory", "position"]),
            models.Index(
                fields=["subtrajectory"], condition=models.Q(subtrajectory__isnull=False), name="step_subtrajectory_only"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.rollout_id}#{self.step_id}"

    @property
    def kind_list(self) -> list[str]:
        return self.kinds.split()


class ToolCall(models.Model):
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="tool_calls")
    position = models.PositiveIntegerField()
    call_id = models.CharField(max_length=200, blank=True)
    function_name = models.CharField(max_length=200)
    arguments = models.JSONField(default=dict, blank=True)
    kinds = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["step", "position"]


class Observation(models.Model):
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="observations")
    tool_call = models.ForeignKey(ToolCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="observations")
    position = models.PositiveIntegerField()
    source_call_id = models.CharField(max_length=200, blank=True)
    # At most settings.AUTOLAB_OBSERVATION_MAX_CHARS of the output: all of it,
    # or its head and its tail (split at `cut_at`) with the whole text in
    # ObservationText (trajectories.storing.observation_text).
    content = models.TextField(blank=True)
    cut_at = models.IntegerField(null=True, blank=True)
    full_length = models.BigIntegerField(null=True, blank=True, help_text="characters of the whole output, when cut")
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["step", "position"]

    @property
    def length(self) -> int:
        """Characters of the whole output."""
        return self.full_length if self.full_length is not None else len(self.content)

    @property
    def head(self) -> str:
        return self.content if self.cut_at is None else self.content[: self.cut_at]

    @property
    def tail(self) -> str:
        return "" if self.cut_at is None else self.content[self.cut_at :]

    @property
    def cut_length(self) -> int:
        """Characters between the head and the tail that the row does not hold."""
        return 0 if self.full_length is None else self.full_length - len(self.content)


class ObservationText(models.Model):
    """The whole text of an observation too long to keep in its row, zlib compressed.

    In the database, so that every web server can stream it; read only on
    a reader's explicit request.
    """

    observation = models.OneToOneField(Observation, on_delete=models.CASCADE, primary_key=True, related_name="full_text")
    data = models.BinaryField()


class FailureLabel(models.Model):
    """A staff judgement on a rollout; it overrides the automatic cause."""

    rollout = models.OneToOneField(Rollout, on_delete=models.CASCADE, related_name="label")
    cause = models.CharField(max_length=50, blank=True)
    notes = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)


class LabelChange(models.Model):
    """Audit trail of FailureLabel edits: who, when, old and new values."""

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="label_changes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    changed_at = models.DateTimeField(auto_now_add=True)
    old = models.JSONField(default=dict)
    new = models.JSONField(default=dict)

    class Meta:
        ordering = ["-changed_at", "-id"]


class RolloutEvent(models.Model):
    """A state change of a rollout run by our runner (queued -> running ...)."""

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="events")
    status = models.CharField(max_length=20, choices=RolloutStatus.choices)
    at = models.DateTimeField(auto_now_add=True)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]


class UploadJob(models.Model):
    """A staff upload of a trial archive, imported in the background by a Celery worker.

    The web request only stores the archive and sends the task
    (trajectories.storing.uploads), so no upload can hold a web worker: the page
    of the job follows its progress and shows its report.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        IMPORTING = "importing"
        DONE = "done"
        FAILED = "failed"

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    file_name = models.CharField(max_length=255)
    size = models.BigIntegerField(default=0)
    version = models.CharField(max_length=50, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=200, blank=True)  # what the worker is doing, in words
    sent = models.BooleanField(default=False)  # its task message reached the broker
    worker = models.CharField(max_length=300, blank=True)  # "pid@host" of the process importing it
    total = models.IntegerField(default=0)
    done = models.IntegerField(default=0)
    report = models.JSONField(null=True, blank=True)  # ImportReport.as_dict() once ended
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"upload {self.pk}: {self.file_name} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.IMPORTING)


class Review(models.Model):
    """A reading of a rollout against a rubric: Harbor's `analysis.json`, or our own judge's (`analyze_rollouts`).

    Beside the failure rules, never instead: a rule says *what* happened (no
    artifact, premature stop), a review says *why*, in a paragraph and one
    check per criterion. One review per rollout, source, judge and rubric
    text: running again replaces it only on request.
    """

    class Source(models.TextChoices):
        HARBOR = "harbor", "Harbor analysis.json"
        JUDGE = "judge", "our judge"

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"  # the judge answered nothing usable: `error` says what

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="reviews")
    source = models.CharField(max_length=10, choices=Source.choices)
    # The judge's model as registered (agents.AgentModel name); "" for Harbor's, which does not say.
    judge = models.CharField(max_length=200, blank=True)
    rubric = models.CharField(max_length=200, blank=True, help_text="the rubric's name")
    # sha256 of the rubric's text: the same name with other criteria is another review.
    rubric_digest = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.DONE)
    error = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(null=True, blank=True)
    tokens_out = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["rollout", "source", "judge", "rubric_digest"], name="one_review_per_rubric"),
        ]

    def __str__(self) -> str:
        return f"{self.get_source_display()} review of {self.rollout_id}"


class ReviewCheck(models.Model):
    """One criterion of a review: its outcome, why, and the steps it rests on (filterable: "reward_hacking: fail")."""

    class Outcome(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"
        NOT_APPLICABLE = "not_applicable", "not applicable"

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="checks")
    name = models.CharField(max_length=100, db_index=True)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    explanation = models.TextField(blank=True)
    # ATIF step ids of the main trajectory the verdict rests on (linked on the rollout page).
    steps = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["review", "id"]
        indexes = [models.Index(fields=["name", "outcome"])]

    def __str__(self) -> str:
        return f"{self.name}: {self.outcome}"


class JobReview(models.Model):
    """Harbor's reading of a whole job (the job folder's analysis.json): its summary, keyed by the job's id.

    The per-trial readings in the same file become the trials' Reviews
    (where a trial folder has no analysis.json of its own); this keeps
    what concerns the job as a whole. Written only by
    trajectories.storing.job_analysis.
    """

    job_id = models.CharField(max_length=100, unique=True)
    summary = models.TextField(blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    n_trials = models.PositiveIntegerField(default=0, help_text="trial readings in the file")
    # Why the file could not be read ("" when it was): the trials imported all the same.
    error = models.TextField(blank=True)
    source_path = models.CharField(max_length=1000, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Harbor analysis of job {self.job_id}"


class Grade(models.Model):
    """One grading of a rollout: the verifier's verdict with its provenance (which verifier, when, by whom).

    The first entry is the grade the rollout came with (its run, or its
    import), recorded when it is first regraded; each regrade re-runs the
    task's current verifier on the rollout's recorded outputs and adds one.
    The rollout's own reward columns hold the latest done grade
    (trajectories.grades, their one writer after the first), so the boards
    read them as before; failed attempts are kept here with their reason
    and change nothing.
    """

    class Kind(models.TextChoices):
        ORIGINAL = "original", "original grade"
        REGRADE = "regrade", "regrade"

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"  # the verifier did not produce a reward, or the outputs did not cover it: `message` says why

    rollout = models.ForeignKey(Rollout, on_delete=models.CASCADE, related_name="grades")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    state = models.CharField(max_length=10, choices=State.choices, default=State.DONE)
    message = models.TextField(blank=True)
    reward = models.FloatField(null=True, blank=True)
    reward_valid = models.BooleanField(null=True, blank=True)
    verifier_fields = models.JSONField(default=dict, blank=True)
    verifier_stdout = models.TextField(blank=True)
    verifier_outputs = models.JSONField(default=dict, blank=True)
    score_log = models.JSONField(default=list, blank=True)
    anchors = models.JSONField(default=dict, blank=True)
    # sha256 over the task's tests/ and task.toml when it graded ("" for an original grade: not recorded then).
    verifier_version = models.CharField(max_length=64, blank=True)
    backend = models.CharField(max_length=30, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    celery_task_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    graded_at = models.DateTimeField(null=True, blank=True)
    # Beaten by the worker running it; a running regrade whose beat stopped lost its worker (the reaper fails it).
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["rollout", "id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of rollout {self.rollout_id}: {self.state} {self.reward}"
