"""The submission form a team member fills in, and staff's reject form."""
from __future__ import annotations

from django import forms

from evaluations.forms import RegradeForm as RolloutRegradeForm
from tasks.models import BenchmarkVersion
from trajectories.upload_views import UploadForm, safe_file_name

from submissions.models import Team


class SubmissionForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    version = forms.ModelChoiceField(queryset=BenchmarkVersion.objects.filter(demo=False), to_field_name="name")
    model_name = forms.CharField(max_length=200, label="Model", help_text='as its provider names it, e.g. "anthropic/claude-opus-4.6"')
    harness_name = forms.CharField(max_length=200, label="Harness", help_text='e.g. "terminus-2"')
    harness_version = forms.CharField(max_length=100, required=False, label="Harness version")
    contact = forms.CharField(max_length=300, help_text="an e-mail address staff can write to")
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    archive = UploadForm.base_fields["archive"]

    def __init__(self, *args, teams=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = Team.objects.filter(pk__in=[t.pk for t in teams])
        if len(teams) == 1:
            self.fields["team"].initial = teams[0].pk
        self.fields["archive"].help_text = "A Harbor job folder as a .tar.gz, .tgz, .tar or .zip archive."

    # The staff upload's checks of the archive: suffix, size limit, and bytes of the kind the name says.
    clean_archive = UploadForm.clean_archive

    def file_name(self) -> str:
        return safe_file_name(self.cleaned_data["archive"].name)


class RejectForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=5000)


class RegradeForm(RolloutRegradeForm):
    """How many trials per task, and on which sandbox backend: a submitted rollout has no campaign, so its own
    is bubblewrap, which cannot build a task whose Dockerfile installs packages."""

    per_task = forms.IntegerField(min_value=1, max_value=20, initial=1, label="Trials per task")
    field_order = ["per_task", "backend"]
