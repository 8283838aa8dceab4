"""Task catalogue and task pages: thin views over tasks.services."""
from __future__ import annotations

from dataclasses import replace

from django.shortcuts import get_object_or_404, render

from evaluations.leaderboard import task_results
from trajectories.services import anchors_in_use

from .models import Task
from .rendering import render_markdown
from .scoring import describe_rule
from .services import HARDWARE_CHOICES, catalogue_choices, catalogue_tasks, task_spec


def catalogue(request):
    """Every task, filtered by GET parameters (works without JavaScript)."""
    filters = {
        "category": request.GET.get("category", "").strip(),
        "version": request.GET.get("version", "").strip(),
        "hardware": request.GET.get("hardware", "").strip(),
    }
    tasks = catalogue_tasks(**filters)
    context = {
        "nav": "tasks",
        "tasks": tasks,
        "filters": filters,
        "filtered": any(filters.values()),
        "hardware_choices": HARDWARE_CHOICES,
        **catalogue_choices(),
    }
    return render(request, "tasks/catalogue.html", context)


def detail(request, version: str, name: str):
    task = get_object_or_404(Task.objects.select_related("version"), version__name=version, name=name)
    spec = task_spec(task)
    in_use = anchors_in_use(task)
    verifier = next((u.anchors for u in in_use if u.anchors.status == "reproduced"), None)
    context = {
        "nav": "tasks",
        "task": task,
        "instruction_html": render_markdown(task.instruction),
        "rule_text": describe_rule(spec),
        # What the verifier scored with, when its rewards show other anchors than task.toml's.
        "verifier_rule_text": describe_rule(replace(spec, baseline_score=verifier.baseline, reference_score=verifier.reference))
        if verifier and verifier.differ_from_task
        else "",
        "anchors_in_use": in_use,
        "n_rollouts": sum(u.n for u in in_use),
        "revisions": task.revisions.all()[:20],
        "other_versions": Task.objects.filter(name=task.name).exclude(pk=task.pk).select_related("version"),
        # Per-model results on this task, filled by the leaderboard (evaluations app).
        "task_results": task_results(task),
    }
    return render(request, "tasks/detail.html", context)
