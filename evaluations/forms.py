"""The boards' GET filters: the leaderboard, the heatmap, and the API's leaderboard, heatmap and time curves.

A board is computed for a version, a harness and a choice of weights
(`serving.board`) and shown for one category, so these filters narrow
no queryset: their cleaned values are the board's arguments. Pages and API
read them here alone, so a query string means one board everywhere.
"""
from __future__ import annotations

from django import forms

from autolab_site.filters import FilterForm
from tasks.models import BenchmarkVersion
from trajectories.forms import Known

from evaluations.boards import queries
from agents.models import Harness

WEIGHTS = {"1": True, "true": True, "0": False, "false": False}
# The leaderboard's origin filter: any, our own runs, or a team's submission by its mark (submissions.states.MARKS).
ORIGINS = ("", "ours", "verified", "self_reported")


class BoardFilters(FilterForm):
    """version: a version name (default: the newest release with results); harness: a harness id; category:
    a task category; open_weight: 1/true or 0/false."""

    version = forms.CharField(required=False)
    harness = forms.ModelChoiceField(
        Harness.objects.all(), required=False, error_messages={"invalid_choice": "No harness has the id %(value)s."}
    )
    category = Known("task", "category")
    open_weight = forms.CharField(required=False)

    def clean_version(self) -> BenchmarkVersion | None:
        name = self.cleaned_data["version"]
        if not name:
            # None asked for: the newest release with results (None when there is no version at all).
            return queries.default_version()
        version = BenchmarkVersion.objects.filter(name=name).first()
        if version is None:
            raise forms.ValidationError(f"no benchmark version {name!r}", code="invalid_choice")
        return version

    def clean_harness(self) -> int | None:
        harness = self.cleaned_data["harness"]
        return harness.pk if harness else None

    def clean_category(self) -> str | None:
        # Any version's category: one the version shown lacks is shown as all tasks (the link kept it
        # while another version was chosen).
        return self.cleaned_data["category"] or None

    def clean_open_weight(self) -> bool | None:
        value = self.cleaned_data["open_weight"].lower()
        if value and value not in WEIGHTS:
            raise forms.ValidationError("1 or true: open-weight models only; 0 or false: the others.", code="invalid")
        return WEIGHTS.get(value)

    def missing_version(self) -> str | None:
        """Why there is no page when `version` names no version: a 404 (a missing page), not a bad request."""
        return self.errors["version"][0] if self.has_error("version", "invalid_choice") else None


class HeatmapFilters(BoardFilters):
    """The heatmap's own parameters beside the board's: order ("score", "task" or an entry's key: read
    against the board, an unknown key orders by score) and columns, the page of entries shown
    (HEATMAP_COLUMNS at a time, from the best Avg@k): a 100-entry board is four light pages, not one
    page of 3,600 cells."""

    order = forms.CharField(required=False)
    columns = forms.IntegerField(required=False, min_value=1, error_messages={"invalid": "columns is a page number: 1, 2, ..."})

    def clean_order(self) -> str:
        return self.cleaned_data["order"] or "score"

    def clean_columns(self) -> int:
        return self.cleaned_data["columns"] or 1


class LeaderboardFilters(BoardFilters):
    """The leaderboard's page of entries beside the board's filters: `entries`, LEADERBOARD_ROWS at a time in
    the order asked for (?sort=, read by sorting.parse_sort); its charts still draw every entry."""

    entries = forms.IntegerField(required=False, min_value=1, error_messages={"invalid": "entries is a page number: 1, 2, ..."})
    # Where an entry's results come from: our own runs, or a team's published submission by its mark.
    origin = forms.ChoiceField(required=False, choices=[(o, o) for o in ORIGINS])

    def clean_entries(self) -> int:
        return self.cleaned_data["entries"] or 1

    def clean_origin(self) -> str:
        return self.cleaned_data["origin"]


def from_origin(entry, origin: str) -> bool:
    """Whether a board entry comes from `origin` ("" any, "ours", "verified", "self_reported")."""
    if not origin:
        return True
    if origin == "ours":
        return not entry.submission_mark
    return entry.submission_mark == origin


class RegradeForm(forms.Form):
    """A staff regrade request (evaluations.regrades.regrade): on which sandbox backend; none: each rollout's own."""

    backend = forms.ChoiceField(required=False, choices=[("", "the rollout's own")])

    def __init__(self, *args, **kwargs):
        from evaluations.sandbox.backends import BACKENDS

        super().__init__(*args, **kwargs)
        self.fields["backend"].choices = [("", "the rollout's own"), *((name, b.label) for name, b in BACKENDS.items())]


class CompareForm(BoardFilters):
    """The compare view's GET parameters beside the board's filters: a and b, two entries' keys (a board
    entry's, or "published:" and a published entry's). Read against the board (`entries`): an unknown key is
    the form's error, and a missing one is the board's first (or second) compared entry."""

    a = forms.CharField(required=False)
    b = forms.CharField(required=False)

    def entries(self, known: dict, defaults: list[str]) -> tuple[str, str] | None:
        """(a, b) when both name known entries (or default to them); None, with the form's errors, when not."""
        fallback = [key for key in [*defaults, *known] if key]
        chosen = {}
        for field, place in (("a", 0), ("b", 1)):
            key = self.cleaned_data.get(field) or ""
            if key and key not in known:
                self.add_error(field, f"no entry {key!r} with a counted score on this board")
                continue
            others = [k for k in dict.fromkeys(fallback) if k != chosen.get("a")]
            chosen[field] = key or (others[0] if others else "")
        if self.errors or not chosen.get("a") or not chosen.get("b"):
            return None  # a bad key (the form's error), or fewer than two entries on the board (no error: nothing to compare)
        return chosen["a"], chosen["b"]
