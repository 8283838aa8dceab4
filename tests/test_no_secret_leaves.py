"""No secret the agent printed leaves the server: every public page, fragment, download and export of a trial (issue 43).

A real shared trial gets secrets planted in every spelling an attacker's
review found (trajectories.tests.planted_secrets: its messages, reasoning,
tool calls, outputs, a subagent, trial.log, exception.txt, result.json,
config.json, the verifier's stdout, reward.json and outputs, a terminal
pane, a binary file). It is imported as any trial is, its files go to the
artifact storage, and then an anonymous visitor asks for every URL the
site has for it (every pattern of the resolver: a new view fails this test
until it is listed here) and searches for each secret: no response may
show one, and no search may find the trial by one.
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from evaluations.tests.board_factories import build_boards
from trajectories.models import Observation, Rollout, Step, SubTrajectory
from trajectories.reading import trial_tabs
from trajectories.search import query as search
from trajectories.services import store_trial_files
from trajectories.tests import planted_secrets
from trajectories.tests.real_trials import GROK

from .url_patterns import url_patterns

pytestmark = pytest.mark.django_db

# Patterns whose view shows nothing of a trial to an anonymous visitor: staff's forms and actions
# (tests/test_staff_views.py: login or 403), a campaign's pages (a campaign holds no trial text), and the
# site's login and logout.
STAFF_OR_NO_TRIAL_TEXT = {
    "trajectories:upload", "trajectories:upload_job", "trajectories:failure_label", "trajectories:analyze",
    "evaluations:import_results", "evaluations:campaign_new", "evaluations:campaign_cancel",
    "evaluations:rollout_cancel", "evaluations:regrade_rollout", "evaluations:regrade_campaign",
    "evaluations:regrade_task", "evaluations:campaign_list", "evaluations:campaign_detail",
    "evaluations:campaign_progress", "login", "logout",
    # A team's submissions: logged-in members and staff only (submissions/tests/test_submissions.py).
    "submissions:list", "submissions:new", "submissions:detail", "submissions:regrade", "submissions:verify",
    "submissions:self_report", "submissions:publish", "submissions:reject",
}


@pytest.fixture
def planted(settings, tmp_path, shared_tasks_dir, shared_trials_dir):
    """The real grok trial with every secret planted, imported, its files in the artifact storage."""
    from tasks.services import import_tasks
    from trajectories.services import import_path

    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "artifacts")}}}
    import_tasks(shared_tasks_dir, version="1.1")
    folder = planted_secrets.planted_copy(shared_trials_dir / GROK, tmp_path / "trials")
    report = import_path(folder.parent)
    assert report.ok, report.as_dict()
    rollout = Rollout.objects.select_related("task__version", "model").get()
    store_trial_files(rollout, folder)
    rollout.refresh_from_db()
    build_boards()  # as the boards worker would (a page never builds one)
    return rollout


def urls_of(rollout: Rollout) -> dict[str, list[str]]:
    """Every URL of the site that shows something of `rollout`, by URL pattern."""
    pk, task, version = rollout.pk, rollout.task.name, rollout.task.version.name
    steps = list(Step.objects.filter(rollout=rollout).order_by("position").values_list("step_id", "subtrajectory_id", "position"))
    main = [(step_id, position) for step_id, sub, position in steps if sub is None]
    observations = Observation.objects.filter(step__rollout=rollout).values_list("step__step_id", "step__subtrajectory_id", "position")
    subs = list(SubTrajectory.objects.filter(rollout=rollout).values_list("pk", flat=True))
    paths = [entry["path"] for entry in rollout.artifacts]
    assert subs and paths and main, "the planted trial has subagents, files and steps"

    def observation_url(step_id, sub, position):
        url = reverse("trajectories:observation_text", args=[pk, step_id, position])
        return f"{url}?sub={sub}" if sub else url

    def step_observation_url(step_id, sub):
        url = reverse("trajectories:step_observation", args=[pk, step_id])
        return f"{url}?sub={sub}" if sub else url

    api_filters = f"?version={version}&task={rollout.task_id}"
    return {
        "trajectories:rollout_list": ["/rollouts/", f"/rollouts/?task={rollout.task_id}&model={rollout.model_id}"],
        "trajectories:rollout_detail": [f"/rollouts/{pk}/", f"/rollouts/{pk}/?only=inspect", f"/rollouts/{pk}/?only=edit"],
        "trajectories:step_fragment": [f"/rollouts/{pk}/steps/?first={main[0][1]}&last={main[-1][1]}"],
        "trajectories:step_observation": sorted({step_observation_url(step_id, sub) for step_id, sub, _ in steps}),
        "trajectories:observation_text": [observation_url(*row) for row in observations],
        "trajectories:subagent_detail": [reverse("trajectories:subagent_detail", args=[pk, sub]) for sub in subs],
        "trajectories:rollout_live": [f"/rollouts/{pk}/live.json", f"/rollouts/{pk}/live.json?plot=1"],
        "trajectories:rollout_curve": [f"/rollouts/{pk}/curve.json?x=t&low=0&high=1e9"],
        "trajectories:trial_file": [reverse("trajectories:trial_file", args=[pk, path]) for path in paths],
        "trajectories:trial_tab": [
            reverse("trajectories:trial_tab", args=[pk, slug]) + query
            for slug, _ in trial_tabs.TABS for query in ("", "?fetch=1")
        ],
        "trajectories:artifact_view": [reverse("trajectories:artifact_view", args=[pk, path]) for path in paths],
        "trajectories:rollout_search": [],  # searched for each secret below
        "trajectories:job_detail": [reverse("trajectories:job_detail", args=[rollout.job_id])],
        "trajectories:search": [],  # searched for each secret below
        "trajectories:compare": [f"/compare/?a={pk}&b={pk}"],
        "trajectories:failures": ["/failures/", f"/failures/?task={rollout.task_id}"],
        "trajectories:failures_export_csv": ["/failures/export.csv"],
        "trajectories:failures_export_json": ["/failures/export.json"],
        "evaluations:leaderboard": ["/", f"/?version={version}"],
        "evaluations:heatmap": [f"/heatmap/?version={version}"],
        "evaluations:leaderboard_charts": [f"/charts/?version={version}", f"/charts/?version={version}&chart=time",
                                           f"/charts/?version={version}&chart=published"],
        "evaluations:task_detail": [reverse("evaluations:task_detail", args=[version, task])],
        "evaluations:model_detail": [reverse("evaluations:model_detail", args=[rollout.model.name])],
        "evaluations:api_docs": ["/api/"],
        "evaluations:api_leaderboard": [f"/api/v1/leaderboard/?version={version}"],
        "evaluations:api_leaderboard_csv": [f"/api/v1/leaderboard.csv?version={version}"],
        "evaluations:api_heatmap": [f"/api/v1/heatmap/?version={version}"],
        "evaluations:api_heatmap_csv": [f"/api/v1/heatmap.csv?version={version}"],
        "evaluations:api_time_curves": [f"/api/v1/time-curves/?version={version}"],
        "evaluations:compare_entries": [f"/compare/entries/?version={version}"],
        "evaluations:api_compare": [f"/api/v1/compare/?version={version}"],
        "evaluations:api_compare_csv": [f"/api/v1/compare.csv?version={version}"],
        "evaluations:api_time_curves_csv": [f"/api/v1/time-curves.csv?version={version}"],
        "evaluations:api_rollouts": ["/api/v1/rollouts/", f"/api/v1/rollouts/{api_filters}"],
        "evaluations:api_rollouts_csv": ["/api/v1/rollouts.csv", f"/api/v1/rollouts.csv{api_filters}"],
        "tasks:catalogue": ["/tasks/"],
    }


def test_every_url_of_the_site_is_asked_for_or_shows_no_trial():
    """A new view is either asked for below, or said to show nothing of a trial to an anonymous visitor."""
    ours = {name for name, _ in url_patterns() if not name.startswith("admin:")}
    # The names written in urls_of (its dict's keys: one constant tuple, or constants one by one).
    constants = urls_of.__code__.co_consts
    written = {c for c in constants if isinstance(c, str)} | {c for t in constants if isinstance(t, tuple) for c in t}
    listed = written & ours
    assert ours - listed - STAFF_OR_NO_TRIAL_TEXT == set()


def test_no_page_fragment_download_or_export_shows_a_planted_secret(planted):
    client = Client(raise_request_exception=True)
    found = []
    asked = 0
    for name, urls in urls_of(planted).items():
        for url in urls:
            headers = {"HTTP_X_REQUESTED_WITH": "fetch"} if url.endswith("?fetch=1") else {}
            response = client.get(url.removesuffix("?fetch=1"), **headers)
            # A version scored by the verifier's reward has no time curves (a 404 that says so).
            assert response.status_code == (404 if "time-curves" in url else 200), (url, response.status_code)
            asked += 1
            body = b"".join(response.streaming_content) if response.streaming else response.content
            leaked = planted_secrets.leaks(body.decode("utf-8", "replace"))
            if leaked:
                found.append(f"{url}: {', '.join(leaked)}")
    assert asked > 40
    assert found == [], "\n".join(found)


def test_the_staff_and_campaign_pages_show_no_planted_secret_to_an_anonymous_visitor(planted):
    client = Client(raise_request_exception=True)
    for url in ("/rollouts/upload/", f"/regrade/rollouts/{planted.pk}/", "/campaigns/", "/failures/analyze/"):
        response = client.get(url)
        assert response.status_code < 500
        assert planted_secrets.leaks(response.content.decode()) == [], url


def test_no_search_finds_the_trial_by_a_planted_secret(planted):
    client = Client(raise_request_exception=True)
    for what, core in planted_secrets.all_cores():
        for q in (core, core[2:-2]):
            assert search.search(q).hits == [], what
            assert search.search(q, search.Filters(rollout=planted.pk), substring=True).hits == [], what
            page = client.get("/search/", {"q": q})
            assert page.status_code == 200 and 'class="hit-link"' not in page.content.decode(), what
            found = client.get(f"/rollouts/{planted.pk}/search/", {"q": q}).json()
            assert found["step_ids"] == [], what


def test_what_was_masked_is_still_there_to_read(planted):
    """The masked text keeps its words: the names, schemes and commands around each secret."""
    client = Client()
    page = client.get(reverse("trajectories:trial_tab", args=[planted.pk, "exception"])).content.decode()
    for shown in ("Authorization: Token ********", "--api-key ********", "?api_key=********&amp;limit=5", "OPENAI_API_KEY"):
        assert shown in page
    log = client.get(reverse("trajectories:trial_file", args=[planted.pk, "trial.log"]))
    assert b"INFO starting\n" in b"".join(log.streaming_content)
    binary = client.get(reverse("trajectories:trial_file", args=[planted.pk, "agent/weights.bin"]))
    data = b"".join(binary.streaming_content)
    assert len(data) == len(planted_secrets.block().encode()) + 5, "a binary keeps its size"
    assert data.startswith(b"\x00\x01\x02OPENAI_API_KEY=*****")
    assert search.search("OPENAI_API_KEY").hits, "the names around a secret are still found"
