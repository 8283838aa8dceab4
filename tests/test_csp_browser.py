"""Every main page works in a real Chromium under the site's strict Content-Security-Policy.

The policy (settings.SECURE_CSP) allows scripts and styles from our own
origin and the request's nonce only: no inline handlers, no style
attributes. Each page is opened with a listener for `securitypolicyviolation`
events installed before any of its scripts, and console errors and page
errors are collected; the charts must be drawn, the explorer's keys, find
and lazily loaded outputs must work, and the site's login must log in (to the admin too).
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from evaluations.models import Campaign
from evaluations.tests.board_factories import build_boards, hand_table
from trajectories.tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber} ${e.sample}`);
});
"""
GREEN, RED = "rgb(10, 200, 30)", "rgb(200, 10, 30)"


@pytest.fixture
def watched(page):
    """The page, and what went wrong on it: CSP violations, console errors, uncaught errors, missing headers."""
    problems: list[str] = []
    page.add_init_script(LISTEN)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" and "favicon.ico" not in (m.location or {}).get("url", "") else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def check_header(response):
        if response.request.resource_type == "document" and "content-security-policy" not in response.headers:
            problems.append(f"no Content-Security-Policy on {response.url}")

    def check_status(response):
        # Chromium asks for /favicon.ico by itself; the site has none.
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            problems.append(f"HTTP {response.status} for {response.url}")

    page.on("response", check_header)
    page.on("response", check_status)
    return page, problems


def violations(page) -> list[str]:
    return page.evaluate("() => window.__cspViolations")


def visit(page, problems, url: str, *selectors: str, status: int = 200) -> None:
    response = page.goto(url)
    assert response.status == status, (url, response.status)
    if status != 200:  # the expected error page itself is no problem
        problems[:] = [p for p in problems if url not in p and "status of %d" % status not in p]
    for selector in selectors:
        # A chart draws once scrolled to (static/js/charts.js): bring its container into view first.
        container = page.locator(selector.split()[0])
        if container.count() == 1:
            container.scroll_into_view_if_needed()
        page.wait_for_selector(selector, state="attached")
    page.wait_for_load_state("networkidle")
    assert violations(page) == [], url
    assert problems == [], url


@pytest.fixture
def site(db):
    world = hand_table()
    rollout = factories.make_explored_rollout()
    other = factories.make_explored_rollout(task=rollout.task)
    # A long output with 24-bit colours: the preview shows the first, the full output (loaded on demand) both.
    factories.add_step(
        rollout, 9, message="Look at \x1b[1mthis\x1b[0m.", commands=["cat log\n"], kinds=["inspect"],
        outputs=["\x1b[38;2;10;200;30mGREEN\x1b[0m " + "x" * 900 + " \x1b[38;2;200;10;30mRED\x1b[0m"],
    )
    rollout.n_steps = 9
    rollout.save(update_fields=["n_steps"])
    campaign = Campaign.objects.create(model=rollout.model, harness=rollout.harness, version=rollout.task.version)
    staff = get_user_model().objects.create_user("staff", password="a-long-password", is_staff=True, is_superuser=True)
    build_boards()  # as the boards worker would (a page never builds one)
    return {"world": world, "rollout": rollout, "other": other, "campaign": campaign, "staff": staff}


def test_public_pages_work_under_the_csp(watched, live_server, site):
    page, problems = watched
    base = live_server.url
    world, rollout = site["world"], site["rollout"]
    visit(page, problems, base + "/", "#chart-bars .main-svg", "#chart-budget .main-svg", "#chart-at-k .main-svg")
    # plotly's rules went into the nonce'd element (its hover label and modebar depend on them).
    assert page.evaluate("() => document.getElementById('plotly.js-style-global').sheet.cssRules.length") > 10
    visit(page, problems, base + "/heatmap/", "#heatmap-table td")
    visit(page, problems, base + "/models/model-a/", "table")
    visit(page, problems, base + "/failures/", "main h1")
    visit(page, problems, base + "/rollouts/", "main h1")
    visit(page, problems, base + "/tasks/", "main h1")
    visit(page, problems, base + f"/tasks/{world['version'].name}/t1/", "main h1")
    visit(page, problems, base + f"/search/?q=benchmark", "main h1")
    visit(page, problems, base + "/api/", "main h1")
    visit(page, problems, base + f"/compare/?a={rollout.pk}&b={site['other'].pk}", "#curve-plot .main-svg")
    visit(page, problems, base + "/campaigns/", "main h1")
    visit(page, problems, base + f"/campaigns/{site['campaign'].pk}/", "main h1")
    visit(page, problems, base + "/no-such-page/", "main h1", status=404)
    visit(page, problems, base + "/models/%00/", "main h1", status=400)


def test_rollout_explorer_works_under_the_csp(watched, live_server, site):
    page, problems = watched
    rollout = site["rollout"]
    visit(page, problems, live_server.url + f"/rollouts/{rollout.pk}/", "#curve-plot .main-svg")
    # Sizes from data attributes, set through the CSSOM by layout.js.
    assert page.evaluate("() => document.querySelector('.timeline-strip .mark').style.left").endswith("%")
    assert page.evaluate("() => getComputedStyle(document.querySelector('[data-rgb-fg]')).color") == GREEN
    # Keys.
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.wait_for_function("() => document.querySelector('#steps .step.current') !== null")
    # Find: Enter stays on the page (the form no longer has an inline onsubmit).
    url = page.url
    page.fill("#step-search", "latency")
    page.press("#step-search", "Enter")
    page.wait_for_selector("mark.find-hit")
    assert page.url.split("#")[0] == url.split("#")[0]
    # The full output loads on demand, its colours applied too.
    page.locator("#step-9 button.load-output").click()
    page.wait_for_selector("#step-9 [data-rgb-fg='200,10,30']")
    assert page.evaluate("() => getComputedStyle(document.querySelector(\"[data-rgb-fg='200,10,30']\")).color") == RED
    page.wait_for_load_state("networkidle")
    assert violations(page) == []
    assert problems == []


def test_the_sites_login_and_staff_pages_work_under_the_csp(watched, live_server, site):
    page, problems = watched
    # A staff page sends an anonymous visitor to the site's login, which brings them back.
    visit(page, problems, live_server.url + "/campaigns/new/", "#id_username")
    assert "/login/?next=/campaigns/new/" in page.url
    page.fill("#id_username", "staff")
    page.fill("#id_password", "a-long-password")
    page.click("form.login-form button[type=submit]")
    page.wait_for_url("**/campaigns/new/")
    assert violations(page) == [] and problems == []
    visit(page, problems, live_server.url + "/admin/", "#content")
    visit(page, problems, live_server.url + "/admin/trajectories/rollout/", "#result_list")
    visit(page, problems, live_server.url + f"/admin/trajectories/rollout/{site['rollout'].pk}/change/", "form")
    visit(page, problems, live_server.url + "/campaigns/new/", "main h1")
    visit(page, problems, live_server.url + "/rollouts/upload/", "main h1")
