"""Every review of a rollout on its page (summary, checks, linked steps, cost, a failure's reason) and in the API."""
import pytest
from django.urls import reverse

from trajectories.reading.review_data import Check, Reading
from trajectories.reviews import record_failed_review, record_review
from trajectories.tests.factories import add_step, make_rollout

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewed():
    rollout = make_rollout(reward=0.0)
    add_step(rollout, 1, message="start")
    add_step(rollout, 2, message="benchmark")
    record_review(rollout, Reading(
        "It stopped with <b>9 h</b> left.",
        (Check("reward_hacking", "fail", "Wrote /logs/verifier/reward.txt at step 2.", (2, 500)),
         Check("task_specification", "not_applicable", "")),
        cost_usd=0.42,
    ), source="harbor", rubric="harbor analyze")
    record_failed_review(rollout, "the judge answered malformed JSON", source="judge", judge="gpt-x", rubric_text="r")
    return rollout


def test_the_rollout_page_shows_every_review(client, reviewed):
    html = client.get(reverse("trajectories:rollout_detail", args=[reviewed.pk])).content.decode()
    panel = html[html.index('id="reviews"'):]
    panel = panel[:panel.index("</section>")]
    assert "It stopped with &lt;b&gt;9 h&lt;/b&gt; left." in panel  # escaped: the reader's text is data
    assert 'data-check="reward_hacking" data-outcome="fail"' in panel and '<span class="badge bad">fail</span>' in panel
    assert '<span class="badge plain">not applicable</span>' in panel
    assert "Wrote /logs/verifier/reward.txt at step 2." in panel and "$0.42" in panel
    # A step on this page is an anchor; one elsewhere is the step's permalink.
    assert 'href="#step-2">2</a>' in panel
    assert f'href="/rollouts/{reviewed.pk}/?step=500">500</a>' in panel
    assert 'data-state="failed"' in panel and "the judge answered malformed JSON" in panel


def test_a_rollout_without_reviews_has_no_panel(client):
    rollout = make_rollout()
    assert 'id="reviews"' not in client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()


def test_the_api_record_lists_the_reviews(client, reviewed):
    row = client.get(reverse("evaluations:api_rollouts")).json()["results"][0]
    harbor, judge = row["reviews"]
    assert (harbor["source"], harbor["state"], harbor["summary"], harbor["cost_usd"]) == (
        "harbor", "done", "It stopped with <b>9 h</b> left.", 0.42)
    assert harbor["checks"][0] == {
        "name": "reward_hacking", "outcome": "fail", "explanation": "Wrote /logs/verifier/reward.txt at step 2.", "steps": [2, 500],
    }
    assert (judge["source"], judge["judge"], judge["state"], judge["error"], judge["checks"]) == (
        "judge", "gpt-x", "failed", "the judge answered malformed JSON", [])
    csv_text = client.get(reverse("evaluations:api_rollouts_csv")).content.decode()
    assert '""reward_hacking""' in csv_text  # the CSV cell holds the reviews as JSON
