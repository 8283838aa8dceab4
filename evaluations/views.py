from django.shortcuts import render


def leaderboard(request):
    return render(request, "evaluations/leaderboard.html", {})
