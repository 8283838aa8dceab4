"""The staff launch page's form and the facts it shows (estimate, earlier rollouts), with no HTTP."""
from __future__ import annotations

import secrets

from django import forms
from django.db.models import Q

from tasks.models import BenchmarkVersion, Task
from trajectories.models import Rollout, RolloutStatus

from evaluations.running import estimates
from agents.models import AgentModel, Harness
from evaluations.models import Backend

ADD = "add"
SUPERSEDE = "supersede"


class VersionTasks(forms.SelectMultiple):
    """Every task as an option that names its version; those of other versions than the chosen one hidden.

    The list offered every version's tasks at once. The options of another
    version stay in the page (static/js/launch_form.js shows them when that
    version is chosen) but hidden, so the list reads as the chosen version's.
    """

    version_id: int | None = None

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        task = getattr(value, "instance", None)
        if task is not None:
            option["attrs"]["data-version"] = str(task.version_id)
            if self.version_id is not None and task.version_id != self.version_id:
                option["attrs"]["hidden"] = True
        return option


class TaskChoice(forms.ModelMultipleChoiceField):
    widget = VersionTasks

    def label_from_instance(self, task: Task) -> str:
        return f"{task.version.name} / {task.name}"


def launchable_models():
    """The models a campaign can run: not human cohorts, nor models known only from published results.

    A paper's table creates a model for every row; it has no way to be
    called (no litellm string) and was offered in the launch form.
    """
    published_only = (
        Q(litellm_model="") & Q(is_scripted=False) & Q(rollouts__isnull=True)
        & (Q(published_results__isnull=False) | Q(published_figures__isnull=False))
    )
    return AgentModel.objects.exclude(kind="human").exclude(published_only).distinct().order_by("name")


class LaunchForm(forms.Form):
    model = forms.ModelChoiceField(launchable_models())
    harness = forms.ModelChoiceField(Harness.objects.order_by("name", "version"))
    version = forms.ModelChoiceField(BenchmarkVersion.objects.order_by("-created_at"), label="Benchmark version")
    tasks = TaskChoice(
        Task.objects.select_related("version").order_by("version__name", "name"), required=False,
        help_text="The chosen version's tasks; leave empty for every one of them.",
    )
    k = forms.IntegerField(min_value=1, max_value=50, initial=3, label="Rollouts per task (k)")
    backend = forms.ChoiceField(choices=Backend.choices, initial="docker")
    earlier = forms.ChoiceField(
        choices=[(ADD, "Add rollouts: the new ones count together with the earlier ones"),
                 (SUPERSEDE, "Re-evaluate: the earlier rollouts are kept but leave the figures")],
        required=False, widget=forms.RadioSelect, label="Earlier rollouts of this entry",
    )
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    # One per page shown (new_launch_token): the same launch sent twice starts one campaign.
    launch_token = forms.RegexField(r"^[0-9a-f]{32}$", required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound and not self.initial.get("version"):
            # The newest version chosen at first, so that the task list has a version to show.
            self.initial["version"] = self.fields["version"].queryset.first()
        self.fields["tasks"].widget.version_id = self.chosen_version_id()

    def chosen_version_id(self) -> int | None:
        """The version whose tasks the list shows: the one sent or first chosen."""
        value = self["version"].value()
        value = getattr(value, "pk", value)
        return int(value) if str(value or "").isdigit() else None

    def clean(self):
        data = super().clean()
        version, tasks = data.get("version"), list(data.get("tasks") or [])
        if version is None:
            return data
        wrong = [task.name for task in tasks if task.version_id != version.pk]
        if wrong:
            raise forms.ValidationError(f"Not tasks of {version}: {', '.join(wrong)}.")
        if not tasks and not version.tasks.exists():
            raise forms.ValidationError(f"{version} has no tasks.")
        model, harness = data.get("model"), data.get("harness")
        if model and harness:
            existing = earlier_rollouts(model, harness, version, tasks)
            if existing and not data.get("earlier"):
                self.add_error("earlier", f"{existing} rollouts of {model} / {harness} on these tasks exist: "
                                          "add to them, or re-evaluate (supersede them).")
        return data


def new_launch_token() -> str:
    return secrets.token_hex(16)


def chosen_tasks(version: BenchmarkVersion, tasks: list[Task]) -> list[Task]:
    return tasks or list(version.tasks.order_by("name"))


def earlier_rollouts(model: AgentModel, harness: Harness, version: BenchmarkVersion, tasks: list[Task]) -> int:
    """Rollouts of this entry on these tasks that count today (not superseded, not cancelled)."""
    return (
        Rollout.objects.filter(model=model, harness=harness, task__in=chosen_tasks(version, tasks), superseded=False)
        .exclude(status=RolloutStatus.CANCELLED)
        .count()
    )


def campaign_estimate(model: AgentModel, harness: Harness, version: BenchmarkVersion, tasks: list[Task],
                      k: int) -> estimates.Estimate:
    """The estimate from earlier ended rollouts of the same task names (any version)."""
    chosen = chosen_tasks(version, tasks)
    names = [task.name for task in chosen]
    ended = (
        Rollout.objects.filter(task__name__in=names, harness__name=harness.name, status=RolloutStatus.FINISHED,
                               infra_error=False)
        .filter(Q(cost_usd__isnull=False) | Q(agent_started_at__isnull=False))
        .values_list("task__name", "model_id", "cost_usd", "agent_started_at", "agent_finished_at")
    )
    same_entry: dict[str, list[estimates.Sample]] = {name: [] for name in names}
    same_harness: dict[str, list[estimates.Sample]] = {name: [] for name in names}
    for name, model_id, cost, started, finished in ended:
        seconds = (finished - started).total_seconds() if started and finished else None
        sample = estimates.Sample(cost, seconds)
        (same_entry if model_id == model.pk else same_harness)[name].append(sample)
    return estimates.estimate(
        [estimates.TaskBasis(task.name, task.budget_sec, same_entry[task.name], same_harness[task.name])
         for task in chosen],
        k,
    )
