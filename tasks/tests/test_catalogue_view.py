"""The task catalogue at /tasks/."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tasks.models import BenchmarkVersion, Task

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue_tasks():
    v10 = BenchmarkVersion.objects.create(name="1.0", clip_rewards=False)
    v11 = BenchmarkVersion.objects.create(name="1.1")
    common = dict(metric="runtime_seconds", direction="lower", cpus=2, memory_mb=4096)
    Task.objects.create(
        version=v11, name="flash_attention", category="system_optimization", baseline_score=0.75,
        reference_score=0.1, budget_sec=7200, **common,
    )
    Task.objects.create(version=v10, name="flash_attention", category="system_optimization", budget_sec=7200, **common)
    Task.objects.create(
        version=v11, name="ntt_butterfly_cuda", category="cuda", metric="runtime_ms", direction="lower",
        gpus=1, gpu_type="H100", budget_sec=7200, memory_mb=8192, cpus=2,
    )
    Task.objects.create(
        version=v11, name="scaling_law", category="model_development", metric="perplexity", direction="lower",
        gpus=1, gpu_type="H100", budget_sec=43200, memory_mb=32768, cpus=8,
    )
    Task.objects.create(version=v11, name="odd_one", category="robotics", metric="m", direction="higher")


def names(response) -> list[str]:
    return sorted(f"{t.name}@{t.version.name}" for t in response.context["tasks"])


def test_lists_every_task_with_anchors_budget_and_resources(client, catalogue_tasks):
    response = client.get(reverse("tasks:catalogue"))
    assert response.status_code == 200
    assert response.context["nav"] == "tasks"
    html = response.content.decode()
    assert len(response.context["tasks"]) == 5
    assert "0.75 → 0.1" in html
    assert "12 h" in html and "2 h" in html
    assert "1 × H100" in html
    assert "32 GB" in html
    assert 'href="/tasks/1.1/flash_attention/"' in html and 'href="/tasks/1.0/flash_attention/"' in html
    assert 'title="robotics">Robotics</span>' in html  # an unknown category made readable, its id on hover
    assert 'title="cuda">CUDA</span>' in html
    assert 'aria-current="page"' in html


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"category": "cuda"}, ["ntt_butterfly_cuda@1.1"]),
        ({"version": "1.0"}, ["flash_attention@1.0"]),
        ({"hardware": "gpu"}, ["ntt_butterfly_cuda@1.1", "scaling_law@1.1"]),
        ({"hardware": "cpu", "version": "1.1"}, ["flash_attention@1.1", "odd_one@1.1"]),
        ({"category": "system_optimization", "version": "1.1"}, ["flash_attention@1.1"]),
        ({"category": "nonexistent"}, []),
        ({"hardware": "bogus"}, ["flash_attention@1.0", "flash_attention@1.1", "ntt_butterfly_cuda@1.1", "odd_one@1.1", "scaling_law@1.1"]),
    ],
)
def test_filters(client, catalogue_tasks, params, expected):
    response = client.get(reverse("tasks:catalogue"), params)
    assert names(response) == expected


def test_filter_form_keeps_selection_and_offers_choices(client, catalogue_tasks):
    html = client.get(reverse("tasks:catalogue"), {"category": "cuda", "hardware": "gpu"}).content.decode()
    assert '<option value="cuda" selected>CUDA</option>' in html
    assert '<option value="gpu" selected>needs a GPU</option>' in html
    assert '<option value="1.0">v1.0</option>' in html
    assert "clear filters" in html


def test_empty_states(client, catalogue_tasks):
    html = client.get(reverse("tasks:catalogue"), {"category": "nonexistent"}).content.decode()
    assert "No task matches these filters." in html
    Task.objects.all().delete()
    html = client.get(reverse("tasks:catalogue")).content.decode()
    assert "No tasks imported yet" in html
