"""Which benchmark version a newcomer lands on: the newest real one with results."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluations.boards import queries
from agents.models import AgentModel
from tasks.models import BenchmarkVersion, Task
from tasks.services import ensure_version

from evaluations.tests.board_factories import build_boards, make_rollout

pytestmark = pytest.mark.django_db


def rollouts_on(version: BenchmarkVersion, world, n: int) -> None:
    task = Task.objects.create(version=version, name=f"task-of-{version.name}", category="alpha")
    model = AgentModel.objects.create(name=f"model-of-{version.name}")
    for index in range(n):
        make_rollout(task, model, world["harness"], 0.5, index=index)


def test_the_example_tasks_with_more_rollouts_are_not_the_default(client, world):
    examples = ensure_version("examples", benchmark="autolab-site", demo=True)
    rollouts_on(examples, world, 60)  # more than the 33 + 4 of version 1.1
    build_boards(world["version"])
    assert queries.default_version() == world["version"]
    response = client.get(reverse("evaluations:leaderboard"))
    assert response.context["data"].version.name == "1.1"


def test_synthetic_data_is_not_the_default(client, world):
    call_command("generate_synthetic", "--entries", "2", "--tasks", "4", "--rollouts", "1", "--steps", "0", stdout=open("/dev/null", "w"))
    assert BenchmarkVersion.objects.get(name="synthetic").demo
    assert queries.default_version() == world["version"]


@pytest.mark.parametrize("page", ["evaluations:leaderboard", "evaluations:heatmap"])
def test_the_version_shown_is_the_one_chosen_in_its_filter(client, world, page):
    """A version with tasks but no results yet was shown and missing from the version list: the browser
    showed the first version chosen, and Apply (a category, say) switched version without a word."""
    import re

    empty = ensure_version("rebench-examples", benchmark="re-bench", demo=True)
    Task.objects.create(version=empty, name="window_sums", category="optimize_kernel")
    build_boards(empty)
    html = client.get(reverse(page), {"version": "rebench-examples"}).content.decode()
    select = re.search(r'<select name="version">(.*?)</select>', html, re.S).group(1)
    assert re.findall(r'<option value="([^"]+)" selected>', select) == ["rebench-examples"]
    assert '<option value="1.1"' in select


def test_the_newest_release_wins_whatever_the_import_order(world):
    rollouts_on(ensure_version("1.0"), world, 50)
    assert queries.default_version().name == "1.1"
    rollouts_on(ensure_version("1.10"), world, 1)
    assert queries.default_version().name == "1.10"  # 1.10 is newer than 1.9 and 1.1


def test_only_demo_content_still_gets_a_board(client):
    version = ensure_version("examples", benchmark="autolab-site", demo=True)
    from agents.models import Harness

    rollouts_on(version, {"harness": Harness.objects.create(name="oracle")}, 2)
    assert queries.default_version() == version


@pytest.mark.parametrize(
    "names, newest_first",
    [
        (["1.0", "1.1", "1.10", "1.9", "2.0"], ["2.0", "1.10", "1.9", "1.1", "1.0"]),
        (["v1.1", "1.0"], ["v1.1", "1.0"]),
        (["examples", "1.1", "synthetic"], ["1.1", "synthetic", "examples"]),
    ],
)
def test_release_order(names, newest_first):
    assert sorted(names, key=queries.release_key, reverse=True) == newest_first
