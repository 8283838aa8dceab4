"""The per-task heatmap page (/heatmap/)."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluations.tests.board_factories import build_boards

pytestmark = pytest.mark.django_db


def task_order(html: str) -> list[str]:
    table = html.split('id="heatmap-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a>', table)


def test_cells_link_to_the_rollouts_of_that_entry_on_that_task(client, world):
    response = client.get(reverse("evaluations:heatmap"))
    assert response.status_code == 200
    html = response.content.decode()
    t3, a = world["tasks"]["t3"], world["models"]["A"]
    link = f'/rollouts/?task={t3.id}&amp;model={a.id}&amp;harness={world["harness"].id}'
    assert link in html
    cell = html.split(link, 1)[1][:400]
    # Hover: Avg, Best and each counted rollout's score.
    assert "Avg 0.700" in cell and "Best 0.900" in cell and "0.600, 0.600, 0.900" in cell
    assert '>0.700</a>' in cell


def test_missing_and_infra_cells_are_marked(client, world):
    html = client.get(reverse("evaluations:heatmap")).content.decode()
    t4, a = world["tasks"]["t4"], world["models"]["A"]
    link = f'/rollouts/?task={t4.id}&amp;model={a.id}&amp;harness={world["harness"].id}'
    cell = html.split(link, 1)[1][:300]
    assert "infrastructure error" in cell
    assert "*" in cell.split("</a>")[0]


def test_rows_grouped_by_category_and_sortable(client, world):
    html = client.get(reverse("evaluations:heatmap")).content.decode()
    assert task_order(html) == ["t1", "t2", "t3", "t4"]
    assert 'class="category-row"' in html and ">Alpha<" in html and ">Beta<" in html  # ids shown as labels
    c_key = f"m{world['models']['C'].id}-h{world['harness'].id}"
    html = client.get(reverse("evaluations:heatmap"), {"order": c_key}).content.decode()
    # By C's score within each category: alpha t2 (.2) before t1 (0); beta t3 (.7) before t4 (.2).
    assert task_order(html) == ["t2", "t1", "t3", "t4"]


def test_columns_follow_avg_and_filters(client, world):
    response = client.get(reverse("evaluations:heatmap"))
    assert [e.model for e in response.context["entries"]] == ["model-b", "model-a", "model-c"]
    rows = response.context["rows"]
    assert [r["task"].name for r in rows] == ["t1", "t2", "t3", "t4"]
    assert [c["cell"].avg if c["cell"] else None for c in rows[0]["cells"]] == pytest.approx([0.5, 0.5, 0.0])
    # The heatmap is drawn on the server, no chart script: one script swaps a new order in (board_swap.js),
    # one names a cell's entry and task on hover (cell_titles.js); every page's says when a table scrolls.
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', response.content.decode())
    assert scripts == ["/static/js/scroll_hint.js", "/static/js/board_swap.js", "/static/js/cell_titles.js"]
    assert "plotly" not in response.content.decode()
    build_boards(world["version"], open_weight=False)
    response = client.get(reverse("evaluations:heatmap"), {"category": "beta", "open_weight": "0"})
    # Columns by the category's Avg@k: C (.45) before A (.35).
    assert [e.model for e in response.context["entries"]] == ["model-c", "model-a"]
    assert task_order(response.content.decode()) == ["t3", "t4"]


def test_empty_site(client):
    assert "No results yet" in client.get(reverse("evaluations:heatmap")).content.decode()


def test_tasks_ordered_by_mean_score_within_their_category(client, world):
    # A fourth entry that does best on t2 lifts t2 above t1 in the default order.
    from agents.models import AgentModel

    from evaluations.tests.board_factories import make_rollout

    strong = AgentModel.objects.create(name="strong-on-t2")
    make_rollout(world["tasks"]["t2"], strong, world["harness"], 1.0)
    build_boards(world["version"])
    response = client.get(reverse("evaluations:heatmap"))
    rows = response.context["rows"]
    # alpha: t1 (.5 + .5 + 0 + 0) / 4 = .25, t2 (.2 + .1 + .2 + 1) / 4 = .375.
    assert [r["task"].name for r in rows] == ["t2", "t1", "t3", "t4"]
    assert rows[0]["mean"] == pytest.approx(0.375)
    assert task_order(client.get(reverse("evaluations:heatmap"), {"order": "task"}).content.decode()) == ["t1", "t2", "t3", "t4"]


def test_a_clipped_reward_is_shown_as_written_and_marked_where_the_board_clips_it(client):
    """A verifier wrote 1.0711 on a version that clips: the board counts 1.0 and every page says so."""
    from trajectories.tests import factories

    task = factories.make_task("lora", direction="higher", baseline_score=0.0, reference_score=0.88)
    rollout = factories.make_rollout(task, status="finished", reward=1.0711, verifier_fields={"reward": 1.0711})
    build_boards()
    heat = client.get(reverse("evaluations:heatmap")).content.decode()
    cell = heat.split(f"/rollouts/?task={task.id}", 1)[1][:400]
    assert ">1.000†</a>" in cell and "1 reward(s) above 1 counted as 1.0" in cell
    assert "† a verifier's reward above 1 counts as 1.0" in heat
    assert "* an infrastructure error" not in heat  # no cell has a star: no footnote about one
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    assert "counted as 1.0: this version clips rewards to [0, 1]" in page and "1.0711" in page
    (record,) = client.get(f"/api/v1/rollouts/?task={task.id}").json()["results"]
    assert (record["reward"], record["score"], record["clipped"]) == (1.0711, 1.0, True)


@pytest.mark.parametrize("n_entries, number, expected", [
    (0, 1, (1, 1, 0, 0, None, None)),
    (10, 1, (1, 1, 10, 10, None, None)),
    (25, 1, (1, 1, 25, 25, None, None)),
    (26, 1, (1, 1, 25, 26, None, 2)),
    (26, 2, (2, 26, 26, 26, 1, None)),
    (100, 3, (3, 51, 75, 100, 2, 4)),
    (100, 4, (4, 76, 100, 100, 3, None)),
    (100, 9, (4, 76, 100, 100, 3, None)),  # past the end: the last page
])
def test_column_pages(n_entries, number, expected):
    from evaluations.views import HEATMAP_COLUMNS, entry_page

    page = entry_page(n_entries, number, HEATMAP_COLUMNS)
    assert (page.number, page.first, page.last, page.total, page.previous, page.next) == expected
    assert page.paged == (n_entries > 25)


def hundred_entries(n_entries: int = 100) -> dict:
    """100 entries x 36 tasks x 1 rollout, written in bulk (the scale the heatmap must stay light at)."""
    from agents.models import AgentModel, Harness
    from evaluations.boards import invalidation
    from tasks.models import BenchmarkVersion, Task
    from trajectories.models import Rollout

    version = BenchmarkVersion.objects.create(name="big", clip_rewards=True)
    categories = ("alpha", "beta", "gamma", "delta")
    tasks = Task.objects.bulk_create(
        Task(version=version, name=f"task-{t:02d}", category=categories[t % 4], budget_sec=3600) for t in range(36)
    )
    harness = Harness.objects.create(name="terminus-2", version="2.0.0")
    models = AgentModel.objects.bulk_create(AgentModel(name=f"model-{m:03d}") for m in range(n_entries))
    Rollout.objects.bulk_create(
        Rollout(task=task, model=model, harness=harness, trial_name=f"t{m}-{t}", status="finished",
                reward=((m * 7 + t * 13) % 100) / 100)
        for m, model in enumerate(models) for t, task in enumerate(tasks)
    )
    invalidation.invalidate()
    return {"version": version, "models": models}


def element_count(html: str) -> int:
    from html.parser import HTMLParser

    class Counter(HTMLParser):
        n = 0

        def handle_starttag(self, tag, attrs):
            self.n += 1

    counter = Counter()
    counter.feed(html)
    return counter.n


def test_a_hundred_entry_heatmap_comes_in_light_pages_in_one_task_order(client):
    build_boards(hundred_entries()["version"])
    url = reverse("evaluations:heatmap")
    pages = [client.get(url, {"version": "big", "columns": n}) for n in (1, 2, 3, 4)]
    assert [p.status_code for p in pages] == [200] * 4
    htmls = [p.content.decode() for p in pages]
    entries = [re.findall(r'<span class="model">([^<]+)</span>', html.split('id="heatmap-table"', 1)[1]) for html in htmls]
    assert [len(e) for e in entries] == [25, 25, 25, 25]
    assert len({name for page in entries for name in page}) == 100  # every entry on exactly one page
    assert len({tuple(task_order(html)) for html in htmls}) == 1 and len(task_order(htmls[0])) == 36
    assert "Entries 26–50 of 100" in htmls[1] and "columns=1" in htmls[1] and "columns=3" in htmls[1]
    for html in htmls:
        assert len(html.encode()) <= 250_000
        assert element_count(html) <= 2_500
    # Ordered by one entry's score, the page of that entry keeps the order it was asked for.
    last = entries[3][0]
    key = re.search(r'order=(m\d+-h\d+)"[^>]*title="order tasks by this entry\'s score"><span class="model">' + re.escape(last), htmls[3]).group(1)
    assert client.get(url, {"version": "big", "columns": 4, "order": key}).status_code == 200


# The longest model name in the shared AutoLab trials' configs (../shared/autolab/trials), provider included:
# longer than the site stores it ("xai-grok-4-20-reasoning"), as some models' own names are.
REAL_LONG_NAME = "openai/xai-grok-4-20-reasoning-"


def test_a_heatmap_page_weighs_the_same_whatever_the_models_are_called(client):
    """A name is in its column's header, not in each of its 36 cells: real models' names (26
    characters for the shared trials' with a number) must not push a page of 25 columns over the
    250 KB it is held to."""
    url = reverse("evaluations:heatmap")
    build_boards(hundred_entries(100)["version"])
    short = client.get(url, {"version": "big"}).content
    from agents.models import AgentModel
    from evaluations.boards import invalidation

    for model in AgentModel.objects.all():
        model.name = model.name.replace("model-", REAL_LONG_NAME)
        model.save()
    invalidation.invalidate()
    build_boards()
    long = client.get(url, {"version": "big"}).content
    assert long.count(REAL_LONG_NAME.encode()) == 25  # each column's header
    assert len(long) - len(short) == 25 * (len(REAL_LONG_NAME) - len("model-"))
    assert len(long) <= 250_000


@pytest.mark.parametrize("columns", ["0", "x", "-1"])
def test_a_bad_page_of_entries_is_a_400_naming_it(client, world, columns):
    response = client.get(reverse("evaluations:heatmap"), {"columns": columns})
    assert response.status_code == 400 and "columns" in response.content.decode()
