"""The leaderboard page at / with figures computed from the database."""
from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.urls import reverse

from evaluations.boards import compute, invalidation, serving
from agents.models import AgentModel, Harness
from evaluations.boards.board import Medals, entry_key
from evaluations.models import Entry, PublishedResult
from trajectories.models import Rollout

from tasks.models import BenchmarkVersion, Task

from evaluations.tests.board_factories import build_boards, hand_table, make_rollout

pytestmark = pytest.mark.django_db


def row_order(html: str) -> list[str]:
    body = html.split('id="leaderboard-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-entry="[^"]+">\s*<td[^>]*>.*?</td>\s*<td[^>]*><a href="/models/([^/]+)/', body, re.S)


def test_board_figures_ignore_infra_superseded_unfinished(world):
    data = serving.build(world["version"])
    by_model = {e.model: e for e in data.entries}
    assert by_model["model-a"].overall.avg == pytest.approx(0.35)
    assert by_model["model-b"].overall.avg == pytest.approx(0.45)
    assert by_model["model-c"].overall.avg == pytest.approx(0.275)
    assert by_model["model-a"].overall.best == pytest.approx(0.525)
    assert by_model["model-b"].overall.dominance == pytest.approx(0.625)
    assert by_model["model-a"].overall.n_tasks == 3
    assert by_model["model-a"].excluded == {"infra": 1}
    assert by_model["model-c"].excluded == {"superseded": 1, "unfinished": 1, "cancelled": 1}
    assert by_model["model-a"].categories["alpha"].avg == pytest.approx(0.35)
    assert by_model["model-a"].scopes[""].medals == Medals(gold=2, silver=1, bronze=0)
    # Usage counts only the 9 counted rollouts: 0.5 USD and 1 hour each.
    assert by_model["model-a"].scopes[""].usage.cost_usd == pytest.approx(4.5)
    assert by_model["model-a"].scopes[""].usage.agent_hours == pytest.approx(9.0)
    assert by_model["model-a"].scopes[""].usage.benchmark_calls_per_hour == pytest.approx(4.0)
    # The infra rollout on t4 is flagged in its cell.
    t4 = world["tasks"]["t4"].id
    assert len(data.cells[t4][by_model["model-a"].key].infra_rollout_ids) == 1


def test_page_shows_sorted_table_with_counts_and_note(client, world):
    response = client.get(reverse("evaluations:leaderboard"))
    assert response.status_code == 200
    html = response.content.decode()
    assert row_order(html) == ["model-b", "model-a", "model-c"]
    assert "0.450" in html and "0.350" in html and "0.275" in html
    assert "3/4 tasks, 9 rollouts" in html
    assert "1 infra" in html
    assert "How rollouts count" in html and "counts 0" in html
    assert 'data-plotly-src="/static/vendor/plotly-basic.min.js"' in html
    # The charts' data is fetched when a chart is about to be seen, not embedded (it grew ~780 B an entry).
    assert 'id="board-charts"' not in html and 'data-charts-src="/charts/?&amp;chart=board"' in html
    # The chart bundle is no script of the page's: static/js/charts.js loads it after the page.
    assert not re.search(r"<script[^>]+plotly", html)
    assert response.context["nav"] == "leaderboard"


@pytest.mark.parametrize(
    "sort, expected",
    [
        ("model", ["model-a", "model-b", "model-c"]),
        ("-model", ["model-c", "model-b", "model-a"]),
        ("avg", ["model-c", "model-a", "model-b"]),
        ("-best", ["model-b", "model-a", "model-c"]),
        ("-dom", ["model-b", "model-a", "model-c"]),  # A and C tie at .4375: Avg breaks it
        ("-cat:alpha", ["model-a", "model-b", "model-c"]),
        ("nonsense", ["model-b", "model-a", "model-c"]),
    ],
)
def test_sort_parameter_works_without_js(client, world, sort, expected):
    html = client.get(reverse("evaluations:leaderboard"), {"sort": sort}).content.decode()
    assert row_order(html) == expected


def test_filters_choose_the_entries(client, world):
    build_boards(world["version"], open_weight=True)
    html = client.get(reverse("evaluations:leaderboard"), {"open_weight": "1"}).content.decode()
    assert row_order(html) == ["model-b"]
    other = Harness.objects.create(name="mini-swe-agent")
    make_rollout(world["tasks"]["t1"], world["models"]["A"], other, 1.0)
    build_boards(world["version"], harness=other.id)
    html = client.get(reverse("evaluations:leaderboard"), {"harness": other.id}).content.decode()
    assert row_order(html) == ["model-a"]


def test_category_filter_switches_figures(client, world):
    response = client.get(reverse("evaluations:leaderboard"), {"category": "alpha"})
    rows = response.context["rows"]
    assert [r["entry"].model for r in rows] == ["model-a", "model-b", "model-c"]
    assert rows[0]["fig"].avg == pytest.approx(0.35)
    assert rows[0]["fig"].dominance == pytest.approx(0.75)
    assert "2/2 tasks, 6 rollouts" in response.content.decode()
    assert "all 2 tasks" in response.content.decode()  # the note speaks of the category


def test_unknown_version_is_404(client, world):
    assert client.get(reverse("evaluations:leaderboard"), {"version": "9.9"}).status_code == 404


def test_empty_site(client):
    response = client.get(reverse("evaluations:leaderboard"))
    assert response.status_code == 200
    assert "No results yet" in response.content.decode()


def test_ablation_entry_has_no_rank_or_dominance(client, world):
    Entry.objects.create(model=world["models"]["C"], harness=world["harness"], version=world["version"], ablation=True)
    data = serving.build(world["version"])
    by_model = {e.model: e for e in data.entries}
    assert by_model["model-c"].overall.dominance is None
    assert by_model["model-c"].overall.rank is None
    # A vs B alone: t1 tie, t2 A, t3 B, t4 B.
    assert by_model["model-a"].overall.dominance == pytest.approx(0.375)
    assert "ablation" in client.get("/").content.decode()


def test_the_empty_message_is_for_an_empty_table_only(client, world):
    """Every entry an ablation: "No entry matches these filters" sat above the three entries listed under it."""
    for model in world["models"].values():
        Entry.objects.create(model=model, harness=world["harness"], version=world["version"], ablation=True)
    build_boards(world["version"])
    html = client.get("/").content.decode()
    assert "No entry matches" not in html
    assert "Ablations and entries outside the comparison set" in html
    board = html.split('id="leaderboard-table"', 1)[1].split("</table>", 1)[0]
    assert len(re.findall(r'<tr data-entry=', board)) == 3


def test_clipping_follows_the_version(world):
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 1.6, index=7)
    by_model = {e.model: e for e in serving.build(world["version"]).entries}
    assert by_model["model-a"].overall.avg == pytest.approx((0.5 + 0.2 + 0.7 + 1.0) / 4)
    world["version"].clip_rewards = False
    world["version"].save()
    by_model = {e.model: e for e in serving.build(world["version"]).entries}
    assert by_model["model-a"].overall.avg == pytest.approx((0.5 + 0.2 + 0.7 + 1.6) / 4)


def test_agent_failure_counts_zero(world):
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], None, status="failed", index=8)
    by_model = {e.model: e for e in serving.build(world["version"]).entries}
    assert by_model["model-a"].overall.avg == pytest.approx(0.35)
    assert by_model["model-a"].overall.n_tasks == 4


def test_cache_is_never_stale_after_a_change(client, world):
    first = serving.build(world["version"])
    assert serving.build(world["version"]) is not None
    key = serving.board_key(world["version"].pk)
    assert serving._recalled(key) is not None  # warm (the per-process cache is the process's own memory)

    # A new rollout.
    make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], 0.8, index=9)
    a = next(e for e in serving.build(world["version"]).entries if e.model == "model-a")
    assert a.overall.avg == pytest.approx((0.5 + 0.2 + 0.7 + 0.8) / 4)

    # A changed rollout: marked as an infrastructure error.
    rollout = Rollout.objects.get(index=9)
    rollout.infra_error = True
    rollout.save()
    a = next(e for e in serving.build(world["version"]).entries if e.model == "model-a")
    assert a.overall.avg == pytest.approx(0.35)

    # An Entry change.
    Entry.objects.create(model=world["models"]["A"], harness=world["harness"], version=world["version"], ablation=True)
    a = next(e for e in serving.build(world["version"]).entries if e.model == "model-a")
    assert a.ablation and a.overall.dominance is None

    # A published result.
    PublishedResult.objects.create(
        model=world["models"]["A"], harness=world["harness"], version=world["version"], task=world["tasks"]["t1"],
        score=0.9, source="paper",
    )
    assert serving.build(world["version"]).published[0].source == "paper"

    # A deletion.
    Rollout.objects.filter(model=world["models"]["B"]).delete()
    assert {e.model for e in serving.build(world["version"]).entries} == {"model-a", "model-c"}
    assert first.entries[0].model == "model-b"

    # The page reads the same fresh board.
    html = client.get("/").content.decode()
    assert row_order(html) == ["model-c", "model-a"]  # A, an ablation now, is listed apart below


def test_saves_that_change_no_figure_keep_the_cache(world):
    serving.build(world["version"])
    before = invalidation.generation()
    rollout = Rollout.objects.filter(model__name="model-a").first()
    rollout.save(update_fields=["heartbeat_at"])
    rollout.n_steps = 99
    rollout.save()
    Rollout.objects.get(pk=rollout.pk).save()  # loaded afresh, saved unchanged
    assert invalidation.generation() == before
    rollout.reward = 0.33
    rollout.save(update_fields=["reward"])
    assert invalidation.generation() > before


def test_a_running_rollout_invalidates_when_it_starts_and_finishes(world):
    running = make_rollout(world["tasks"]["t4"], world["models"]["A"], world["harness"], None, status="running")
    generation = invalidation.generation()
    for step in range(3):  # streamed steps: curve, tokens, timings change
        running.curve = [{"step_id": step, "t": step * 10.0, "best_score": 0.1 * step}]
        running.n_input_tokens = 1000 * step
        running.save()
    assert invalidation.generation() == generation
    running.status = "finished"
    running.reward = 0.8
    running.save()
    assert invalidation.generation() > generation
    a = next(e for e in serving.build(world["version"]).entries if e.model == "model-a")
    assert a.overall.avg == pytest.approx((0.5 + 0.2 + 0.7 + 0.8) / 4)


def test_deferred_fields_are_not_fetched_by_the_cache_check(world, django_assert_num_queries):
    with django_assert_num_queries(1):
        rollouts = list(Rollout.objects.only("id", "trial_name"))
    assert all(r._board_state is None for r in rollouts)
    before = invalidation.generation()
    rollouts[0].save(update_fields=["trial_name"])
    assert invalidation.generation() > before  # unknown state: invalidate to be safe


def test_published_results_are_shown_apart_with_source(client, world):
    model = AgentModel.objects.create(name="paper-model")
    for task, score in (("t1", 0.8), ("t2", 0.4)):
        PublishedResult.objects.create(
            model=model, harness=world["harness"], version=world["version"], task=world["tasks"][task],
            score=score, source="https://example.org/paper",
        )
    build_boards(world["version"])
    response = client.get("/")
    html = response.content.decode()
    assert row_order(html) == ["model-b", "model-a", "model-c"]  # not mixed in
    published = html.split('id="published-table"', 1)[1]
    assert "paper-model" in published and "https://example.org/paper" in published
    assert "0.300" in published  # (0.8 + 0.4) / 4 tasks
    assert "2/4" in published


def test_budget_curve_and_score_at_k(world):
    # One rollout of a fresh model with a curve: 0.3 at 25% of the budget, 0.6 at 75%.
    model = AgentModel.objects.create(name="curvy")
    make_rollout(
        world["tasks"]["t1"], model, world["harness"], 0.6,
        curve=[{"step_id": 3, "t": 900, "best_score": 0.3}, {"step_id": 9, "t": 2700, "best_score": 0.6}],
    )
    entry = next(e for e in serving.build(world["version"]).entries if e.model == "curvy")
    grid = compute.BUDGET_GRID
    curve = dict(zip(grid.round(3).tolist(), entry.scopes[""].budget_curve))
    assert curve[0.0] == 0.0
    assert curve[0.5] == pytest.approx(0.3 / 4)
    assert curve[1.0] == pytest.approx(0.6 / 4)
    assert entry.scopes[""].score_at_k == pytest.approx([0.6 / 4])


def test_the_agents_own_account_enters_no_curve_and_no_calls_per_hour(world):
    """A trajectory written in the sandbox (trajectory_source "agent") claims benchmark calls and a curve: the
    board takes neither (issue 43); its usage fields were never filled (trajectories.provenance)."""
    model = AgentModel.objects.create(name="own-account")
    claimed = [{"step_id": 2, "t": 60, "best_score": 1.0}]
    make_rollout(world["tasks"]["t1"], model, world["harness"], 0.0, curve=claimed, n_benchmark_calls=500,
                 trajectory_source="agent", usage_source="none", cost_usd=None, n_input_tokens=None,
                 n_output_tokens=None)
    entry = next(e for e in serving.build(world["version"]).entries if e.model == "own-account")
    assert max(entry.scopes[""].budget_curve) == 0.0
    usage = entry.scopes[""].usage
    assert (usage.cost_usd, usage.input_tokens, usage.benchmark_calls_per_hour) == (None, None, None)
    assert usage.agent_hours == pytest.approx(1.0)


def test_what_the_agent_saw_never_shows_above_its_graded_result(world):
    """A host-written curve is still what the agent saw of its own benchmark runs: capped at the reward."""
    model = AgentModel.objects.create(name="saw-more")
    make_rollout(world["tasks"]["t1"], model, world["harness"], 0.2,
                 curve=[{"step_id": 3, "t": 900, "best_score": 0.9}])
    entry = next(e for e in serving.build(world["version"]).entries if e.model == "saw-more")
    assert max(entry.scopes[""].budget_curve) == pytest.approx(0.2 / 4)


def test_admin_edit_of_an_entry_refreshes_the_board(client, world):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("admin", "a@example.org", "x"))
    assert client.get(reverse("admin:evaluations_entry_add")).status_code == 200
    assert client.get(reverse("admin:evaluations_publishedresult_changelist")).status_code == 200
    assert serving.build(world["version"]).entries[0].overall.dominance is not None
    response = client.post(
        reverse("admin:evaluations_entry_add"),
        {"model": world["models"]["B"].id, "harness": world["harness"].id, "version": world["version"].id,
         "ablation": "on", "in_comparison": "on", "note": "prompt ablation"},
    )
    assert response.status_code == 302
    b = next(e for e in serving.build(world["version"]).entries if e.model == "model-b")
    assert b.ablation and b.overall.dominance is None and b.note == "prompt ablation"


def test_pages_without_charts_load_no_chart_code(client, world):
    for url in (reverse("evaluations:heatmap"), reverse("evaluations:model_detail", args=["model-a"])):
        html = client.get(url).content.decode()
        assert "plotly" not in html and "charts.js" not in html, url


@pytest.mark.django_db(transaction=True)
def test_a_rollout_invalidates_its_own_versions_boards_only():
    """A live campaign on one version leaves every other version's boards cached, in this process and the others."""
    from tasks.models import Task

    world = hand_table()
    other = BenchmarkVersion.objects.create(name="2.0")
    other_task = Task.objects.create(version=other, name="o1", category="alpha", budget_sec=3600)
    keys = lambda: (serving.board_key(world["version"].pk), serving.board_key(other.pk))  # noqa: E731
    before_mine, before_other = keys()
    committed = lambda version: invalidation.generation(version.pk)[:2]  # noqa: E731  what other processes read
    mine_db, other_db = committed(world["version"]), committed(other)

    rollout = make_rollout(other_task, world["models"]["A"], world["harness"], 0.4)
    after_mine, after_other = keys()
    assert after_mine == before_mine and after_other != before_other
    assert committed(world["version"]) == mine_db and committed(other) != other_db

    rollout.reward = 0.9
    rollout.save(update_fields=["reward"])
    assert keys()[0] == before_mine
    rollout.delete()
    assert keys()[0] == before_mine and committed(world["version"]) == mine_db

    # A rollout moved to another task, and anything but a rollout, invalidates every board.
    moved = Rollout.objects.filter(task__version=world["version"]).first()
    moved.task = other_task
    moved.save()
    assert keys()[0] != before_mine
    changed = keys()
    world["models"]["B"].save()
    assert all(a != b for a, b in zip(keys(), changed))


def test_a_hundred_entry_leaderboard_comes_in_light_pages_sorted_on_the_server(client):
    from evaluations.tests.test_heatmap_view import element_count, hundred_entries

    build_boards(hundred_entries()["version"])
    url = reverse("evaluations:leaderboard")
    pages = [client.get(url, {"version": "big", "entries": n}) for n in (1, 2, 3, 4)]
    assert [p.status_code for p in pages] == [200] * 4
    htmls = [p.content.decode() for p in pages]
    orders = [row_order(html) for html in htmls]
    assert [len(o) for o in orders] == [30, 30, 30, 10]
    everyone = [name for order in orders for name in order]
    assert len(set(everyone)) == 100
    # One listing cut in pages: the ranks run on across them.
    avgs = [float(x) for html in htmls for x in re.findall(r'<td class="num group-start(?: shade-\d+)?" data-value="([0-9.]+)"', html)]
    assert avgs == sorted(avgs, reverse=True) and len(avgs) == 100
    for html, order in zip(htmls, orders):
        assert len(html.encode()) <= 250_000 and element_count(html) <= 2_500
        assert 'data-paged="true"' in html  # its headers sort on the server, not the page in place
        usage = html.split('id="usage-table"', 1)[1].split("</table>", 1)[0]
        assert usage.count("<tr") == len(order) + 1  # the page's entries and the header
    assert "Entries 31–60 of 100" in htmls[1]
    # A sort link starts over at page 1; sorted by name, the first page has the first 30 names.
    header = re.search(r'<a href="\?([^"]*sort=model[^"]*)">Entry</a>', htmls[2]).group(1).replace("&amp;", "&")
    assert "entries=" not in header
    by_name = client.get(url, {"version": "big", "sort": "model", "entries": 1}).content.decode()
    assert row_order(by_name) == sorted(everyone)[:30]


@pytest.mark.parametrize("entries", ["0", "x", "-2"])
def test_a_bad_page_of_the_leaderboard_is_a_400_naming_it(client, world, entries):
    response = client.get(reverse("evaluations:leaderboard"), {"entries": entries})
    assert response.status_code == 400 and "entries" in response.content.decode()


def test_a_small_board_has_no_pages(client, world):
    html = client.get(reverse("evaluations:leaderboard")).content.decode()
    assert "data-paged" not in html and "Entries 1–" not in html


def test_a_warm_board_is_the_same_object_until_something_changes(world):
    """The process keeps its last boards unpickled (a 100-entry board's unpickling was most of a warm page)."""
    first = serving.board(world["version"])  # built by the fixture, as the boards worker would
    assert serving.board(world["version"]) is first
    cache.clear()  # another process's cache changes nothing here: the key carries the generation
    assert serving.board(world["version"]) is first
    rollout = Rollout.objects.filter(model__name="model-a").first()
    rollout.reward = 0.01
    rollout.save(update_fields=["reward"])
    stale, freshness = serving.served_board(world["version"])  # never built in the request: the last one
    assert stale is first and freshness.stale
    fresh = serving.build(world["version"])
    assert fresh is not first and fresh.entries != first.entries
    assert serving.board(world["version"]) is fresh


def test_a_saved_rollout_reads_its_version_from_the_task_in_hand(django_assert_num_queries):
    """An import sets the rollout's task: the save's invalidation needs no query for its version."""
    world = hand_table()
    rollout = Rollout.objects.filter(task__version=world["version"]).select_related("task").first()
    with django_assert_num_queries(0):
        assert invalidation.rollout_version(rollout.task_id, rollout) == world["version"].pk
    plain = Rollout.objects.get(pk=rollout.pk)
    with django_assert_num_queries(1):
        assert invalidation.rollout_version(plain.task_id, plain) == world["version"].pk
    # A task id set by hand, with another task still cached, is looked up.
    other = BenchmarkVersion.objects.create(name="2.0")
    from tasks.models import Task

    rollout.task_id = Task.objects.create(version=other, name="o1", category="alpha", budget_sec=3600).pk
    with django_assert_num_queries(1):
        assert invalidation.rollout_version(rollout.task_id, rollout) == other.pk


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a row's xmin (its writing transaction) is PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_an_import_bumps_its_entrys_generation_once_in_its_own_transaction(tmp_path):
    """The bump ran after the commit, a transaction with a disk flush of its own (a twentieth of a small
    import); it is now the import's last write: committed with the rollout, and only once."""
    from evaluations.models import BoardGeneration
    from trajectories.services import import_trial_dir
    from trajectories.tests.trialdata import make_task, make_trial

    make_task()
    assert import_trial_dir(make_trial(tmp_path, "lib__demo_task__a")).ok  # the entry's scope row exists from here
    outcome = import_trial_dir(make_trial(tmp_path, "lib__demo_task__b"))
    assert outcome.ok
    rollout = Rollout.objects.get(pk=outcome.rollout_id)
    scope = invalidation.entry_scope(rollout.task.version_id, entry_key(rollout.model_id, rollout.harness_id))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT xmin::text FROM {Rollout._meta.db_table} WHERE id = %s", [rollout.pk])
        rollout_transaction = cursor.fetchone()[0]
        cursor.execute(f"SELECT xmin::text FROM {BoardGeneration._meta.db_table} WHERE scope = %s", [scope])
        bump_transaction = cursor.fetchone()[0]
    assert bump_transaction == rollout_transaction
    before = BoardGeneration.objects.get(scope=scope).value
    assert import_trial_dir(make_trial(tmp_path, "lib__demo_task__c")).ok
    assert BoardGeneration.objects.get(scope=scope).value == before + 1


def test_the_paper_table_is_shaded_with_each_columns_best_and_second_marked(client, world):
    """As AutoLab's table: cells shaded by score with a legend, the best of a column bold and the second
    underlined among the compared entries, the main set and the ablations apart."""
    Entry.objects.create(model=world["models"]["C"], harness=world["harness"], version=world["version"], ablation=True)
    build_boards(world["version"])
    html = client.get("/").content.decode()
    assert 'id="shade-legend"' in html and '<span class="shade-0">0</span>' in html and '<span class="shade-10">1</span>' in html
    data = serving.build(world["version"])
    compared = sorted((e for e in data.entries if e.comparison), key=lambda e: -e.overall.avg)
    rows = {e.model: html.split(f'data-entry="{e.key}"', 1)[1].split("</tr>", 1)[0] for e in data.entries}
    first, second = compared[0], compared[1]
    assert f'<strong class="best" title="the best of this column among the compared entries">{first.overall.avg:.3f}</strong>' in rows[first.model]
    assert f'<span class="second" title="the second best of this column among the compared entries">{second.overall.avg:.3f}</span>' in rows[second.model]
    assert 'class="best"' not in rows["model-c"] and 'class="second"' not in rows["model-c"]  # an ablation: no mark
    assert re.search(r'class="num group-start shade-\d+" data-value', rows[first.model])
    main = html.split('<tbody class="main">', 1)[1].split("</tbody>", 1)[0]
    assert ">Main set <" in main and "model-c" not in main
    assert "Ablations and entries outside the comparison set" in html


def test_results_from_is_offered_only_where_a_teams_results_are(client, world):
    """Without a submission on the board the 'Results from' select only pushed the table down (390 px)."""
    assert 'name="origin"' not in client.get("/").content.decode()
    # Set (a link from elsewhere): shown, so it can be changed back.
    assert 'name="origin"' in client.get("/", {"origin": "ours"}).content.decode()


def test_a_board_measured_on_few_of_its_tasks_says_so_beside_its_table(client, world):
    """The demo's four entries are measured on 4 of AutoLab v1.1's 12 tasks and mostly 0.000: the table now
    says why beside it, when its entries cover fewer than half the tasks of the scope shown."""
    version = BenchmarkVersion.objects.create(name="few", clip_rewards=True)
    tasks = [Task.objects.create(version=version, name=f"f{n}", category="alpha" if n < 2 else "beta") for n in range(5)]
    make_rollout(tasks[0], world["models"]["A"], world["harness"], 0.5)
    make_rollout(tasks[1], world["models"]["B"], world["harness"], 0.2)
    build_boards(version)
    html = client.get("/?version=few").content.decode()
    table = html.split('id="board-table"', 1)[1].split('id="leaderboard-table"', 1)[0]
    assert "Measured on 2 of 5 tasks: missing tasks count 0." in table
    # In a category the entries cover wholly, nothing to say; nor on the hand table (every task measured).
    assert "Measured on" not in client.get("/?version=few&category=alpha").content.decode()
    assert "Measured on" not in client.get("/").content.decode()
    beta = client.get("/?version=few&category=beta").content.decode()
    assert "Measured on 0 of 3 tasks: missing tasks count 0." in beta
