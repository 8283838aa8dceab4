"""The task page at /tasks/<version>/<name>/: the task's definition (tasks) with the results on it (the leaderboard's)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tasks.models import BenchmarkVersion, Task
from tasks.rendering import render_markdown
from tasks.services import import_tasks

from tasks.tests.conftest import GOOD_TOML, write_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def make_task(tmp_path):
    return lambda name="toy", **kwargs: write_task(tmp_path / "tasks", name, **kwargs)


def url(task: Task) -> str:
    return reverse("evaluations:task_detail", args=[task.version.name, task.name])


def test_shows_anchors_rule_resources_and_revisions(client, make_task):
    folder = make_task("toy")
    import_tasks(folder, version="1.1")
    (folder / "task.toml").write_text(GOOD_TOML.format(domain="system_optimization", baseline=3.0))
    import_tasks(folder, version="1.1")
    task = Task.objects.get()
    response = client.get(url(task))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<code id="task-metric">runtime_seconds</code>' in html
    assert '<dd id="task-direction">lower is better</dd>' in html
    assert '<span id="task-baseline">3</span>' in html
    assert '<span id="task-reference">0.5</span>' in html
    assert "Log-stretch (the default for system_optimization tasks)" in html
    assert "Rewards are clipped to [0, 1]." in html
    assert '<dd id="task-budget">10 min</dd>' in html
    assert "512 MB" in html
    assert task.checksum in html
    # Harbor's digest, short, the whole on hover (what a submitted trial's lock.json must record).
    assert f'<code id="task-harbor-digest" title="sha256:{task.harbor_digest}">sha256:{task.harbor_digest[:12]}</code>' in html
    assert "<code>baseline_score</code>" in html  # the second revision's change
    assert "first import" in html
    assert '<section id="results">' in html
    assert 'title="system_optimization">System optimization</span>' in html  # its label, the id on hover
    assert "<code>python3 /app/bench.py</code>" in html  # instruction rendered from Markdown


@pytest.mark.shared
def test_shared_task_page(client, shared_tasks_dir):
    import_tasks(shared_tasks_dir, version="1.1")
    task = Task.objects.get(name="flux2_klein_lora")
    html = client.get(url(task)).content.decode()
    assert "composite_quality" in html and "higher is better" in html
    assert "Anchored linear" in html
    assert "1 × L40S" in html
    assert "max_train_hours" in html  # constraints
    assert "model_version, train_batch_size" in html  # search space list
    assert "musubi-tuner" in html


def test_unknown_task_is_404(client):
    BenchmarkVersion.objects.create(name="1.1")
    assert client.get(reverse("evaluations:task_detail", args=["1.1", "missing"])).status_code == 404
    assert client.get(reverse("evaluations:task_detail", args=["9.9", "missing"])).status_code == 404


def test_links_other_versions(client):
    v10 = BenchmarkVersion.objects.create(name="1.0")
    v11 = BenchmarkVersion.objects.create(name="1.1")
    Task.objects.create(version=v10, name="hash_join", metric="runtime_seconds", direction="lower")
    task = Task.objects.create(version=v11, name="hash_join", metric="runtime_seconds", direction="lower")
    html = client.get(url(task)).content.decode()
    assert 'href="/tasks/1.0/hash_join/"' in html


HOSTILE = """# Task

<script>alert('x')</script>

[click](javascript:alert(1))

<a href="javascript:alert(2)" onclick="steal()">also</a>
<img src="http://example.com/x.png" onerror="alert(3)">
<iframe src="http://example.com"></iframe>
<p style="color:red" onmouseover="alert(4)">text</p>

| a | b |
|---|---|
| 1 | 2 |
"""


@pytest.mark.parametrize("needle", ["<script", "javascript:", "onclick", "onerror", "onmouseover", "<img", "<iframe", "alert(", "style="])
def test_instruction_markdown_is_sanitised(needle):
    assert needle not in render_markdown(HOSTILE).lower()


def test_instruction_markdown_keeps_structure():
    html = render_markdown(HOSTILE + "\n```\nmake && ./attn\n```\n")
    assert "<h1>Task</h1>" in html
    assert "<table>" in html and "<td>1</td>" in html
    assert "<pre><code>make &amp;&amp; ./attn\n</code></pre>" in html


def test_hostile_instruction_on_the_page(client):
    version = BenchmarkVersion.objects.create(name="1.1")
    task = Task.objects.create(version=version, name="evil", instruction=HOSTILE, metric="m", direction="higher")
    html = client.get(url(task)).content.decode()
    assert "<script>alert" not in html
    assert "javascript:" not in html
    assert "onclick" not in html


def test_the_servers_path_is_shown_to_staff_only(client, make_task, django_user_model):
    folder = make_task("toy")
    import_tasks(folder, version="1.1")
    task = Task.objects.get()
    assert task.source_path and str(folder) in task.source_path
    public = client.get(url(task)).content.decode()
    assert task.source_path not in public and "imported from" not in public
    assert task.checksum in public
    client.force_login(django_user_model.objects.create_user("staff", password="pw", is_staff=True))
    assert task.source_path in client.get(url(task)).content.decode()
