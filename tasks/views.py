"""The task catalogue: a thin view over tasks.services.

A task's own page shows the results on it too, so it is the leaderboard's
(evaluations.task_views), above the apps it draws on.
"""
from __future__ import annotations

from django.shortcuts import render

from .services import HARDWARE_CHOICES, catalogue_choices, catalogue_tasks


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
