from django.shortcuts import render

from .models import Rollout


def rollout_list(request):
    rollouts = Rollout.objects.select_related("task", "model", "harness")[:200]
    return render(request, "trajectories/rollout_list.html", {"rollouts": rollouts})


def failures(request):
    return render(request, "trajectories/failures.html", {})
