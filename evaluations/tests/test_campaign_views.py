"""Campaign pages: public grid and JSON, staff-only cancel actions, live refresh."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from evaluations.models import Campaign
from evaluations.running.campaigns import create_campaign
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, utility_entry


@pytest.fixture
def campaign(db):
    version = import_examples()
    model, harness = utility_entry("nop")
    return create_campaign(model, harness, version, k=2, backend="bubblewrap", enqueue=False)


@pytest.fixture
def staff(db):
    return User.objects.create_user("staff", password="pw", is_staff=True)


def test_grid_shows_every_task_and_rollout(client, campaign):
    first = campaign.rollouts.order_by("pk").first()
    now = timezone.now()
    Rollout.objects.filter(pk=first.pk).update(
        status=RolloutStatus.RUNNING, agent_started_at=now - timedelta(seconds=90), n_steps=4
    )
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.RUNNING, started_at=now - timedelta(minutes=2))
    response = client.get(f"/campaigns/{campaign.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    for task in ("count_primes", "ring_classifier", "sort8_network"):
        assert task in html
    assert html.count('data-rollout="') == 6
    assert f'href="/rollouts/{first.pk}/"' in html
    # count_primes has a 10-minute budget; the page may be drawn a few seconds after `now` on a loaded machine.
    shown = re.search(r"4 steps · 1m (\d\d)s · 8m (\d\d)s left", html)
    assert shown, html
    elapsed, left = 60 + int(shown[1]), 8 * 60 + int(shown[2])
    assert 90 <= elapsed < 100 and elapsed + left == 600
    assert "Cancel" not in html  # anonymous visitors get no buttons


def test_progress_json(client, campaign):
    rollouts = list(campaign.rollouts.order_by("pk"))
    Rollout.objects.filter(pk=rollouts[0].pk).update(status=RolloutStatus.FINISHED, reward=0.5)
    data = client.get(f"/campaigns/{campaign.pk}/progress.json").json()
    assert data["total"] == 6 and data["done"] == 1
    assert data["counts"]["finished"] == 1 and data["counts"]["queued"] == 5
    cells = {cell["id"]: cell for row in data["rows"] for cell in row["cells"]}
    assert cells[rollouts[0].pk]["reward"] == 0.5
    assert data["active"] is True
    assert data["counts_text"] == "queued 5, finished 1"


def test_the_job_line_counts_what_the_statuses_say(client, campaign):
    """A cancelled rollout (its trial stopped with CancelledError) was "finished" and "1 error" beside "cancelled 1"."""
    rollouts = list(campaign.rollouts.order_by("pk"))
    Rollout.objects.filter(pk__in=[r.pk for r in rollouts[:2]]).update(status=RolloutStatus.FINISHED, reward=0.5)
    Rollout.objects.filter(pk=rollouts[2].pk).update(status=RolloutStatus.CANCELLED, exception_type="CancelledError")
    Rollout.objects.filter(pk__in=[r.pk for r in rollouts[3:]]).delete()
    data = client.get(f"/campaigns/{campaign.pk}/progress.json").json()
    assert data["counts_text"] == "finished 2, cancelled 1"
    assert data["job_line"] == "2/3 finished, 0 errors, 1 cancelled"
    assert "2/3 finished, 0 errors, 1 cancelled" in client.get(f"/campaigns/{campaign.pk}/").content.decode()


def test_cancel_is_staff_only_and_asks_first(client, campaign, staff):
    rollout = campaign.rollouts.order_by("pk").first()
    # Anonymous: sent to log in; logged in but not staff: refused.
    assert client.post(f"/campaigns/rollouts/{rollout.pk}/cancel/").status_code == 302
    assert client.post(f"/campaigns/{campaign.pk}/cancel/").status_code == 302
    User.objects.create_user("visitor", password="pw")
    client.login(username="visitor", password="pw")
    assert client.post(f"/campaigns/{campaign.pk}/cancel/").status_code == 403
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.QUEUED

    client.login(username="staff", password="pw")
    question = client.get(f"/campaigns/rollouts/{rollout.pk}/cancel/")
    assert question.status_code == 200 and "Yes, cancel" in question.content.decode()
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.QUEUED  # asking changes nothing
    assert "6 rollouts that are queued or running stop" in client.get(f"/campaigns/{campaign.pk}/cancel/").content.decode()
    response = client.post(f"/campaigns/rollouts/{rollout.pk}/cancel/")
    assert response.status_code == 302 and response["Location"] == f"/campaigns/{campaign.pk}/"
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.CANCELLED and rollout.cancel_requested

    running = campaign.rollouts.filter(status=RolloutStatus.QUEUED).first()
    Rollout.objects.filter(pk=running.pk).update(status=RolloutStatus.RUNNING, heartbeat_at=timezone.now())
    client.post(f"/campaigns/{campaign.pk}/cancel/")
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.CANCELLED
    running.refresh_from_db()
    # A running rollout is stopped by its worker, which sees the flag.
    assert running.status == RolloutStatus.RUNNING and running.cancel_requested
    assert not campaign.rollouts.filter(status=RolloutStatus.QUEUED).exists()


def test_staff_see_cancel_buttons(client, campaign, staff):
    client.login(username="staff", password="pw")
    html = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "Cancel campaign" in html
    assert html.count('class="cancel-rollout"') == 6


def test_campaign_list(client, campaign):
    html = client.get("/campaigns/").content.decode()
    assert f'href="/campaigns/{campaign.pk}/"' in html and "nop" in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_grid_refreshes_itself(live_server, page):
    version = import_examples()
    model, harness = utility_entry("nop")
    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(name="sort8_network"), k=1,
                               backend="bubblewrap", enqueue=False)
    rollout = campaign.rollouts.get()
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    cell = page.locator(f'td[data-rollout="{rollout.pk}"]')
    assert cell.locator('[data-cell="status"]').inner_text() == "queued"
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.FINISHED, reward=0.75)
    page.wait_for_function(
        # A function, not an expression string: Playwright evals a string, which the site's CSP refuses.
        f"() => document.querySelector('td[data-rollout=\"{rollout.pk}\"] [data-cell=\"reward\"]').textContent === '0.750'",
        timeout=10_000,
    )
    assert "status-finished" in cell.get_attribute("class")


def test_one_number_per_rollout_everywhere_for_its_life(client, campaign, staff):
    """A rollout added to an entry read "rollout 1" while it ran and "rollout 2" once finished; siblings shared "#1"."""
    model, harness, version = campaign.model, campaign.harness, campaign.version
    second = create_campaign(model, harness, version, k=2, backend="bubblewrap", enqueue=False)
    sort8 = list(Rollout.objects.filter(task__name="sort8_network").order_by("pk"))
    assert [r.number for r in sort8] == [1, 2, 3, 4]  # the second campaign's come after the first's
    added = sort8[2]
    client.force_login(staff)
    grid = client.get(f"/campaigns/{second.pk}/progress.json").json()
    cells = {c["id"]: c for row in grid["rows"] for c in row["cells"]}
    assert cells[added.pk]["number"] == 3
    assert "rollout 3 of sort8_network" in client.get(f"/campaigns/rollouts/{added.pk}/cancel/").content.decode()
    assert "rollout 3" in client.get(f"/campaigns/{second.pk}/").content.decode()
    # Its trial ends and is imported: still number 3, and the siblings stay distinct.
    Rollout.objects.filter(pk=added.pk).update(status=RolloutStatus.FINISHED, reward=0.7196,
                                               started_at=timezone.now() - timedelta(days=30))
    page = client.get(f"/rollouts/{added.pk}/").content.decode()
    assert "rollout 3</h1>" in page and "#1 (—)" in page and "#3 (0.7196)" in page and page.count("#3 (") == 1


def test_cancel_is_offered_only_where_it_works(client, campaign, staff):
    client.force_login(staff)
    ended = campaign.rollouts.order_by("pk").first()
    Rollout.objects.filter(pk=ended.pk).update(status=RolloutStatus.FINISHED, reward=0.0)
    page = client.get(f"/campaigns/rollouts/{ended.pk}/cancel/").content.decode()
    assert "It has ended (finished): there is nothing to cancel." in page and "Yes, cancel" not in page
    grid = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    cell = grid.split(f'data-rollout="{ended.pk}"', 1)[1].split("</td>", 1)[0]
    assert 'title="Cancel this rollout" hidden' in cell
    campaign.rollouts.update(status=RolloutStatus.FINISHED)
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.FINISHED)
    page = client.get(f"/campaigns/{campaign.pk}/cancel/").content.decode()
    assert "there is nothing to cancel" in page and "Yes, cancel" not in page
    # A POST all the same (a second click, a resend) changes nothing and says so.
    response = client.post(f"/campaigns/{campaign.pk}/cancel/", follow=True)
    assert f"Campaign {campaign.pk} has ended (finished): there is nothing to cancel." in response.content.decode()
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.FINISHED


def test_the_campaign_says_what_harbors_job_view_says(client, campaign):
    rollouts = list(campaign.rollouts.order_by("pk"))
    start = timezone.now() - timedelta(hours=3)
    for n, rollout in enumerate(rollouts[:4]):
        Rollout.objects.filter(pk=rollout.pk).update(
            status=RolloutStatus.FINISHED, reward=[0.0, 0.0, 0.55, 1.0][n], n_input_tokens=3_000_000, n_output_tokens=625_000,
            cost_usd=53.0, started_at=start, finished_at=start + timedelta(hours=2), exception_type="AgentTimeoutError" if n == 0 else "",
        )
    html = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "4/6 finished, 1 error, 14.5 M tokens, $212, 8.0 h" in html
    bars = [int(part.split('"')[0]) for part in html.split('data-count="')[1:]]
    assert bars == [2, 0, 0, 0, 0, 1, 0, 0, 0, 1]
    # The page's live refresh gets the same line (and bars) from the progress JSON.
    progress = client.get(f"/campaigns/{campaign.pk}/progress.json").json()
    assert progress["job_line"] == "4/6 finished, 1 error, 14.5 M tokens, $212, 8.0 h"
    assert [b["count"] for b in progress["reward_bins"]] == bars


@pytest.mark.django_db
def test_an_unknown_campaigns_progress_is_a_json_404(client):
    """The grid's script reads progress.json; an unknown campaign answered the HTML 404 page."""
    response = client.get("/campaigns/999999/progress.json")
    assert response.status_code == 404 and response.json() == {"error": "no campaign 999999"}


def test_staff_can_cancel_from_a_live_rollout_page_and_come_back_to_it(client, campaign, staff):
    rollout = campaign.rollouts.order_by("pk").first()
    url = f"/rollouts/{rollout.pk}/"
    assert 'id="cancel-rollout"' not in client.get(url).content.decode()  # visitors: no button
    client.force_login(staff)
    page = client.get(url).content.decode()
    banner = page.split('id="live"', 1)[1].split("</div>", 1)[0]
    assert 'id="cancel-rollout"' in banner and 'name="csrfmiddlewaretoken"' in banner
    assert f'action="/campaigns/rollouts/{rollout.pk}/cancel/"' in banner
    response = client.post(f"/campaigns/rollouts/{rollout.pk}/cancel/", {"next": url})
    assert response.status_code == 302 and response["Location"] == url
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.CANCELLED
    page = client.get(url).content.decode()
    # Ended: no cancel, no regrade, and no claim that it was graded.
    assert 'id="cancel-rollout"' not in page and "regrade-form" not in page
    assert "Graded once" not in page and "Not graded: it was cancelled before its verifier ran" in page
    # Any other "next" is not followed: the grid's link comes back to the grid.
    other = campaign.rollouts.order_by("pk")[1]
    response = client.post(f"/campaigns/rollouts/{other.pk}/cancel/", {"next": "https://elsewhere.example/"})
    assert response["Location"] == f"/campaigns/{campaign.pk}/"


def test_a_long_harness_name_wraps_on_the_campaign_page(client, campaign):
    """A 200-character harness name made the page 5,438 px wide: its title and the grid's task names wrap."""
    import re
    from pathlib import Path

    campaign.harness.name = "h" * 200
    campaign.harness.save()
    html = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    title = re.search(r'<h1 class="([^"]*)">Campaign \d+: [^<]*/ ' + "h" * 200, html)
    assert title and "campaign-title" in title.group(1).split()
    assert '<th scope="row">' in html.split('class="campaign-grid"', 1)[1]
    css = re.sub(r"/\*.*?\*/", "", (Path(__file__).resolve().parents[2] / "static" / "css" / "campaigns.css").read_text(), flags=re.S)
    rules = dict(re.findall(r"([^{}]+)\{([^}]*)\}", css))
    declarations = {selector.strip(): body for selector, body in rules.items()}
    assert "overflow-wrap: anywhere" in declarations[".campaign-title"]
    assert "overflow-wrap: anywhere" in declarations['table.campaign-grid th[scope="row"]']
    assert "white-space: normal" in declarations['table.campaign-grid th[scope="row"]']
