"""Teams from outside, their submissions, and each submission's history of state changes.

Written only by `submissions.services` (one function per change, each
adding a `SubmissionEvent`); the states and their changes are
`submissions.states`'.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

from submissions import states


class Team(models.Model):
    """A submitting team: its members (site accounts) upload submissions and see their own, nothing more."""

    name = models.CharField(max_length=200, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Submission(models.Model):
    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="submissions")
    version = models.ForeignKey("tasks.BenchmarkVersion", on_delete=models.PROTECT, related_name="submissions")
    model_name = models.CharField(max_length=200)
    harness_name = models.CharField(max_length=200)
    harness_version = models.CharField(max_length=100, blank=True)
    contact = models.CharField(max_length=300)
    note = models.TextField(blank=True)
    file_name = models.CharField(max_length=300)
    size = models.BigIntegerField(default=0)
    # Stored names, shown by their labels ("failed_checks" as "failed checks").
    state = models.CharField(max_length=20, choices=list(states.LABELS.items()), default=states.RECEIVED)
    # The automatic checks: [{"name", "passed", "reason"}], as submissions.checks.CheckResult.as_dict().
    checks = models.JSONField(default=list, blank=True)
    # The rollouts its import made (held back until published), and the reward each came with.
    rollout_ids = models.JSONField(default=list, blank=True)
    submitted_rewards = models.JSONField(default=dict, blank=True)  # str(rollout id) -> reward
    # Staff's regrade of a sample: {str(rollout id): {"submitted", "regraded", "agrees"}} once read.
    regrade = models.JSONField(default=dict, blank=True)
    mark = models.CharField(max_length=20, blank=True, choices=list(states.MARKS.items()))
    # Its check runs on a worker (submissions.tasks): the message reached the broker, and when a worker took it.
    sent = models.BooleanField(default=False)
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"submission {self.pk}: {self.model_name} / {self.harness_name} ({self.state})"

    @property
    def failed_checks(self) -> list[dict]:
        return [c for c in self.checks if not c.get("passed")]


class SubmissionEvent(models.Model):
    """One change of a submission's state: from, to, by whom, why."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="events")
    from_state = models.CharField(max_length=20, blank=True)
    to_state = models.CharField(max_length=20)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
