from django.urls import path

from . import views

app_name = "evaluations"

urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
]
