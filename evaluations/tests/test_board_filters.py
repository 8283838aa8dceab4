"""Every filter applies to every figure of the leaderboard: table, charts, cost, medals, heatmap."""
from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evaluations.boards.board import Medals

from evaluations.tests.board_factories import build_boards, make_rollout

pytestmark = pytest.mark.django_db


def charts(client, params: dict | None = None) -> dict:
    """The leaderboard's chart data for the page's query, as the page fetches it (views.leaderboard_charts)."""
    response = client.get(reverse("evaluations:leaderboard_charts"), params or {})
    assert response.status_code == 200, response.content[:300]
    return json.loads(response.content)


def by_label(series: list[dict], key: str = "y") -> dict:
    return {s["label"].split(" / ")[0]: s[key] for s in series}


def test_the_chart_data_change_with_the_category(client, world):
    # Model A's rollouts on beta tasks cost more, so cost per rollout differs by category.
    from trajectories.models import Rollout

    Rollout.objects.filter(model=world["models"]["A"], task__category="beta").update(cost_usd=2.0)
    from evaluations.boards import invalidation

    invalidation.invalidate()
    build_boards(world["version"])
    everything = charts(client)
    alpha = charts(client, {"category": "alpha"})
    # Bars: the category's Avg@k (A .35, B .3, C .1 on alpha).
    assert by_label(alpha["bars"], "avg") == pytest.approx({"Model A": 0.35, "Model B": 0.3, "Model C": 0.1})
    # score@k over alpha's two tasks: k=1 is the category's Avg@k, k=3 its Best@k.
    at_k = by_label(alpha["score_at_k"])
    assert at_k["Model A"][0] == pytest.approx(0.35) and at_k["Model A"][-1] == pytest.approx((1.0 + 0.2) / 2)
    assert at_k != by_label(everything["score_at_k"])
    # The budget curve ends at the category's Avg@k.
    budget = by_label(alpha["budget"]["series"])
    assert budget["Model C"][-1] == pytest.approx(0.1)
    assert budget != by_label(everything["budget"]["series"])
    # Cost per rollout and score on the Pareto chart are the category's.
    pareto = {p["label"].split(" / ")[0]: p for p in alpha["pareto"]}
    assert pareto["Model A"]["cost"] == pytest.approx(0.5) and pareto["Model A"]["score"] == pytest.approx(0.35)
    pareto_all = {p["label"].split(" / ")[0]: p for p in everything["pareto"]}
    assert pareto_all["Model A"]["cost"] == pytest.approx((6 * 0.5 + 3 * 2.0) / 9)


def test_medals_and_cost_columns_follow_the_category(client, world):
    response = client.get(reverse("evaluations:leaderboard"), {"category": "beta"})
    medals = {m["entry"].model: m["medals"] for m in response.context["medals"]}
    # beta: t3 B 1.0 gold, A/C .7 silver; t4 B .2 / C .2 gold, A nothing.
    assert medals["model-b"] == Medals(gold=2, silver=0, bronze=0)
    assert medals["model-a"] == Medals(gold=0, silver=1, bronze=0)
    assert medals["model-c"] == Medals(gold=1, silver=1, bronze=0)
    rows = {r["entry"].model: r for r in response.context["rows"]}
    assert rows["model-a"]["usage"].n_rollouts == 3  # A's beta rollouts, not all 9


def test_harness_and_weights_filters_choose_the_comparison_set(client, world):
    # Closed models only: Dominance, ranks and medals compare A and C alone.
    build_boards(world["version"], open_weight=False)
    response = client.get(reverse("evaluations:leaderboard"), {"open_weight": "0"})
    rows = {r["entry"].model: r["fig"] for r in response.context["rows"]}
    assert set(rows) == {"model-a", "model-c"}
    # A vs C per task: .5/0 win, .2/.2 tie, .7/.7 tie, 0/.2 loss -> 2 / 4.
    assert rows["model-a"].dominance == pytest.approx(0.5)
    assert rows["model-a"].dominance + rows["model-c"].dominance == pytest.approx(1.0)
    assert "compare the 2 entries" in response.content.decode()
    assert len(charts(client, {"open_weight": "0"})["bars"]) == 2
    heat = client.get(reverse("evaluations:heatmap"), {"open_weight": "0"})
    assert [e.model for e in heat.context["entries"]] == ["model-a", "model-c"]


def test_harness_filter_counts_only_that_harness(client, world):
    from agents.models import Harness

    other = Harness.objects.create(name="mini-swe-agent")
    make_rollout(world["tasks"]["t1"], world["models"]["A"], other, 1.0, cost_usd=3.0)
    build_boards(world["version"], harness=other.id)
    response = client.get(reverse("evaluations:leaderboard"), {"harness": other.id})
    rows = response.context["rows"]
    assert [r["entry"].harness for r in rows] == ["mini-swe-agent"]
    assert rows[0]["usage"].cost_usd == pytest.approx(3.0)
    assert rows[0]["fig"].dominance is None  # alone: no one to beat


def decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".", 1)[1]) if "." in text and "e" not in text else 0


def test_the_charts_carry_the_boards_scores_as_the_tables_show_them(client, world):
    """Hover shows three decimals, as the tables do: the 17 digits of a float's repr made the charts'
    data 144 KB of a 100-entry page's 240 (every entry is drawn), digits no one saw."""
    from evaluations.boards import serving
    from evaluations.templatetags.board import score

    make_rollout(world["tasks"]["t1"], world["models"]["A"], world["harness"], 1 / 3, index=5)  # 0.333...: a long repr
    data = serving.build(world["version"])
    got = charts(client)
    entries = {f"{e.model_label} / {e.harness}": e for e in data.entries}
    assert len(got["bars"]) == len(entries)
    shown = []  # (as the chart carries it, as the board holds it)
    for bar, at_k, budget in zip(got["bars"], got["score_at_k"], got["budget"]["series"]):
        entry = entries[bar["label"]]
        figures, scope = entry.figures(None), entry.scope(None)
        shown += [(bar["avg"], figures.avg), (bar["best"], figures.best), *zip(bar["avg_ci"], figures.avg_ci)]
        shown += [*zip(at_k["y"], scope.score_at_k, strict=True), *zip(budget["y"], scope.budget_curve, strict=True)]
    shown += list(zip(got["budget"]["x"], data.budget_grid, strict=True))
    for carried, held in shown:
        assert carried == round(held, 3) and f"{carried:.3f}" == score(held)
    assert max(decimals(carried) for carried, _ in shown) == 3
    assert any(decimals(held) > 3 for _, held in shown)  # the board's own figures are not rounded
