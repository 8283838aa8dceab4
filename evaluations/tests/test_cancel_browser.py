"""Cancel in a real Chromium: "Cancel…" shows only on the grid's cells it can cancel; a live rollout page cancels its rollout."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from evaluations.running.campaigns import create_campaign
from trajectories.models import Rollout, RolloutStatus

from evaluations.tests.runner_helpers import import_examples, utility_entry

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login_staff(page, live_server) -> None:
    client = Client()
    client.force_login(User.objects.create_user("staff", password="pw", is_staff=True))
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": live_server.url}])


def test_cancel_shows_only_on_cells_it_can_cancel(page, live_server):
    """a.cancel-rollout's display: inline-block beat its hidden attribute: finished and cancelled cells showed it."""
    model, harness = utility_entry("nop")
    campaign = create_campaign(model, harness, import_examples(), k=2, backend="bubblewrap", enqueue=False)
    finished, cancelled, *queued = campaign.rollouts.order_by("pk")
    Rollout.objects.filter(pk=finished.pk).update(status=RolloutStatus.FINISHED, reward=0.5)
    Rollout.objects.filter(pk=cancelled.pk).update(status=RolloutStatus.CANCELLED)
    login_staff(page, live_server)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    for ended in (finished, cancelled):
        assert not page.locator(f'td[data-rollout="{ended.pk}"] a.cancel-rollout').is_visible()
    for waiting in queued:
        assert page.locator(f'td[data-rollout="{waiting.pk}"] a.cancel-rollout').is_visible()


def test_staff_cancel_a_live_rollout_from_its_page(page, live_server):
    model, harness = utility_entry("nop")
    campaign = create_campaign(model, harness, import_examples(), k=1, backend="bubblewrap", enqueue=False)
    rollout = campaign.rollouts.order_by("pk").first()
    login_staff(page, live_server)
    url = live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk])
    page.goto(url)
    # The first answer is no: nothing is sent.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#cancel-rollout button")
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.QUEUED
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#cancel-rollout button")
    page.wait_for_url(url)
    page.wait_for_selector("#status-reason")
    rollout.refresh_from_db()
    assert rollout.status == RolloutStatus.CANCELLED
    assert page.locator("#live").count() == 0 and page.locator("#cancel-rollout").count() == 0
    assert page.locator(".regrade-form").count() == 0
