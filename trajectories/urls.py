from django.urls import path

from . import views

app_name = "trajectories"

urlpatterns = [
    path("rollouts/", views.rollout_list, name="rollout_list"),
    path("failures/", views.failures, name="failures"),
]
