"""The explorer in a real Chromium: plot, navigation, search, compare, safety."""
from __future__ import annotations

import os
import re

import pytest
from django.urls import reverse

from trajectories.models import Step

from . import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("EXPLORER_SCREENSHOTS")


def shot(page, name: str) -> None:
    """Save a screenshot when EXPLORER_SCREENSHOTS names a folder (by hand)."""
    if SCREENSHOTS:
        page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}.png"), full_page=False)


def open_rollout(page, live_server, rollout, fragment: str = "", query: str = ""):
    url = live_server.url + reverse("trajectories:rollout_detail", args=[rollout.pk]) + query + fragment
    page.goto(url)
    page.wait_for_selector("#curve-plot .main-svg", state="attached")
    return url


def plot_point_steps(page) -> list[int]:
    """Step ids of the plotted benchmark calls, read from plotly's own data."""
    return page.evaluate(
        """() => {
            const el = document.getElementById('curve-plot');
            return el.data.filter(t => /benchmark/.test(t.name)).flatMap(t => t.customdata || []);
        }"""
    )


def current_step(page) -> str | None:
    return page.evaluate("() => { const el = document.querySelector('#steps .step.current'); return el && el.id; }")


def step_top(page, step_id: int) -> float:
    return page.evaluate(f"() => document.getElementById('step-{step_id}').getBoundingClientRect().top")


def wait_step_in_view(page, step_id: int) -> None:
    page.wait_for_function(
        # A folded step's element arrives once its fold has opened.
        f"""() => {{ const el = document.getElementById('step-{step_id}');
                     if (!el) return false;
                     const r = el.getBoundingClientRect();
                     return r.top >= -2 && r.top < window.innerHeight / 2; }}"""
    )


def test_plot_click_scrolls_to_the_step(page, live_server):
    rollout = factories.make_explored_rollout()
    open_rollout(page, live_server, rollout)
    assert sorted(plot_point_steps(page)) == [3, 5, 7]
    page.locator(".plot-card").scroll_into_view_if_needed()
    shot(page, "factory-plot")
    # Click the second benchmark point (step 5) through plotly's own event path.
    page.evaluate(
        """() => {
            const el = document.getElementById('curve-plot');
            const trace = el.data.findIndex(t => t.name === 'benchmark calls');
            const idx = el.data[trace].customdata.indexOf(5);
            el.emit('plotly_click', {points: [{curveNumber: trace, pointNumber: idx, customdata: 5, data: el.data[trace]}]});
        }"""
    )
    wait_step_in_view(page, 5)
    assert current_step(page) == "step-5"
    assert page.evaluate("() => location.hash") == "#step-5"
    page.wait_for_function("() => document.getElementById('curve-plot').dataset.currentStep === '5'")


def test_plot_points_are_clickable_in_the_svg(page, live_server):
    rollout = factories.make_explored_rollout()
    open_rollout(page, live_server, rollout)
    points = page.locator("#curve-plot .scatterlayer .trace:first-child .point")
    assert points.count() == 3
    points.nth(2).click(force=True)
    wait_step_in_view(page, 7)


def test_permalink_opens_the_step(page, live_server):
    rollout = factories.make_explored_rollout()
    for step_id in range(9, 40):
        factories.add_step(rollout, step_id, message="filler\n" * 8, kinds=["inspect"])
    open_rollout(page, live_server, rollout, fragment="#step-30")
    wait_step_in_view(page, 30)
    assert current_step(page) == "step-30"


def test_keyboard_navigation(page, live_server):
    rollout = factories.make_explored_rollout()
    open_rollout(page, live_server, rollout, fragment="#step-1")
    page.keyboard.press("j")
    page.wait_for_function("() => location.hash === '#step-2'")
    page.keyboard.press("b")
    page.wait_for_function("() => location.hash === '#step-3'")
    page.keyboard.press("e")
    page.wait_for_function("() => location.hash === '#step-4'")
    page.keyboard.press("b")
    page.wait_for_function("() => location.hash === '#step-5'")
    page.keyboard.press("k")
    page.wait_for_function("() => location.hash === '#step-4'")
    assert current_step(page) == "step-4"
    # Typing in the find box is not navigation.
    page.fill("#step-search", "jjj")
    assert current_step(page) == "step-4"


def test_only_filter_hides_other_steps(page, live_server):
    rollout = factories.make_explored_rollout()
    open_rollout(page, live_server, rollout)
    assert page.locator("#step-2").is_visible()
    page.check("#only-toggle")
    assert not page.locator("#step-2").is_visible()
    assert page.locator("#step-3").is_visible() and page.locator("#step-4").is_visible()
    page.uncheck("#only-toggle")
    assert page.locator("#step-2").is_visible()


def test_lazy_output_and_in_page_find(page, live_server):
    rollout = factories.make_explored_rollout()
    factories.add_step(rollout, 9, commands=["cat log\n"], outputs=["x" * 2000 + " hidden-marker-42"])
    open_rollout(page, live_server, rollout)
    assert "hidden-marker-42" not in page.content()
    page.fill("#step-search", "evaluate_local")
    page.wait_for_function("() => document.querySelectorAll('mark.find-hit').length === 3")
    # Only in a collapsed output: the server says which step has it.
    page.fill("#step-search", "hidden-marker-42")
    link = page.locator("#server-matches a.server-match")
    link.wait_for()
    assert link.inner_text() == "#9"
    link.click()
    page.wait_for_selector("#step-9 .observation.full")
    page.wait_for_function("() => document.querySelectorAll('#step-9 mark.find-hit').length === 1")


def test_hostile_trajectory_never_runs_script(page, live_server):
    rollout = factories.make_rollout(verifier_fields={"reward": 0, "reason": "<img src=x onerror=alert('v')>"})
    payloads = [
        "<script>alert('message')</script><b id='injected-b'>bold</b>",
        '<a id="injected-a" href="javascript:alert(1)">click me</a>',
        "<img id='injected-img' src=x onerror=alert('img')>",
    ]
    factories.add_step(
        rollout,
        1,
        message=payloads[0],
        reasoning=payloads[1],
        commands=[payloads[2] + "\x1b[31m<script>alert('ansi')</script>"],
        outputs=["x" * 700 + payloads[0] + payloads[2], payloads[1]],
        kinds=["benchmark"],
        metric_value=1.0,
        metric_status="parsed",
        diff="+++ b/<img src=x onerror=alert('diff')>\n+" + payloads[0],
    )
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_rollout(page, live_server, rollout)
    page.locator("button.load-output").first.click()
    page.wait_for_selector("#step-1 .observation.full")
    page.fill("#step-search", "script")
    page.wait_for_selector("mark.find-hit")
    page.wait_for_timeout(300)
    assert dialogs == []
    for selector in ("#injected-b", "#injected-a", "#injected-img", "#steps script", "#steps img", "a[href^=javascript]"):
        assert page.locator(selector).count() == 0, selector
    assert "<script>alert('message')</script>" in page.locator("#step-1 .message .text").inner_text()
    # Search and compare pages show the same text, still inert.
    page.goto(live_server.url + reverse("trajectories:search") + "?q=alert")
    page.wait_for_selector(".search-results li")
    page.goto(live_server.url + reverse("trajectories:compare") + f"?a={rollout.pk}&b={rollout.pk}")
    page.wait_for_selector(".compare-column")
    page.wait_for_timeout(200)
    assert dialogs == []
    assert page.locator("#injected-b, #injected-a, #injected-img, .compare-column img").count() == 0


# --- the real shared rollouts ---------------------------------------------


@pytest.fixture
def shared(shared_tasks_dir, shared_trials_dir):
    return factories.import_shared_rollouts(shared_tasks_dir, shared_trials_dir)


def expected_plot_steps(rollout) -> list[int]:
    """Benchmark calls the analysis found in the trajectory, and the steps that printed their results
    (a result a later wait printed is plotted there: its curve point's step)."""
    calls = set(
        Step.objects.filter(rollout=rollout, subtrajectory__isnull=True, kinds__contains="benchmark")
        .values_list("step_id", flat=True)
    )
    printed = {p["step_id"] for p in rollout.curve or [] if isinstance(p, dict) and isinstance(p.get("step_id"), int) and p["step_id"] >= 0}
    return sorted(calls | printed)


@pytest.mark.parametrize("key", ["opus", "grok"])
def test_shared_rollout_plot_permalink_and_keys(page, live_server, shared, key):
    rollout = shared[key]
    steps = list(Step.objects.filter(rollout=rollout, subtrajectory__isnull=True).order_by("position").values_list("step_id", flat=True))
    assert len(steps) == rollout.n_steps > 0
    target = steps[len(steps) // 2]
    if SCREENSHOTS:
        open_rollout(page, live_server, rollout)
        page.set_viewport_size({"width": 1280, "height": 1400})
        shot(page, f"{key}-top")
        page.set_viewport_size({"width": 1280, "height": 720})
    open_rollout(page, live_server, rollout, fragment=f"#step-{target}")
    wait_step_in_view(page, target)
    shot(page, f"{key}-permalink")
    assert sorted(plot_point_steps(page)) == sorted(expected_plot_steps(rollout))
    page.keyboard.press("j")
    following = steps[steps.index(target) + 1]
    page.wait_for_function(f"() => location.hash === '#step-{following}'")
    wait_step_in_view(page, following)
    benchmark_steps = expected_plot_steps(rollout)
    if benchmark_steps:
        page.evaluate("() => window.scrollTo(0, 0)")
        page.goto(page.url.split("#")[0] + f"#step-{steps[0]}")
        page.keyboard.press("b")
        page.wait_for_function(f"() => location.hash === '#step-{benchmark_steps[0]}'")
        # Clicking the plotted point of the last benchmark call scrolls there.
        last = benchmark_steps[-1]
        page.evaluate(
            f"""() => {{
                const el = document.getElementById('curve-plot');
                const trace = el.data.findIndex(t => /benchmark/.test(t.name) && (t.customdata || []).includes({last}));
                el.emit('plotly_click', {{points: [{{curveNumber: trace, customdata: {last}, data: el.data[trace]}}]}});
            }}"""
        )
        wait_step_in_view(page, last)


def first_command(rollout) -> str:
    from trajectories.models import ToolCall

    for call in ToolCall.objects.filter(step__rollout=rollout).order_by("step__position", "position"):
        keystrokes = (call.arguments or {}).get("keystrokes", "").strip()
        if len(keystrokes) > 8 and "\n" not in keystrokes:
            return keystrokes
    pytest.fail("no single-line command in the trajectory")


def test_shared_search_finds_a_command(page, live_server, shared):
    rollout = shared["opus"]
    command = first_command(rollout)
    page.goto(live_server.url + reverse("trajectories:search") + "?" + f"q={command}".replace(" ", "+"))
    page.wait_for_selector(".search-results")
    # Full-text search may also match messages that mention the same words;
    # the command hit is the one to follow.
    links = page.locator(f'li:has(span.where:text-is("command")) a.hit-link[href*="/rollouts/{rollout.pk}/?step="]')
    assert links.count() >= 1
    href = links.first.get_attribute("href")
    step_id = int(re.search(r"\?step=(\d+)$", href).group(1))
    links.first.click()
    page.wait_for_url(re.compile(rf"#step-{step_id}$"))
    wait_step_in_view(page, step_id)
    assert command in page.locator(f"#step-{step_id}").inner_text()


def test_shared_compare_shows_both_rollouts(page, live_server, shared):
    a, b = shared["opus"], shared["grok"]
    page.goto(live_server.url + reverse("trajectories:compare") + f"?a={a.pk}&b={b.pk}")
    page.wait_for_selector("#curve-plot .main-svg", state="attached")
    shot(page, "compare")
    columns = page.locator(".compare-column")
    assert columns.count() == 2
    assert columns.nth(0).locator(".step").count() == a.n_steps
    assert columns.nth(1).locator(".step").count() == b.n_steps
    # Scrolling the left column moves the right one by elapsed time.
    left, right = page.locator(".steps-scroll").nth(0), page.locator(".steps-scroll").nth(1)
    left.evaluate("el => { el.scrollTop = el.scrollHeight / 2; }")
    page.wait_for_function("() => document.querySelectorAll('.steps-scroll')[1].scrollTop > 0")
    assert right.evaluate("el => el.scrollTop") > 0


def test_plot_toggles_score_and_step_axes(page, live_server):
    rollout = factories.make_explored_rollout(reward=0.6)
    open_rollout(page, live_server, rollout)
    first_trace = "() => { const t = document.getElementById('curve-plot').data[0]; return [t.x, t.y]; }"
    xs, ys = page.evaluate(first_trace)
    assert ys == [90.0, 60.0, 70.0] and xs == [0.5, 50 / 60, 70 / 60]
    page.check("input[name=yaxis][value=score]")
    page.check("input[name=xaxis][value=step]")
    xs, ys = page.evaluate(first_trace)
    assert xs == [3, 5, 7]
    assert [round(y, 4) for y in ys] == [0.125, 0.5, 0.375]
    title = page.evaluate("() => document.getElementById('curve-plot').layout.yaxis.title.text")
    assert title == "normalised score"


def test_timeline_mark_opens_its_step(page, live_server):
    rollout = factories.make_rollout()
    for step_id in range(1, 11):
        factories.add_step(rollout, step_id, message="step text\n" * 10, elapsed_sec=step_id * 600.0, kinds=["inspect"])
    open_rollout(page, live_server, rollout)
    page.locator('.timeline-strip a.mark[data-step-id="7"]').click()
    wait_step_in_view(page, 7)
    page.wait_for_function("() => document.querySelector('#steps .step.current').id === 'step-7'")
    assert page.locator('.timeline-strip a.mark.current').get_attribute("data-step-id") == "7"


def test_shared_files_changed_open_and_lead_to_their_steps(page, live_server, shared):
    rollout = shared["opus"]
    open_rollout(page, live_server, rollout)
    files = page.locator("#files .file-changes > li")
    assert files.count() == 2
    train = files.nth(1)
    assert "/app/train.sh" in train.locator("summary").inner_text()
    assert not train.locator("pre.diff-body").is_visible()
    train.locator("summary code").click()
    assert "+    --model_version klein-base-9b" in train.locator("pre.diff-body").inner_text()
    train.locator('summary a[href="#step-11"]').click()
    wait_step_in_view(page, 11)
    # The browser jumps to the anchor at once; the page marks the step on its next frame.
    page.wait_for_function("() => document.querySelector('#steps .step.current')?.id === 'step-11'")


def test_compare_draws_each_rollouts_own_anchors(page, live_server):
    """It drew the first rollout's reference (task.toml's) for both; the second's page says its verifier's."""
    a, b = factories.make_anchored_pair()
    page.goto(live_server.url + reverse("trajectories:compare") + f"?a={a.pk}&b={b.pk}")
    page.wait_for_selector("#curve-plot .main-svg", state="attached")
    lines = page.evaluate(
        """() => { const el = document.getElementById('curve-plot');
                   return el.layout.annotations.map(n => [n.text, n.y]); }"""
    )
    assert sorted(lines) == sorted([
        ["baseline", 100], [f"reference ({a.model} · {a.harness} · rollout {a.number})", 20],
        [f"reference ({b.model} · {b.harness} · rollout {b.number})", 30],
    ])
    # On the normalised score both anchors are 0 and 1: drawn once.
    page.check("input[name=yaxis][value=score]")
    page.wait_for_function("() => document.getElementById('curve-plot').layout.annotations.length === 2")


@pytest.mark.parametrize("width, result_first", [(390, True), (1440, False)])
def test_on_a_phone_the_result_card_comes_first(page, live_server, width, result_first):
    """At 390 px a zero-score rollout's first screen was the Task card alone; its reward and cause came below."""
    rollout = factories.make_explored_rollout(verifier_fields={"reward": 0.0, "reason": "no_lora_file"})
    page.set_viewport_size({"width": width, "height": 844})
    open_rollout(page, live_server, rollout)
    tops = page.evaluate("""() => Array.from(document.querySelectorAll('.rollout-header > .card'))
        .map(card => [card.querySelector('.card-title').textContent.trim(), card.getBoundingClientRect().top])""")
    tops = dict(tops)
    assert (tops["Result"] < tops["Task"]) is result_first, tops
    if result_first:
        assert tops["Result"] < 844  # on the first screen
