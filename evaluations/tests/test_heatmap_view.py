"""The per-task heatmap page (/heatmap/)."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

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
    assert 'class="category-row"' in html and ">alpha<" in html and ">beta<" in html
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
    # Nothing but the page itself: the heatmap is drawn on the server, no chart script.
    assert "<script" not in response.content.decode()
    response = client.get(reverse("evaluations:heatmap"), {"category": "beta", "open_weight": "0"})
    # Columns by the category's Avg@k: C (.45) before A (.35).
    assert [e.model for e in response.context["entries"]] == ["model-c", "model-a"]
    assert task_order(response.content.decode()) == ["t3", "t4"]


def test_empty_site(client):
    assert "No results yet" in client.get(reverse("evaluations:heatmap")).content.decode()


def test_tasks_ordered_by_mean_score_within_their_category(client, world):
    # A fourth entry that does best on t2 lifts t2 above t1 in the default order.
    from agents.models import AgentModel

    from .board_factories import make_rollout

    strong = AgentModel.objects.create(name="strong-on-t2")
    make_rollout(world["tasks"]["t2"], strong, world["harness"], 1.0)
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
    heat = client.get(reverse("evaluations:heatmap")).content.decode()
    cell = heat.split(f"/rollouts/?task={task.id}", 1)[1][:400]
    assert ">1.000†</a>" in cell and "1 reward(s) above 1 counted as 1.0" in cell
    assert "† a verifier's reward above 1 counts as 1.0" in heat
    assert "* an infrastructure error" not in heat  # no cell has a star: no footnote about one
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    assert "counted as 1.0: this version clips rewards to [0, 1]" in page and "1.0711" in page
    (record,) = client.get(f"/api/v1/rollouts/?task={task.id}").json()["results"]
    assert (record["reward"], record["score"], record["clipped"]) == (1.0711, 1.0, True)
