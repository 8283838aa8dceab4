"""What other apps call to reach the task registry.

- import_tasks: read Harbor task directories into BenchmarkVersion/Task rows.
- task_spec: the ORM-free TaskSpec of a task, for scoring and analysis.
- rollout_anchors: the anchors a rollout's reward was computed with.
- verifier_metric, describe_verifier_metric: the metric a rollout's verifier
  scored (reward.json's, read under the task's metric name), and as the
  rollout page says it.
- match_task: the Task a Harbor trial ran, from the trial's task name.
- benchmark_commands: a task's explicit local benchmark commands, if any.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import DatabaseError, IntegrityError, transaction

from . import anchors as anchor_rule
from .anchors import Anchors
from .anchors import describe as describe_anchors
from .hardware import GpuNeed, detect_host_gpus, gpu_shortfall
from .models import BenchmarkVersion, ScoringConvention, Task, TaskRevision
from .scoring import REBENCH
from .spec import TaskSpec, name_candidates
from .taskdir import ParsedTask, TaskDirError, find_task_dirs, parse_task_dir

IMPORTED = "imported"
UPDATED = "updated"
UNCHANGED = "unchanged"
FAILED = "failed"
OUTCOMES = (IMPORTED, UPDATED, UNCHANGED, FAILED)

# The fields a one-line summary or --json output shows for each task.
SUMMARY_FIELDS = (
    "category",
    "metric",
    "direction",
    "baseline_score",
    "reference_score",
    "budget_sec",
    "cpus",
    "memory_mb",
    "gpus",
    "gpu_type",
    "scoring_rule",
    "checksum",
    "harbor_digest",
)


class TaskNotFound(LookupError):
    """No task in the registry matches a trial's task name."""


@dataclass
class TaskImportResult:
    """What happened to one task directory."""

    name: str
    path: str
    outcome: str
    fields: dict[str, Any] = field(default_factory=dict)
    changed_fields: list[str] = field(default_factory=list)
    error: str = ""
    # What the version's grading, or this machine, cannot honour of the task's declarations (imported all the same).
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "path": self.path, "outcome": self.outcome}
        if self.outcome == FAILED:
            data["error"] = self.error
        else:
            data["fields"] = self.fields
            if self.changed_fields:
                data["changed_fields"] = self.changed_fields
            if self.warnings:
                data["warnings"] = self.warnings
        return data


@dataclass
class TaskImportReport:
    """Per-task outcomes of one import, in the order the folders were read."""

    version: str
    path: str
    results: list[TaskImportResult] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        counts = {outcome: 0 for outcome in OUTCOMES}
        for result in self.results:
            counts[result.outcome] += 1
        return counts

    @property
    def ok(self) -> bool:
        return self.counts[FAILED] == 0

    def summary(self) -> str:
        """"3 imported, 1 updated, 6 unchanged, 0 failed"."""
        counts = self.counts
        return ", ".join(f"{counts[outcome]} {outcome}" for outcome in OUTCOMES)

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "path": self.path,
            "tasks": [result.as_dict() for result in self.results],
            "counts": self.counts,
        }


def ensure_version(
    name: str, clip_rewards: bool | None = None, benchmark: str = "AutoLab", demo: bool = False
) -> BenchmarkVersion:
    """The named BenchmarkVersion, created if missing.

    `clip_rewards` None keeps an existing version's setting (new versions
    clip); True/False sets it. `demo` marks example or synthetic content.
    """
    version, created = BenchmarkVersion.objects.get_or_create(
        name=name,
        defaults={
            "benchmark": benchmark,
            "clip_rewards": True if clip_rewards is None else clip_rewards,
            "demo": demo,
        },
    )
    changed = []
    if not created and clip_rewards is not None and version.clip_rewards != clip_rewards:
        version.clip_rewards = clip_rewards
        changed.append("clip_rewards")
    if not created and demo and not version.demo:
        version.demo = True
        changed.append("demo")
    if changed:
        version.save(update_fields=changed)
    return version


def import_tasks(
    path: Path | str, version: str = "1.1", clip_rewards: bool | None = None, benchmark: str | None = None
) -> TaskImportReport:
    """Import one task folder or a folder of task folders into `version`.

    Each task is imported in its own transaction: a broken task is reported
    with its error and the others still import. Re-importing an unchanged
    task (same content checksum) does nothing; a changed one is updated in
    place with a TaskRevision listing what changed.

    A version this import creates whose tasks all use RE-Bench's rule takes
    RE-Bench's convention (the best of the score log, never clipped).
    """
    root = Path(path)
    report = TaskImportReport(version=version, path=str(root))
    if not root.exists():
        report.results.append(TaskImportResult(root.name or str(root), str(root), FAILED, error=f"{root}: does not exist"))
        return report
    directories = find_task_dirs(root)
    if not directories:
        report.results.append(
            TaskImportResult(root.name, str(root), FAILED, error=f"{root}: no task.toml here or in any subfolder")
        )
        return report
    created = not BenchmarkVersion.objects.filter(name=version).exists()
    benchmark_version = ensure_version(version, clip_rewards, benchmark=benchmark or "AutoLab")
    seen: dict[str, str] = {}
    for directory in directories:
        result = import_task_dir(directory, benchmark_version, seen)
        report.results.append(result)
    rules = {result.fields.get("scoring_rule") for result in report.results if result.outcome != FAILED}
    if created and rules == {REBENCH}:
        benchmark_version.scoring = ScoringConvention.BEST_OF_SCORE_LOG
        benchmark_version.clip_rewards = bool(clip_rewards)
        if benchmark is None:
            benchmark_version.benchmark = "RE-Bench"
        benchmark_version.save(update_fields=["scoring", "clip_rewards", "benchmark"])
    return report


def import_task_dir(directory: Path, version: BenchmarkVersion, seen: dict[str, str] | None = None) -> TaskImportResult:
    """Import one task directory into `version`, in one transaction."""
    seen = {} if seen is None else seen
    try:
        parsed = parse_task_dir(directory)
    except TaskDirError as error:
        return TaskImportResult(directory.name, str(directory), FAILED, error=str(error))
    except OSError as error:
        return TaskImportResult(directory.name, str(directory), FAILED, error=f"{directory}: {error}")
    if parsed.name in seen:
        return TaskImportResult(
            parsed.name,
            str(directory),
            FAILED,
            error=f"{directory}: task name {parsed.name!r} is already used by {seen[parsed.name]} in this import",
        )
    too_long = _too_long(parsed)
    if too_long:
        return TaskImportResult(parsed.name, str(directory), FAILED, error=f"{directory / 'task.toml'}: {too_long}")
    seen[parsed.name] = str(directory)
    try:
        with transaction.atomic():
            outcome, changed = _store(parsed, version)
    except IntegrityError as error:
        # Another import created the same task between our read and write.
        return TaskImportResult(
            parsed.name, str(directory), FAILED, error=f"{directory}: imported concurrently, run again ({error})"
        )
    except DatabaseError as error:
        return TaskImportResult(parsed.name, str(directory), FAILED, error=f"{directory}: database refused it: {error}")
    return TaskImportResult(
        parsed.name,
        str(directory),
        outcome,
        fields={key: getattr(parsed, key) for key in SUMMARY_FIELDS},
        changed_fields=changed,
        warnings=grading_warnings(directory, version) + hardware_warnings(parsed),
    )


def hardware_warnings(parsed: ParsedTask) -> list[str]:
    """What this machine lacks of the GPUs the task needs: information, as its rollouts run on a GPU worker."""
    need = GpuNeed.from_stored(parsed.gpus, parsed.gpu_type)
    shortfall = gpu_shortfall(need, detect_host_gpus()) if need.count else ""
    return [f"{shortfall}: its rollouts run on a worker of the gpu queue that has it"] if shortfall else []


def grading_warnings(directory: Path, version: BenchmarkVersion) -> list[str]:
    """What sealed grading cannot honour of what the task declares, when the version seals grading."""
    if not version.sealed_grading or not (directory / "environment").is_dir():
        return []  # nothing to run: no grading to seal
    from .sealing import CannotSeal, seal_task_dir

    try:
        return seal_task_dir(directory).warnings
    except CannotSeal as error:
        return [f"{error}: its rollouts cannot run on this version until it declares them"]
    except ValueError as error:  # pydantic's: Harbor's reading of task.toml refused it
        return [f"Harbor cannot read its task.toml ({error}): its rollouts cannot run"]


def _too_long(parsed: ParsedTask) -> str:
    """A problem with a value too long for its column, or "" (PostgreSQL would refuse it)."""
    for model_field in Task._meta.get_fields():
        max_length = getattr(model_field, "max_length", None)
        value = getattr(parsed, model_field.name, None)
        if max_length and isinstance(value, str) and len(value) > max_length:
            return f"{model_field.name} is {len(value)} characters long; at most {max_length} fit"
    return ""


def _store(parsed: ParsedTask, version: BenchmarkVersion) -> tuple[str, list[str]]:
    values = parsed.model_fields()
    task = Task.objects.select_for_update().filter(version=version, name=parsed.name).first()
    if task is None:
        task = Task.objects.create(version=version, **values)
        TaskRevision.objects.create(task=task, checksum=parsed.checksum, changed_fields={})
        return IMPORTED, []
    # An unchanged folder imported before Harbor's digest was recorded is updated to record it.
    if task.checksum == parsed.checksum and task.harbor_digest == parsed.harbor_digest:
        return UNCHANGED, []
    changes = {}
    for key, new in values.items():
        old = getattr(task, key)
        if old != new:
            changes[key] = {"old": old, "new": new}
            setattr(task, key, new)
    task.save()
    TaskRevision.objects.create(task=task, checksum=parsed.checksum, changed_fields=changes)
    return UPDATED, sorted(changes)


def task_spec(task: Task, anchors: Anchors | None = None) -> TaskSpec:
    """The ORM-free description of `task`; clipping comes from its version.

    With `anchors` (a rollout's, from `rollout_anchors`) the spec scores
    against them instead of task.toml's.
    """
    baseline, reference = task.baseline_score, task.reference_score
    if anchors is not None:
        baseline, reference = anchors.baseline, anchors.reference
    return TaskSpec(
        name=task.name,
        category=task.category,
        metric=task.metric,
        direction=task.direction,
        baseline_score=baseline,
        reference_score=reference,
        scoring_rule=task.scoring_rule,
        transform=task.transform or "identity",
        transform_offset=task.transform_offset or 0.0,
        final_only=task.final_only,
        clip=task.version.clip_rewards,
        benchmark_pattern=task.benchmark_pattern,
        metric_pattern=task.metric_pattern,
        instruction=task.instruction,
        budget_sec=task.budget_sec,
        benchmark_commands=tuple(benchmark_commands(task)),
    )


def rollout_anchors(task: Task, reward: float | None, fields: dict | None, outputs: dict | None) -> Anchors:
    """The anchors that turn the verifier's metric into its reward (tasks.anchors)."""
    spec = task_spec(task)
    return anchor_rule.for_task(spec, reward, fields, outputs)


def verifier_metric(task: Task, fields: dict | None, outputs: dict | None) -> float | None:
    """The metric a rollout's verifier scored, read from its fields under `task`'s metric name (tasks.anchors)."""
    return anchor_rule.verifier_metric(
        fields if isinstance(fields, dict) else {}, outputs if isinstance(outputs, dict) else {}, task.metric
    )[0]


def describe_verifier_metric(task: Task, value: float | None) -> str:
    """"comparator_count 60 (lower is better)": the metric with the task's name and direction; "" without one."""
    return anchor_rule.describe_metric(value, task.metric, task.direction)


def stored_anchors(task: Task, stored: dict | None) -> Anchors:
    """A rollout's stored anchors; task.toml's, unchecked, for rollouts stored before they were resolved."""
    return anchor_rule.stored(stored, task.baseline_score, task.reference_score)


def match_task(trial_task_name: str, version: str | None = None) -> Task:
    """The Task a Harbor trial ran, by exact name, never by a fuzzy guess.

    Trials name their task like "musubi-tuner__flux2_klein_lora" (a library
    prefix, "__", the task name). We try the whole name, then the part after
    the last "__". When several versions hold the name and none is given,
    the newest version wins.
    """
    candidates = name_candidates(trial_task_name)
    for candidate in candidates:
        tasks = Task.objects.select_related("version").filter(name=candidate)
        if version is not None:
            tasks = tasks.filter(version__name=version)
        task = tasks.order_by("-version__created_at", "-version__id").first()
        if task is not None:
            return task
    where = f" in version {version}" if version is not None else " in any version"
    tried = ", ".join(repr(candidate) for candidate in candidates if candidate) or "(empty name)"
    raise TaskNotFound(f"no task named {tried}{where} (tried exact name, then the part after the last '__')")


def benchmark_commands(task: Task) -> list[str]:
    """Explicit local benchmark commands from task.toml's `benchmark_command` hint.

    Empty when the task does not name them; trajectory analysis then reads
    the commands from the instruction itself.
    """
    optimization = task.optimization or {}
    value = optimization.get("benchmark_command", optimization.get("benchmark_commands"))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [item.strip() for item in value if isinstance(item, str) and item.strip()]


__all__ = [
    "TaskImportReport",
    "TaskImportResult",
    "TaskNotFound",
    "benchmark_commands",
    "describe_anchors",
    "describe_verifier_metric",
    "ensure_version",
    "import_task_dir",
    "import_tasks",
    "match_task",
    "rollout_anchors",
    "stored_anchors",
    "task_spec",
    "verifier_metric",
]


HARDWARE_CHOICES = (("", "any hardware"), ("cpu", "CPU only"), ("gpu", "needs a GPU"))


def catalogue_tasks(category: str = "", version: str = "", hardware: str = ""):
    """Tasks for the catalogue, filtered; unknown filter values match nothing."""
    tasks = Task.objects.select_related("version").order_by("category", "name", "-version__created_at")
    if category:
        tasks = tasks.filter(category=category)
    if version:
        tasks = tasks.filter(version__name=version)
    if hardware == "gpu":
        tasks = tasks.filter(gpus__gt=0)
    elif hardware == "cpu":
        tasks = tasks.filter(gpus=0)
    return tasks


def catalogue_choices() -> dict[str, list]:
    """The values the catalogue's filters offer: categories and versions in use."""
    categories = sorted(set(Task.objects.exclude(category="").values_list("category", flat=True)))
    versions = list(BenchmarkVersion.objects.order_by("-created_at", "-id").values_list("name", flat=True))
    return {"categories": categories, "versions": versions}
