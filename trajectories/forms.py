"""Forms of the explorer's GET parameters that are more than a page number.

`RolloutFilters` owns the rollouts list's parameters: the page /rollouts/,
/api/v1/rollouts/ and rollouts.csv read them through it, so one query
string selects the same rows in each. `FailureFilters` is the failures
page's (and its exports') share of them, with the same rules.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence

from django import forms
from django.db.models import Model, QuerySet

from autolab_site.filters import FilterForm
from trajectories.failures.rules import CAUSES, FLAGS, Outcome
from trajectories.failures.service import with_effective_cause
from trajectories.analysis.judge_digest import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET
from trajectories.explorer import STEP_KINDS
from trajectories.models import FailureLabel, ReviewCheck, Rollout, RolloutStatus
from trajectories.search import query as search
from trajectories.reading.review_data import OUTCOMES as CHECK_OUTCOMES


class TrialTabForm(forms.Form):
    """A trial tab's parameters: the log's search and the artifact list's page.

    A bad value (a page that is not a number, a query too long) is a 400
    naming the field, not a guess.
    """

    q = forms.CharField(required=False, max_length=200, strip=True)
    page = forms.IntegerField(required=False, min_value=1)


class CurveRangeForm(forms.Form):
    """A zoomed plot's x range: elapsed seconds, or step ids (curve.json)."""

    x = forms.ChoiceField(choices=[("t", "elapsed seconds"), ("step", "step")], initial="t")
    low = forms.FloatField()
    high = forms.FloatField()

    def clean(self):
        cleaned = super().clean()
        low, high = cleaned.get("low"), cleaned.get("high")
        if low is not None and high is not None:
            if not (math.isfinite(low) and math.isfinite(high)):
                raise forms.ValidationError("low and high must be finite numbers")
            if low > high:
                raise forms.ValidationError("low must not be above high")
        return cleaned


# ?sort= of the rollouts list: each ends with the primary key, so that pages never overlap.
SORTS = {
    "task": ["task__name", "model__name", "index", "pk"],
    "model": ["model__name", "task__name", "index", "pk"],
    "harness": ["harness__name", "task__name", "index", "pk"],
    "reward": ["reward", "pk"],
    "-reward": ["-reward", "-pk"],
    "started": ["started_at", "pk"],
    "-started": ["-started_at", "-pk"],
    "steps": ["n_steps", "pk"],
    "-steps": ["-n_steps", "-pk"],
    "benchmarks": ["n_benchmark_calls", "pk"],
    "-benchmarks": ["-n_benchmark_calls", "-pk"],
}
OUTCOMES = [value for name, value in vars(Outcome).items() if name.isupper()]
DIGITS = re.compile(r"[0-9]+")


def related(path: str) -> type[Model]:
    """The model at the end of a Rollout relation ("task__version"): the rows a filter names, reached as the
    filter reaches them (and without importing the apps that own them)."""
    model: type[Model] = Rollout
    for name in path.split("__"):
        model = model._meta.get_field(name).related_model
    return model


def shown(value: str) -> str:
    """A refused value as an error message quotes it: not all of a 5,000-character one."""
    return repr(value if len(value) <= 60 else value[:60] + "…")


class IdOrName(forms.CharField):
    """A row of one of a rollout's relations (task, model, harness), by id or by name.

    The pages' selects send ids, people and links between pages write names.
    Cleaned to the rows it names: a task's name is the task in every version,
    a harness's name is every version of the harness.
    """

    def __init__(self, relation: str, **kwargs):
        super().__init__(required=False, **kwargs)
        self.relation = relation

    def clean(self, value) -> QuerySet | None:
        text = super().clean(value)
        if not text:
            return None
        rows = related(self.relation)._default_manager.filter(
            **({"pk": int(text)} if DIGITS.fullmatch(text) else {"name": text})
        )
        if not rows.exists():
            raise forms.ValidationError(f"No {self.relation} has the id or name {shown(text)}.", code="invalid_choice")
        return rows

    def narrow(self, rollouts: QuerySet, rows: QuerySet) -> QuerySet:
        return rollouts.filter(**{f"{self.relation}__in": rows})


class Known(forms.CharField):
    """A value that some row of one of a rollout's relations holds: a version's name, a task's category."""

    def __init__(self, relation: str, field: str, **kwargs):
        super().__init__(required=False, **kwargs)
        self.relation, self.field = relation, field

    def clean(self, value) -> str:
        text = super().clean(value)
        if text and not related(self.relation)._default_manager.filter(**{self.field: text}).exists():
            what = self.relation.rpartition("__")[2]
            raise forms.ValidationError(f"No {what} has the {self.field} {shown(text)}.", code="invalid_choice")
        return text

    def narrow(self, rollouts: QuerySet, text: str) -> QuerySet:
        return rollouts.filter(**{f"{self.relation}__{self.field}": text})


def choices(values, anything: str = "any") -> list[tuple[str, str]]:
    return [("", anything)] + [(value, value) for value in values]


def listed_rows() -> QuerySet[Rollout]:
    """Rollouts with what a list shows of each: task, version, model, harness, label, effective cause.

    A submission held back for review is on no list (trajectories.visibility: staff open it from its record).
    """
    rows = Rollout.objects.filter(held_back=False).select_related("task__version", "model", "harness", "label")
    return with_effective_cause(rows)


class RolloutFilters(FilterForm):
    """The rollouts list's GET parameters, each with the rule that narrows the rows by it (in the page's order)."""

    # Fields of a rollout's relations carry their rule (`narrow`).
    task = IdOrName("task")
    category = Known("task", "category")
    model = IdOrName("model")
    harness = IdOrName("harness")
    version = Known("task__version", "name")

    status = forms.ChoiceField(required=False, choices=[("", "any"), *RolloutStatus.choices])

    def filter_status(self, rollouts: QuerySet, status: str) -> QuerySet:
        return rollouts.filter(status=status)

    outcome = forms.ChoiceField(required=False, choices=choices(OUTCOMES))

    def filter_outcome(self, rollouts: QuerySet, outcome: str) -> QuerySet:
        return rollouts.filter(outcome=outcome)

    # The effective cause: a staff label's, else the classifier's (as the failures page counts them).
    cause = forms.CharField(required=False)

    def clean_cause(self) -> str:
        cause = self.cleaned_data["cause"]
        # A cause an older classifier stored is still a cause some rollout has (the failures matrix links to it).
        if cause and cause not in CAUSES and not self.filter_cause(with_effective_cause(Rollout.objects), cause).exists():
            raise forms.ValidationError(
                f"Unknown cause {shown(cause)}; causes: {', '.join(CAUSES)}.", code="invalid_choice"
            )
        return cause

    def filter_cause(self, rollouts: QuerySet, cause: str) -> QuerySet:
        # The effective cause (a staff label's cause where it has one, else the classifier's) written so
        # that indexes find its rows (failure_cause's, the labels'), not by reading every row's.
        labelled = FailureLabel.objects.exclude(cause="").values("rollout_id")
        unlabelled = Rollout.objects.filter(failure_cause=cause).exclude(pk__in=labelled).values("pk")
        return rollouts.filter(pk__in=labelled.filter(cause=cause).union(unlabelled))

    flag = forms.ChoiceField(
        required=False, choices=choices(FLAGS),
        error_messages={"invalid_choice": f"Unknown flag %(value)s; flags: {', '.join(FLAGS)}."},
    )

    def filter_flag(self, rollouts: QuerySet, flag: str) -> QuerySet:
        # The JSON text of the list holds each flag in quotes: no flag is a part of another.
        return rollouts.filter(behaviour_flags__icontains=f'"{flag}"')

    min = forms.FloatField(required=False)

    def filter_min(self, rollouts: QuerySet, low: float) -> QuerySet:
        return rollouts.filter(reward__gte=low)

    max = forms.FloatField(required=False)

    def filter_max(self, rollouts: QuerySet, high: float) -> QuerySet:
        return rollouts.filter(reward__lte=high)

    # Not a filter: the order of the rows, which every representation honours.
    sort = forms.ChoiceField(required=False, choices=choices(SORTS, "default"))

    def rollouts(self, default_order: Sequence[str] = SORTS["task"]) -> QuerySet[Rollout]:
        """The rollouts the (valid) filters select, in the order asked for, else `default_order`."""
        rows = listed_rows()
        sort = self.cleaned_data.get("sort")
        return self.narrow(rows).order_by(*(SORTS[sort] if sort else default_order))


class FailureFilters(RolloutFilters):
    """The failures page's parameters (its list, matrix and exports): a share of the rollouts list's, same rules.

    The page lists zero-score rollouts by cause, so it has no use for the
    others (`trajectories.failures.service` applies these to its rows). A
    behaviour flag it keeps: a zero whose agent had measured a good score
    (`sealed_below_visible`) is one to read.
    """

    status = None
    outcome = None
    min = None
    max = None
    sort = None

    # A review's verdict, "reward_hacking:fail": rollouts any done review (Harbor's, a judge's) gave that outcome.
    check = forms.CharField(required=False)

    def clean_check(self) -> str:
        text = self.cleaned_data["check"]
        if not text:
            return ""
        name, _, outcome = (part.strip() for part in text.partition(":"))
        outcome = outcome.lower().replace(" ", "_")
        known = check_choices()
        if f"{name}:{outcome}" not in known:
            offered = ", ".join(known) or "none (no rollout has been reviewed)"
            raise forms.ValidationError(
                f"Unknown check {shown(text)}: write name:outcome ({' / '.join(CHECK_OUTCOMES)}); checks: {offered}.",
                code="invalid_choice",
            )
        return f"{name}:{outcome}"

    def filter_check(self, rollouts: QuerySet, check: str) -> QuerySet:
        name, _, outcome = check.partition(":")
        verdicts = ReviewCheck.objects.filter(name=name, outcome=outcome, review__state="done")
        return rollouts.filter(pk__in=verdicts.values("review__rollout_id"))


def check_choices() -> list[str]:
    """Every "name:outcome" some done review gave: what the failures page's check filter offers and accepts."""
    pairs = (
        ReviewCheck.objects.filter(review__state="done").order_by("name", "outcome")
        .values_list("name", "outcome").distinct()
    )
    return [f"{name}:{outcome}" for name, outcome in pairs]

class AnalyseForm(forms.Form):
    """The staff's "Analyse with the judge" button: one rollout, or the failures the page's filters select."""

    judge = forms.ChoiceField(choices=())
    max_tokens = forms.IntegerField(label="token budget", min_value=MIN_BUDGET, max_value=MAX_BUDGET, initial=DEFAULT_BUDGET)
    replace = forms.BooleanField(required=False, help_text="read again what this judge already read")
    rollout = forms.IntegerField(required=False, min_value=1)
    # The failures page's query string: FailureFilters reads it as the page did.
    filters = forms.CharField(required=False, max_length=4000)

    def __init__(self, *args, judges: Sequence[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(name, name) for name in judges]

    def clean_rollout(self) -> Rollout | None:
        pk = self.cleaned_data.get("rollout")
        if pk is None:
            return None
        rollout = Rollout.objects.filter(pk=pk).first()
        if rollout is None:
            raise forms.ValidationError(f"No rollout has the id {pk}.", code="invalid_choice")
        return rollout

    def clean_filters(self) -> FailureFilters | None:
        from django.http import QueryDict

        text = self.cleaned_data.get("filters", "")
        filters = FailureFilters(QueryDict(text))
        if not filters.is_valid():
            errors = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in filters.errors.items())
            raise forms.ValidationError(f"The failures page's filters are not valid ({errors}).")
        return filters


class JudgeOrder(forms.Form):
    """The failures list's order beside its filters: ?order=disagree lists first where the rules and the judge disagree."""

    order = forms.ChoiceField(
        required=False, choices=[("", "the list's order"), ("disagree", "disagreements with the judge first")],
        error_messages={"invalid_choice": "Unknown order %(value)s; orders: disagree."},
    )

    def as_query(self) -> dict[str, str]:
        value = (self.data.get("order") or "").strip()
        return {"order": value} if value else {}


class SearchForm(FilterForm):
    """The site search's GET parameters: the query and the filters that narrow it.

    A bad filter is refused (400, its message above an empty list) as the
    rollouts list refuses one, rather than searching everything unsaid.
    """

    q = forms.CharField(required=False)
    task = forms.IntegerField(required=False, min_value=1)
    model = forms.IntegerField(required=False, min_value=1)
    harness = forms.IntegerField(required=False, min_value=1)
    kind = forms.ChoiceField(
        required=False, choices=choices(STEP_KINDS),
        error_messages={"invalid_choice": f"Unknown step kind %(value)s; kinds: {', '.join(STEP_KINDS)}."},
    )

    def filters(self) -> search.Filters:
        """What the (valid) form narrows the search to."""
        data = self.cleaned_data
        return search.Filters(task=data["task"], model=data["model"], harness=data["harness"], kind=data["kind"])
