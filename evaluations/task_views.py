"""A task's page: its definition (the tasks app), the anchors its rollouts used and the results on it."""
from __future__ import annotations

from dataclasses import replace

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from tasks.models import Task
from tasks.rendering import render_markdown
from tasks.scoring import describe_rule
from tasks.services import task_spec
from trajectories.services import anchors_in_use

from evaluations.boards.queries import task_results


def task_detail(request: HttpRequest, version: str, name: str) -> HttpResponse:
    """A task: its instruction, scoring rule and the anchors its verifier used, and every entry's results on it."""
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
        "task_results": task_results(task),
    }
    return render(request, "evaluations/task_detail.html", context)
