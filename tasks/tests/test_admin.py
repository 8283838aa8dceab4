"""The Django admin pages for versions, tasks and revisions."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tasks.models import Task, TaskRevision
from tasks.services import import_tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_superuser("admin", "admin@example.org", "pw-for-tests")
    client.force_login(user)
    return client


def test_admin_lists_and_filters(staff_client, make_task):
    import_tasks(make_task("toy"), version="1.1")
    task = Task.objects.get()
    pages = [
        (reverse("admin:tasks_benchmarkversion_changelist"), {}),
        (reverse("admin:tasks_task_changelist"), {"version__id__exact": task.version_id}),
        (reverse("admin:tasks_task_changelist"), {"category": "system_optimization"}),
        (reverse("admin:tasks_task_change", args=[task.pk]), {}),
        (reverse("admin:tasks_taskrevision_changelist"), {"task__version__id__exact": task.version_id}),
        (reverse("admin:tasks_taskrevision_change", args=[TaskRevision.objects.get().pk]), {}),
    ]
    for url, params in pages:
        response = staff_client.get(url, params)
        assert response.status_code == 200, url
    changelist = staff_client.get(reverse("admin:tasks_task_changelist"), {"category": "cuda"}).content.decode()
    assert "0 tasks" in changelist
