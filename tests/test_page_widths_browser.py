"""No public page is wider than the window, at 1440 px or on a 390 px phone: a wide table scrolls in its own box."""
from __future__ import annotations

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ["/?version=synthetic", "/heatmap/?version=synthetic", "/tasks/", "/tasks/synthetic/synthetic_task_01/",
         "/rollouts/", "/failures/", "/models/synthetic-model-01/", "/api/", "/campaigns/", "/search/?q=error"]


def long_names() -> None:
    """What real data holds and a QA pass found pages widened by: a task's 64-character checksum (the task
    page, 584 px on a phone), a 200-character harness (the campaigns table, 2,675 px) and model (the rollout
    filters' select boxes, 1,609 px)."""
    from agents.models import AgentModel, Harness
    from evaluations.models import Campaign
    from tasks.models import Task

    Task.objects.filter(name="synthetic_task_01").update(checksum="1156466e" * 8)
    model = AgentModel.objects.filter(name="synthetic-model-02").get()
    AgentModel.objects.filter(pk=model.pk).update(display_name="m" * 200)
    harness = Harness.objects.create(name="h" * 200, version="v" * 50)
    Campaign.objects.create(model=model, harness=harness, version=Task.objects.get(name="synthetic_task_01").version, k=1)


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_no_page_is_wider_than_the_window(browser, live_server, width, height):
    """`/tasks/` was 1,042 px and `/rollouts/` 1,176 px wide on a phone: the whole page scrolled sideways."""
    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    long_names()
    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    widths = {}
    for url in PAGES:
        assert page.goto(live_server.url + url).status == 200, url
        widths[url] = page.evaluate("() => document.documentElement.scrollWidth")
    context.close()
    assert widths == {url: width for url in PAGES}
