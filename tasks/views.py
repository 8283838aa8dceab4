from django.shortcuts import get_object_or_404, render

from evaluations.leaderboard import task_results

from .models import Task


def catalogue(request):
    tasks = Task.objects.select_related("version").all()
    return render(request, "tasks/catalogue.html", {"tasks": tasks})


def detail(request, version: str, name: str):
    task = get_object_or_404(Task.objects.select_related("version"), version__name=version, name=name)
    return render(request, "tasks/detail.html", {"task": task, "task_results": task_results(task)})
