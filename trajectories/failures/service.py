"""Failure analysis of stored rollouts: classify, label, list and export.

The rules live in the pure module `trajectories.failures.rules`; this module moves
data between it and the database.

- `classify_rollout(rollout, steps)` fills in the fields without saving: the
  importer calls it with the steps it holds in memory, before its one save.
- `classify_and_store(rollout)` reads the stored steps and saves:
  `manage.py classify_failures` for a re-run.
- A staff `FailureLabel` overrides the automatic cause; every edit is kept in
  `LabelChange`. The *effective cause* is the label's cause when it has one,
  else the automatic one.
- `Rollout.infra_error` is set when the effective cause is
  `infrastructure_error`, so the leaderboard leaves those rollouts out. It is
  cleared again only when the classifier or a label had set it (the runner
  may set it for its own reasons, which are kept).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, QuerySet, Value
from django.db.models.functions import Coalesce, NullIf
from django.urls import NoReverseMatch, reverse

from tasks.lib.numbers import as_float
from trajectories import lifecycle, provenance, statuses
from trajectories.failures import judge_service
from trajectories.failures.rules import (
    CAUSE_HELP,
    CAUSES,
    FAILED_OUTCOMES,
    FLAG_LABELS,
    FLAGS,
    Classification,
    RolloutFacts,
    StepFacts,
    Thresholds,
    classify,
)
from trajectories.analysis.diffs import files_in_diff
from trajectories.models import FailureLabel, LabelChange, Rollout

# Classification ---------------------------------------------------------------


def thresholds() -> Thresholds:
    """Defaults, overridden by settings.AUTOLAB_FAILURE_THRESHOLDS (a dict)."""
    return Thresholds(**getattr(settings, "AUTOLAB_FAILURE_THRESHOLDS", {}))


def effective_budget_sec(task_budget: float | None, config: dict[str, Any] | None) -> float | None:
    """The agent's timeout as Harbor computed it: override, cap, then multiplier."""
    config = config or {}
    agent = config.get("agent") or {}
    base = agent.get("override_timeout_sec") or task_budget
    if not base:
        return None
    cap = agent.get("max_timeout_sec")
    if cap:
        base = min(base, cap)
    multiplier = config.get("agent_timeout_multiplier")
    if multiplier is None:
        multiplier = config.get("timeout_multiplier")
    return float(base) * float(multiplier if multiplier is not None else 1.0)


def step_facts(step_id: int, kinds: str, elapsed_sec: float | None, diff: str) -> StepFacts:
    """What the rules read of one main-trajectory step (kinds as stored: " a b ")."""
    return StepFacts(step_id=step_id, kinds=kinds.split(), elapsed_sec=elapsed_sec, diff=diff, edited_files=files_in_diff(diff))


def facts_for(rollout: Rollout, steps: list[StepFacts] | None = None) -> RolloutFacts:
    """The plain facts of a rollout that the rules read; its stored steps unless given."""
    if steps is None:
        steps = [
            step_facts(*row)
            for row in rollout.steps.filter(subtrajectory__isnull=True)
            .order_by("position")
            .values_list("step_id", "kinds", "elapsed_sec", "diff")
        ]
    task = rollout.task
    ruling = rollout.verdict
    declared = task.optimization.get("grader_noise") if isinstance(task.optimization, dict) else None
    # A trajectory written in the agent's sandbox is its own account: the steps, the benchmark calls and the
    # curve it claims decide no cause and raise no flag (trajectories.provenance).
    own_account = not provenance.counts(rollout.trajectory_source)
    return RolloutFacts(
        status=rollout.status,
        reward=rollout.reward,
        excluded=rollout.excluded,
        reward_valid=rollout.reward_valid,
        has_trajectory=rollout.trajectory_format != "none" and not own_account,
        verifier_fields=rollout.verifier_fields if isinstance(rollout.verifier_fields, dict) else {},
        verifier_stdout=rollout.verifier_stdout or "",
        exception_type=rollout.exception_type or "",
        exception_message=rollout.exception_message or "",
        verifier_mode=rollout.verifier_mode,
        budget_sec=effective_budget_sec(task.budget_sec, rollout.config),
        agent_duration_sec=rollout.agent_duration_sec,
        budget_used_fraction=rollout.budget_used_fraction,
        n_benchmark_calls=rollout.n_benchmark_calls,
        n_edits=rollout.n_edits,
        best_score=None if own_account else rollout.best_score,
        curve=rollout.curve if isinstance(rollout.curve, list) and not own_account else [],
        sealed=ruling.score if ruling.counted else None,
        clip_to=1.0 if task.version.clip_rewards else None,
        grader_noise=as_float(declared),
        instruction=task.instruction or "",
        steps=steps,
    )


def classify_rollout(
    rollout: Rollout, steps: list[StepFacts] | None = None, limits: Thresholds | None = None
) -> tuple[Classification, list[str]]:
    """Set `rollout`'s outcome, cause, evidence and flags, unsaved: (result, changed fields)."""
    result = classify(facts_for(rollout, steps), limits or thresholds())
    cause_was = effective_cause(rollout)
    rollout.failure_cause = result.cause
    rollout.failure_secondary = result.secondary
    rollout.failure_evidence = result.evidence
    rollout.behaviour_flags = result.flags
    changed = lifecycle.settle_cause(rollout, result.outcome, cause=effective_cause(rollout), cause_was=cause_was)
    update = ["outcome", "failure_cause", "failure_secondary", "failure_evidence", "behaviour_flags"]
    return result, update + [name for name in changed if name not in update]


def classify_and_store(rollout: Rollout, limits: Thresholds | None = None) -> Classification:
    """Classify `rollout` from its stored steps and save those fields."""
    result, update = classify_rollout(rollout, limits=limits)
    rollout.save(update_fields=update)
    return result


def _label_of(rollout: Rollout) -> FailureLabel | None:
    if rollout.pk is None:
        return None  # not stored yet, so no label
    try:
        return rollout.label
    except FailureLabel.DoesNotExist:
        return None


def reclassify(queryset: QuerySet[Rollout] | None = None, batch_size: int = 200) -> Counter[str]:
    """Classify every rollout of `queryset` again, one small transaction per batch."""
    queryset = (queryset if queryset is not None else Rollout.objects.all()).order_by("pk")
    counts: Counter[str] = Counter()
    limits = thresholds()
    last_pk = 0
    while True:
        batch = list(queryset.filter(pk__gt=last_pk).select_related("task", "label")[:batch_size])
        if not batch:
            return counts
        with transaction.atomic():
            for rollout in batch:
                result = classify_and_store(rollout, limits)
                counts[result.cause or result.outcome] += 1
        last_pk = batch[-1].pk


# Labels ------------------------------------------------------------------------


def effective_cause(rollout: Rollout) -> str:
    label = _label_of(rollout)
    if label is not None and label.cause:
        return label.cause
    return rollout.failure_cause


def cause_source(rollout: Rollout) -> str:
    """'label' when a staff label decides the cause, 'automatic' otherwise."""
    label = _label_of(rollout)
    return "label" if label is not None and label.cause else "automatic"


def label_values(label: FailureLabel | None) -> dict[str, Any]:
    if label is None:
        return {}
    return {"cause": label.cause, "notes": label.notes, "tags": list(label.tags or [])}


# A label is read on every failures page that lists its rollout: sizes a person writes.
MAX_NOTES = 10_000
MAX_TAGS = 30
MAX_TAG_LENGTH = 50


class LabelError(ValueError):
    pass


def parse_tags(value: str | list[str] | None) -> list[str]:
    """'a, b ,a' -> ['a', 'b']; LabelError past MAX_TAGS tags or a tag past MAX_TAG_LENGTH characters."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    tags: list[str] = []
    for item in items:
        tag = str(item).strip()
        if len(tag) > MAX_TAG_LENGTH:
            raise LabelError(f"a tag is {len(tag)} characters long (at most {MAX_TAG_LENGTH})")
        if tag and tag not in tags:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise LabelError(f"{len(tags)} tags (at most {MAX_TAGS})")
    return tags


@transaction.atomic
def set_label(rollout: Rollout, user, cause: str = "", notes: str = "", tags: str | list[str] | None = None) -> FailureLabel | None:
    """Set, change or clear (all fields empty) the staff label, with an audit row.

    Returns the label, or None when it was cleared. An unchanged label
    writes nothing.
    """
    cause = (cause or "").strip()
    if cause and cause not in CAUSES:
        raise LabelError(f"unknown cause {cause!r}; expected one of {', '.join(CAUSES)}")
    notes = (notes or "").strip()
    if len(notes) > MAX_NOTES:
        raise LabelError(f"notes are {len(notes)} characters long (at most {MAX_NOTES})")
    new = {"cause": cause, "notes": notes, "tags": parse_tags(tags)}
    if not any(new.values()):
        new = {}
    # Lock the rollout row so that two staff saving at once both get audited in order.
    rollout = Rollout.objects.select_for_update().get(pk=rollout.pk)
    label = FailureLabel.objects.filter(rollout=rollout).first()
    old = label_values(label)
    if old == new:
        return label
    cause_was = effective_cause(rollout)
    if new:
        label = label or FailureLabel(rollout=rollout)
        label.cause, label.notes, label.tags = new["cause"], new["notes"], new["tags"]
        label.updated_by = user
        label.save()
        rollout.label = label
    elif label is not None:
        label.delete()
        label = None
        # Forget the cached reverse one-to-one so effective_cause sees no label.
        rollout._state.fields_cache.pop("label", None)
    LabelChange.objects.create(rollout=rollout, user=user, old=old, new=new)
    # The outcome follows the cause that now stands; what the classifier said comes from classifying again.
    classified = classify(facts_for(rollout), thresholds()).outcome
    changed = lifecycle.settle_cause(rollout, classified, cause=effective_cause(rollout), cause_was=cause_was)
    if changed:
        rollout.save(update_fields=changed)
    return label


# Listing, matrix, export ------------------------------------------------------


class Filters(Protocol):
    """What the queries below need of the failures page's filters (`trajectories.forms.FailureFilters`)."""

    def narrow(self, rows: QuerySet[Rollout], leave_out: Collection[str] = ()) -> QuerySet[Rollout]: ...

    def as_query(self, **changes: str) -> dict[str, str]: ...


def _effective_cause_expr():
    return Coalesce(NullIf(F("label__cause"), Value("")), F("failure_cause"))


def with_effective_cause(rollouts: QuerySet[Rollout]) -> QuerySet[Rollout]:
    """`rollouts` annotated with `effective_cause`: a staff label's cause, else the automatic one."""
    return rollouts.annotate(effective_cause=_effective_cause_expr())


def _ended() -> QuerySet[Rollout]:
    """Non-superseded rollouts that have ended, with `effective_cause`: what the failures page counts."""
    return with_effective_cause(Rollout.objects.filter(superseded=False, held_back=False).exclude(status__in=statuses.ACTIVE))


def failed_rollouts(filters: Filters) -> QuerySet[Rollout]:
    """Zero-score (and no-reward, infra-error) rollouts, with `effective_cause` annotated."""
    qs = filters.narrow(_ended()).filter(outcome__in=FAILED_OUTCOMES)
    return qs.select_related("task__version", "model", "harness", "label").order_by(
        "task__name", "model__name", "harness__name", "index", "pk"
    )


def unclassified_count() -> int:
    return Rollout.objects.filter(outcome="").exclude(status__in=statuses.ACTIVE).count()


def filter_options(version: str = "") -> dict[str, list]:
    """Values offered by the filter form, from what is stored.

    Categories are grouped by their benchmark (AutoLab's four, RE-Bench's
    domains), those of the chosen version's benchmark alone when one is
    chosen: RE-Bench's domains were listed among AutoLab's categories. Each
    category is offered once: AutoLab's four under "AutoLab" whichever
    versions use them (the filter matches a category by name, in every
    version), another benchmark's under the first benchmark that has it.
    """
    from agents.models import AgentModel, Harness
    from tasks.models import BenchmarkVersion, Category, Task

    tasks = Task.objects.exclude(category="")
    if version:
        tasks = tasks.filter(version__benchmark__in=BenchmarkVersion.objects.filter(name=version).values("benchmark"))
    grouped: dict[str, list[str]] = {}
    seen: set[str] = set()
    for benchmark, category in tasks.order_by("version__benchmark", "category").values_list(
            "version__benchmark", "category").distinct():
        if category in seen:
            continue
        seen.add(category)
        group = "AutoLab" if category in Category.values else benchmark
        grouped.setdefault(group, []).append(category)
    return {
        "tasks": list(Task.objects.filter(rollouts__isnull=False).order_by("name").values_list("name", flat=True).distinct()),
        "categories": list(grouped.items()),
        "models": list(AgentModel.objects.filter(rollouts__isnull=False).distinct().order_by("name")),
        "harnesses": list(Harness.objects.filter(rollouts__isnull=False).distinct().order_by("name", "version")),
        "versions": list(BenchmarkVersion.objects.order_by("-name").values_list("name", flat=True)),
        "causes": list(CAUSES.items()),
    }


@dataclass
class MatrixRow:
    model: Any
    harness: Any
    version: str
    total: int
    failed: int
    cells: list[tuple[str, int, str]]  # (cause, count, "?query" of the filtered list)
    href: str  # the list of this entry's failures, any cause

    @property
    def share(self) -> float | None:
        return self.failed / self.total if self.total else None


def failure_matrix(filters: Filters) -> dict[str, Any]:
    """Counts of failed rollouts per entry (model x harness x version) and effective cause."""
    from agents.models import AgentModel, Harness

    base = filters.narrow(_ended(), leave_out=("cause",))
    totals = {
        (r["model"], r["harness"], r["task__version__name"]): r["n"]
        for r in base.values("model", "harness", "task__version__name").annotate(n=Count("id")).order_by()
    }
    counts: dict[tuple, Counter[str]] = {}
    for r in (
        base.filter(outcome__in=FAILED_OUTCOMES)
        .values("model", "harness", "task__version__name", "effective_cause")
        .annotate(n=Count("id"))
        .order_by()
    ):
        key = (r["model"], r["harness"], r["task__version__name"])
        counts.setdefault(key, Counter())[r["effective_cause"] or ""] += r["n"]
    seen = {cause for counter in counts.values() for cause in counter}
    columns = [c for c in CAUSES if c in seen] + sorted(c for c in seen if c not in CAUSES)
    models = AgentModel.objects.in_bulk({k[0] for k in totals})
    harnesses = Harness.objects.in_bulk({k[1] for k in totals})
    rows = []
    for key in sorted(totals, key=lambda k: (str(models[k[0]]), str(harnesses[k[1]]), k[2])):
        counter = counts.get(key, Counter())
        query = filters.as_query(model=models[key[0]].name, harness=str(key[1]), version=key[2], cause="")
        cells = [(cause, counter.get(cause, 0), "?" + urlencode({**query, "cause": cause})) for cause in columns]
        failed = sum(counter.values())
        rows.append(MatrixRow(models[key[0]], harnesses[key[1]], key[2], totals[key], failed, cells, "?" + urlencode(query)))
    return {"columns": [(c, CAUSES.get(c, c)) for c in columns], "rows": rows}


def rollout_url(pk: int) -> str:
    """The rollout page (the explorer's); a plain path when it is not routed yet."""
    for name in ("trajectories:rollout_detail", "trajectories:rollout"):
        try:
            return reverse(name, args=[pk])
        except NoReverseMatch:
            continue
    return f"/rollouts/{pk}/"


def step_url(rollout_pk: int, step_id: int | None) -> str:
    """A step's permalink: the rollout page finds the page of steps holding it."""
    url = rollout_url(rollout_pk)
    return f"{url}?step={step_id}" if step_id is not None else url


EXPORT_COLUMNS = (
    "id", "trial_name", "url", "task", "category", "version", "model", "harness", "reward", "outcome",
    "cause", "cause_source", "automatic_cause", "label_cause", "secondary", "flags", "evidence",
    "label_notes", "label_tags", "n_benchmark_calls", "budget_used_fraction",
    "judge", "judge_failing", "judge_summary", "judge_disagreement",
)  # fmt: skip


def export_rows(filters: Filters) -> list[dict[str, Any]]:
    """The failures list as data, each row with the judge's verdict beside the rule's cause, as the page shows it.

    judge_disagreement is judge_agreement's: "" where they agree (or the
    judge has not read it), "rule_only" (the rule found a failure the
    judge's checks all pass), "judge_only" (the judge failed a check where
    the rule found nothing).
    """
    listed = list(judge_service.with_judge_verdict(failed_rollouts(filters)))
    verdicts = judge_service.verdicts([r.judge_review for r in listed])
    rows = []
    for r in listed:
        label = _label_of(r)
        verdict = verdicts.get(r.judge_review) or {}
        rows.append(
            {
                "id": r.pk,
                "trial_name": r.trial_name,
                "url": rollout_url(r.pk),
                "task": r.task.name,
                "category": r.task.category,
                "version": r.task.version.name,
                "model": r.model.name,
                "harness": str(r.harness),
                "reward": r.reward,
                "outcome": r.outcome,
                "cause": r.effective_cause,
                "cause_source": cause_source(r),
                "automatic_cause": r.failure_cause,
                "label_cause": label.cause if label else "",
                "secondary": list(r.failure_secondary or []),
                "flags": list(r.behaviour_flags or []),
                "evidence": list(r.failure_evidence or []),
                "label_notes": label.notes if label else "",
                "label_tags": list(label.tags or []) if label else [],
                "n_benchmark_calls": r.n_benchmark_calls,
                "budget_used_fraction": r.budget_used_fraction,
                "judge": verdict.get("judge", ""),
                "judge_failing": [name for name, _ in verdict.get("failing", [])],
                "judge_summary": verdict.get("summary", ""),
                "judge_disagreement": r.disagreement,
            }
        )
    return rows


def flat_row(row: dict[str, Any]) -> list[Any]:
    """One CSV line: lists joined with '; ', evidence as its texts."""
    out = []
    for column in EXPORT_COLUMNS:
        value = row[column]
        if column == "evidence":
            value = "; ".join(f"[{e.get('cause', '')}] {e.get('text', '')}" for e in value)
        elif isinstance(value, list):
            value = "; ".join(value)
        out.append("" if value is None else value)
    return out


# The rollout page's panel -----------------------------------------------------


def flag_evidence(rollout: Rollout) -> list[dict[str, Any]]:
    """The evidence behind its behaviour flags (sealed_below_visible's benchmark call and verifier output), each with
    its "flag" and, where it names a step, that step's "url"."""
    return [
        {**e, "url": step_url(rollout.pk, e.get("step_id")) if e.get("step_id") is not None else ""}
        for e in (rollout.failure_evidence or [])
        if isinstance(e, dict) and e.get("flag")
    ]


def panel(rollout: Rollout) -> dict[str, Any]:
    """What `_failure_panel.html` shows for one rollout."""
    label = _label_of(rollout)
    cause = effective_cause(rollout)
    evidence = [
        {**e, "url": step_url(rollout.pk, e.get("step_id")) if e.get("step_id") is not None else ""}
        for e in (rollout.failure_evidence or [])
        if isinstance(e, dict) and not e.get("flag")
    ]
    flagged = flag_evidence(rollout)
    return {
        "outcome": rollout.outcome,
        "cause": cause,
        "cause_label": CAUSES.get(cause, cause),
        "cause_help": CAUSE_HELP.get(cause, ""),
        "source": cause_source(rollout),
        "automatic_cause": rollout.failure_cause,
        "automatic_label": CAUSES.get(rollout.failure_cause, rollout.failure_cause),
        "secondary": [(c, CAUSES.get(c, c)) for c in rollout.failure_secondary or []],
        "evidence": evidence,
        "flags": list(rollout.behaviour_flags or []),  # ids: the panel shows each by failure_tags' flag_label
        # Per flag with evidence: its name, meaning and evidence (the flag's own sentence and the verifier's output).
        "flag_evidence": [
            {"flag": flag, "label": FLAG_LABELS.get(flag, flag), "help": FLAGS.get(flag, ""),
             "items": [e for e in flagged if e["flag"] == flag]}
            for flag in rollout.behaviour_flags or []
            if any(e["flag"] == flag for e in flagged)
        ],
        "label": label,
        "label_tags": ", ".join(label.tags or []) if label else "",
        "changes": list(rollout.label_changes.select_related("user")[:10]),
        "causes": list(CAUSES.items()),
        "url": reverse("trajectories:failure_label", args=[rollout.pk]),
    }
