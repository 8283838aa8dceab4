"""Words a visitor or staff member reads: no raw plural made by adding an "s", no link they cannot follow."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model

PROJECT_APPS = ("agents", "tasks", "trajectories", "evaluations", "submissions")


def test_every_model_has_a_real_plural():
    """The admin's index said "Harnesss" and "Sub trajectorys"."""
    wrong = {
        model._meta.label: str(model._meta.verbose_name_plural)
        for model in apps.get_models()
        if model._meta.app_label in PROJECT_APPS
        and str(model._meta.verbose_name_plural).endswith(("ss", "ys", "chs", "shs", "xs"))
    }
    assert wrong == {}
    assert str(apps.get_model("trajectories", "SubTrajectory")._meta.verbose_name_plural) == "subtrajectories"


@pytest.mark.django_db
def test_the_admin_link_is_shown_to_staff_only(client):
    """The nav showed "Admin" to anonymous visitors, who could only meet a login page there."""
    assert ">Admin</a>" not in client.get("/tasks/").content.decode()
    user = get_user_model().objects.create_user("reader", password="x")
    client.force_login(user)
    assert ">Admin</a>" not in client.get("/tasks/").content.decode()
    user.is_staff = True
    user.save()
    assert ">Admin</a>" in client.get("/tasks/").content.decode()
