import json
import re

import pytest
from django.urls import reverse

from trajectories.models import FailureLabel, Rollout

from . import factories

pytestmark = pytest.mark.django_db


def detail(client, rollout, query=""):
    return client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]) + query)


def plot_json(response):
    match = re.search(r'<script id="plot-data" type="application/json">(.*?)</script>', response.content.decode(), re.S)
    return json.loads(match.group(1))


def test_header_shows_task_result_and_run(client):
    rollout = factories.make_explored_rollout(
        verifier_fields={"reward": 0.5, "reason": "ok", "speedup": 1.7, "correctness": True, "clip": {"raw": 0.69}}, cost_usd=1.25
    )
    response = detail(client, rollout)
    assert response.status_code == 200
    html = response.content.decode()
    task = rollout.task
    assert reverse("evaluations:task_detail", args=[task.version.name, task.name]) in html
    assert "latency_ms" in html and "lower is better" in html
    # the category by its label, its id on hover (as the failures page shows a cause), never the raw id alone
    assert '<dt>Category</dt><dd><span class="category" title="system_optimization">System optimization</span></dd>' in html
    assert ">system_optimization<" not in html
    for field in ("reason", "ok", "speedup", "1.7", "<dd>true</dd>", "{&quot;raw&quot;: 0.69}"):
        assert field in html
    assert "$1.25" in html
    assert 'class="phase-bar"' in html and 'data-width="' in html


@pytest.mark.parametrize("fields, note", [
    ({}, "counted"),
    ({"reward": None, "verifier_fields": {}}, "counted 0: the agent's run left no score"),
    ({"superseded": True}, "not counted left out: superseded by a later run"),
    ({"status": "cancelled"}, "not counted left out: cancelled"),
    ({"status": "running", "reward": None}, "not counted left out: not finished"),
    ({"infra_error": True}, "not counted left out: not the agent's fault (infrastructure or configuration)"),
    ({"excluded": "the sample errored: the sandbox went away"},
     "not counted left out by its source: the sample errored: the sandbox went away"),
])
def test_the_result_card_says_whether_and_why_the_rollout_counts(client, fields, note):
    """The verdict's reason (trajectories.verdict, its one owner) was shown nowhere: the Result card says it."""
    import html as markup

    rollout = factories.make_explored_rollout(**fields)
    page = detail(client, rollout).content.decode()
    shown = re.search(r'<dt>Figures</dt><dd id="counted-note">(.*?)</dd>', page, re.S).group(1)
    assert " ".join(markup.unescape(re.sub(r"<[^>]+>", " ", shown)).split()) == note
    assert ('<span class="badge">not counted</span>' in shown) == note.startswith("not counted")


def test_unknown_rollout_is_404(client):
    assert client.get(reverse("trajectories:rollout_detail", args=[999999])).status_code == 404


def test_failure_cause_prefers_label_and_says_which(client):
    rollout = factories.make_explored_rollout(failure_cause="no_artifact", reward=0.0)
    html = detail(client, rollout).content.decode()
    assert "no_artifact" in html and "(automatic)" in html
    FailureLabel.objects.create(rollout=rollout, cause="gave_up")
    html = detail(client, rollout).content.decode()
    result_card = html.split('class="facts verifier"')[1].split("</dl>")[0]
    assert "gave_up" in result_card and "(staff label)" in result_card and "no_artifact" not in result_card
    # The failure panel (evidence, staff form) is on the page too.
    assert 'id="failure"' in html


def test_steps_have_permalink_ids_commands_metric_and_diff(client):
    rollout = factories.make_explored_rollout()
    html = detail(client, rollout).content.decode()
    for step_id in range(1, 9):
        assert f'id="step-{step_id}"' in html
    assert "python3 /app/evaluate_local.py" in html
    assert "<strong>60.0</strong> ms" in html
    assert '<span class="d-add">+int main(){}</span>' in html
    assert '<span class="d-del">-int main(){return 1;}</span>' in html
    assert "<code>app/main.c</code>" in html
    # The keyboard shortcuts are documented on the page.
    for key in ("j", "k", "b", "e"):
        assert f"<kbd>{key}</kbd>" in html


def test_timeline_marks_link_to_steps_and_show_budget(client):
    rollout = factories.make_explored_rollout()
    html = detail(client, rollout).content.decode()
    marks = re.findall(r'<a class="mark k-(\w+)" href="#step-(\d+)"', html)
    assert ("benchmark", "3") in marks and ("edit", "4") in marks and ("submit", "8") in marks
    assert 'class="budget-line"' in html
    assert 'class="improvement-line"' in html


def test_plot_data_carries_benchmark_calls_and_anchors(client):
    rollout = factories.make_explored_rollout(reward=0.7, verifier_fields={"reward": 0.7, "metric": 55.0})
    data = plot_json(detail(client, rollout))
    assert [p["step_id"] for p in data["points"]] == [3, 5, 7]
    assert [p["best_metric"] for p in data["points"]] == [90.0, 60.0, 60.0]
    assert data["baseline"] == 100.0 and data["reference"] == 20.0
    assert data["final_score"] == 0.7 and data["final_metric"] == 55.0


def test_plot_falls_back_to_step_metrics_without_stored_curve(client):
    rollout = factories.make_explored_rollout()
    rollout.curve = []
    rollout.save()
    data = plot_json(detail(client, rollout))
    assert [(p["step_id"], p["best_metric"]) for p in data["points"]] == [(3, 90.0), (5, 60.0), (7, 60.0)]


def test_only_filter_keeps_benchmark_and_edit_steps(client):
    rollout = factories.make_explored_rollout()
    html = detail(client, rollout, "?only=benchmark,edit").content.decode()
    shown = sorted(int(n) for n in re.findall(r'<article class="step[^"]*" id="step-(\d+)"', html))
    assert shown == [3, 4, 5, 7]
    # The timeline still covers every step; one the filter hides is asked of the server.
    assert 'href="?step=8&amp;only=benchmark,edit"' in html
    assert 'href="#step-7"' in html


def test_long_outputs_are_previewed_and_loaded_from_the_fragment(client):
    rollout = factories.make_rollout()
    long_output = "A" * 5000 + "THE-END"
    factories.add_step(rollout, 1, commands=["make\n"], outputs=[long_output, "short"])
    html = detail(client, rollout).content.decode()
    assert "THE-END" not in html
    assert "A" * 600 in html and "A" * 601 not in html
    url = reverse("trajectories:step_observation", args=[rollout.pk, 1])
    assert f'data-url="{url}?position=0"' in html
    assert f'data-url="{url}?position=1"' not in html  # short: shown whole already
    fragment = client.get(url, {"position": 0}).content.decode()
    assert "THE-END" in fragment and "short" not in fragment
    both = client.get(url).content.decode()
    assert "THE-END" in both and "short" in both


def test_fragment_404s(client):
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=["x"])
    url = reverse("trajectories:step_observation", args=[rollout.pk, 1])
    assert client.get(url, {"position": 3}).status_code == 404
    assert client.get(url, {"position": "x"}).status_code == 404
    assert client.get(reverse("trajectories:step_observation", args=[rollout.pk, 5])).status_code == 404
    assert client.get(reverse("trajectories:step_observation", args=[999999, 1])).status_code == 404


def test_ansi_output_renders_as_spans(client):
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, commands=["ls\n"], outputs=["\x1b[31mERROR\x1b[0m done"])
    html = detail(client, rollout).content.decode()
    assert '<span class="ansi-fg-red">ERROR</span> done' in html
    assert "\x1b" not in html


def test_hostile_trajectory_text_is_escaped(client):
    rollout = factories.make_rollout(verifier_fields={"reward": 0, "reason": "<script>alert('v')</script>"})
    payloads = [
        "<script>alert('m')</script>",
        '<a href="javascript:alert(1)">click</a>',
        "<img src=x onerror=alert(2)>",
    ]
    factories.add_step(
        rollout,
        1,
        message=payloads[0],
        reasoning=payloads[1],
        commands=[payloads[2]],
        outputs=[payloads[0] + payloads[2]],
        diff="+++ b/<img src=x onerror=alert(3)>\n+" + payloads[0],
    )
    html = detail(client, rollout).content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert 'href="javascript:' not in html
    assert "&lt;script&gt;alert(&#x27;m&#x27;)" in html


def test_query_count_is_bounded(client, django_assert_max_num_queries):
    rollout = factories.make_explored_rollout()
    for step_id in range(9, 40):
        factories.add_step(rollout, step_id, commands=["a\n", "b\n"], outputs=["x", "y"], kinds=["inspect"])
    with django_assert_max_num_queries(10):
        assert detail(client, rollout).status_code == 200
    with django_assert_max_num_queries(11):
        assert detail(client, rollout, "?only=benchmark").status_code == 200


def test_siblings_link_to_other_rollouts_of_the_entry(client):
    rollout = factories.make_explored_rollout()
    other = factories.make_rollout(task=rollout.task, model=rollout.model, harness=rollout.harness, index=1)
    unrelated = factories.make_rollout(task=rollout.task, index=2)
    html = detail(client, rollout).content.decode()
    assert reverse("trajectories:rollout_detail", args=[other.pk]) in html
    assert f"?a={rollout.pk}&amp;b={other.pk}" in html
    assert reverse("trajectories:rollout_detail", args=[unrelated.pk]) not in html


def test_a_long_campaigns_siblings_are_a_window_with_a_link_to_them_all(client):
    from trajectories.explorer import SIBLINGS_SHOWN

    rollout = factories.make_explored_rollout()
    others = [
        factories.make_rollout(task=rollout.task, model=rollout.model, harness=rollout.harness, index=i)
        for i in range(1, 40)
    ]
    html = detail(client, rollout).content.decode()
    siblings = html.split('class="siblings"')[1].split("</p>")[0]
    linked = [o for o in others if reverse("trajectories:rollout_detail", args=[o.pk]) + '"' in siblings]
    assert linked == others[: SIBLINGS_SHOWN - 1]  # rollout 1 is the first: the window starts at it
    assert "all 40" in siblings
    assert f"?task={rollout.task_id}&amp;model={rollout.model_id}&amp;harness={rollout.harness_id}" in siblings
    listed = client.get(reverse("trajectories:rollout_list"), {"task": rollout.task_id, "model": rollout.model_id,
                                                              "harness": rollout.harness_id})  # fmt: skip
    assert listed.status_code == 200 and reverse("trajectories:rollout_detail", args=[others[-1].pk]) in listed.content.decode()


def test_in_rollout_search_reports_steps_whose_full_output_matches(client):
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, outputs=["x" * 3000 + "needle-in-output"])
    factories.add_step(rollout, 2, message="no match here")
    factories.add_step(rollout, 3, commands=["grep NEEDLE-in-output\n"])
    url = reverse("trajectories:rollout_search", args=[rollout.pk])
    assert client.get(url, {"q": "needle-in-output"}).json()["step_ids"] == [1, 3]
    assert client.get(url, {"q": ""}).json()["step_ids"] == []
    assert client.get(reverse("trajectories:rollout_search", args=[999999]), {"q": "x"}).status_code == 404


def test_linked_outputs_sit_under_their_command(client):
    from trajectories.models import Observation

    rollout = factories.make_rollout()
    step = factories.add_step(rollout, 1, commands=["first-cmd\n", "second-cmd\n"])
    first, second = step.tool_calls.order_by("position")
    Observation.objects.create(step=step, position=0, tool_call=second, content="second-out")
    Observation.objects.create(step=step, position=1, tool_call=first, content="first-out")
    Observation.objects.create(step=step, position=2, content="loose-out")
    html = detail(client, rollout).content.decode()
    order = [html.index(text) for text in ("first-cmd", "first-out", "second-cmd", "second-out", "loose-out")]
    assert order == sorted(order)


def test_bare_queued_rollout_renders(client):
    task = factories.make_task(budget_sec=None, baseline_score=None, reference_score=None, direction="")
    rollout = factories.make_rollout(
        task=task, status="queued", reward=None, verifier_fields={}, agent_started_at=None, agent_finished_at=None,
        environment_setup_started_at=None, agent_setup_started_at=None, verifier_started_at=None,
    )
    response = detail(client, rollout)
    assert response.status_code == 200
    html = response.content.decode()
    assert "No steps" in html and "queued" in html
    data = plot_json(response)
    assert data["points"] == [] and data["end_t"] is None


def test_empty_outputs_are_not_shown(client):
    rollout = factories.make_rollout()
    factories.add_step(rollout, 1, commands=["cat > f <<'EOF'\nx\nEOF\n"], outputs=[""])
    html = detail(client, rollout).content.decode()
    assert 'class="observation' not in html


def test_verifier_score_files_show_their_score_and_fields(client):
    rollout = factories.make_explored_rollout(
        verifier_outputs={
            "baseline_score.json": {"score": 0.4918, "num_prompts": 8},
            "optimized_score.json": {"score": 0.5643, "clip": {"raw": 0.7572}, "note": "<b>x</b>"},
            "extra.json": [1, 2],
        }
    )
    html = detail(client, rollout).content.decode()
    assert re.search(r"<dt>optimized_score.json</dt><dd[^>]*>score <strong>0.5643</strong>", html)
    assert re.search(r"<dt>baseline_score.json</dt><dd[^>]*>score <strong>0.4918</strong>", html)
    assert "&quot;clip&quot;: {&quot;raw&quot;: 0.7572}" in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert re.search(r"<dt>extra.json</dt><dd[^>]*><details>", html)


def test_files_changed_card_shows_each_files_net_diff_and_the_steps(client):
    rollout = factories.make_explored_rollout(
        files_changed=[
            {"path": "/app/main.c", "step_ids": [4], "diff": "--- a/app/main.c\n+++ b/app/main.c\n@@ -1 +1 @@\n-int main(){return 1;}\n+int main(){}\n",
             "start_known": True, "end_known": True},
            {"path": "/app/run.sh", "step_ids": [2, 6], "diff": "", "start_known": False, "end_known": False},
            {"path": "/app/<b>x</b>", "step_ids": [4], "diff": "", "start_known": True, "end_known": True},
        ]
    )
    html = detail(client, rollout).content.decode()
    card = html[html.index('id="files"'):html.index('aria-label="Step tools"')]
    assert '<code>/app/main.c</code> <span class="d-add">+1</span> <span class="d-del">−1</span>' in card
    assert '<span class="d-del">-int main(){return 1;}</span><span class="d-add">+int main(){}</span>' in card
    assert 'changed at steps <a href="#step-2">#2</a>, <a href="#step-6">#6</a>' in card
    assert "could not be replayed" in card and "ended as it was before its first change" in card
    assert "&lt;b&gt;x&lt;/b&gt;" in card and "<b>x</b>" not in card


def test_files_changed_names_steps_on_other_pages_by_id(client, monkeypatch):
    from trajectories import explorer

    monkeypatch.setattr(explorer, "STEPS_PER_PAGE", 3)
    rollout = factories.make_explored_rollout(
        files_changed=[{"path": "/app/main.c", "step_ids": [4], "diff": "+x\n", "start_known": False, "end_known": True}]
    )
    card = detail(client, rollout).content.decode()
    assert 'changed at step <a href="?step=4">#4</a>' in card
    assert "never shown: the diff shows it as a new file" in card


@pytest.mark.parametrize(
    "files_changed, n_edits, shown",
    [
        (None, 1, "imported by an earlier release"),  # from before the analysis worked files out
        (None, 0, None),
        ([], 1, None),  # edits whose file names were computed: nothing to show
    ],
)
def test_files_changed_card_absent_or_explained(client, files_changed, n_edits, shown):
    rollout = factories.make_explored_rollout(files_changed=files_changed)
    rollout.n_edits = n_edits
    rollout.save(update_fields=["n_edits"])
    html = detail(client, rollout).content.decode()
    assert ('id="files"' in html) == (shown is not None)
    if shown:
        assert shown in html


def test_a_long_campaigns_page_reads_a_window_of_its_siblings_not_all_of_them(client):
    """A group of 6,536 repeats (scale_bench at a million steps) made its every rollout page load them all,
    as models, for a window of 12 links: 135 ms a page against 42 with 500."""
    from django.db.models.signals import post_init

    from trajectories.explorer import SIBLINGS_SHOWN

    rollout = factories.make_explored_rollout()
    for i in range(1, 60):
        factories.make_rollout(task=rollout.task, model=rollout.model, harness=rollout.harness, index=i)
    middle = Rollout.objects.get(task=rollout.task, model=rollout.model, harness=rollout.harness, index=30)
    made = []

    def count(sender, instance, **kwargs):
        made.append(instance.pk)

    post_init.connect(count, sender=Rollout)
    try:
        html = detail(client, middle).content.decode()
    finally:
        post_init.disconnect(count, sender=Rollout)
    # The first window's worth (enough for a small group), then the window itself, and the rollout: never the group.
    assert len(made) <= 2 * SIBLINGS_SHOWN + 3, len(made)
    siblings = html.split('class="siblings"')[1].split("</p>")[0]
    assert "#25 " in siblings and "#36 " in siblings and "#24 " not in siblings and "#37 " not in siblings
    assert "<strong>#31 " in siblings and "all 60" in siblings


@pytest.mark.parametrize("fields, shown", [
    # An imported trial without lock.json: a task digest and nothing else; the line began with " · task".
    ({"task_digest": "8d43ec4f2d06" + "0" * 52}, ["task 8d43ec4f2d06…"]),
    ({"harbor_version": "0.26.1", "verifier_mode": "separate"}, ["Harbor 0.26.1", "verifier sealed (separate)"]),
    ({"harbor_version": "0.26.1", "task_digest": "ab" * 32, "verifier_mode": "shared"},
     ["Harbor 0.26.1", "task abababababab…", "verifier shared"]),
])
def test_ran_with_separates_only_the_facts_it_shows(client, fields, shown):
    html = detail(client, factories.make_rollout(**fields)).content.decode()
    line = html.split('<dd id="run-settings" class="dot-list">', 1)[1].split("</dd>", 1)[0]
    parts = [re.sub(r"<[^>]+>", "", part).strip() for part in re.findall(r"<span>(.*?)</span>(?=<span>|$)", line)]
    assert parts == shown
    assert "·" not in line  # the separators are drawn between the parts shown (explorer.css .dot-list)
