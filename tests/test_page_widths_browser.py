"""No page is wider than the window, at 1440 px or on a 390 px phone: a wide table scrolls in its own box,
says so, and at 1440 px the main tables fit without scrolling at all."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluations.tests.board_factories import build_boards

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ["/?version=synthetic", "/heatmap/?version=synthetic", "/tasks/", "/tasks/synthetic/synthetic_task_01/",
         "/rollouts/", "/failures/", "/models/synthetic-model-01/", "/api/", "/campaigns/", "/search/?q=error",
         "/login/"]
# Pages whose address names a row of the data (filled in by `object_pages`), and the staff's pages.
STAFF_PAGES = ["/campaigns/new/", "/rollouts/upload/", "/published/import/"]
# Tables that cut a column at 1440 px while the page itself stayed 1440 px wide.
FIT_AT_1440 = {"/tasks/": ["table.task-catalogue"], "/failures/": ["table.failure-list"],
               "/?version=synthetic": ["#leaderboard-table", "#published-table"]}

# A paper's main table for the synthetic version (`published_table`): a main set and an ablation, one name long.
LONG_PUBLISHED = "a-published-model-with-a-very-long-name-from-a-papers-appendix-v2.5-preview"


def published_table() -> None:
    """The leaderboard as the demo shows AutoLab v1.1: a paper's main and ablation sets below the measured
    table, its chart, and the line under the filters that points to them (issue 46)."""
    from evaluations.results.published import import_results

    source = "Paper 2026, Table 2 (" + "a citation as long as a repository's README line, " * 2 + "commit 7aff5fe)"
    rows = [(f"paper-model-{n:02d}", "main", 0.08 * n, 0.09 * n, 0.1 * n) for n in range(1, 10)]
    rows += [(LONG_PUBLISHED, "main", 0.05, 0.1, 0.2), ("paper-model-lite", "ablation", 0.3, 0.4, None)]
    text = "model,harness,version,set,source,overall_avg,overall_best,overall_dom\n" + "".join(
        f'{model},terminus-2,synthetic,{kind},"{source}",{avg:.2f},{best:.2f},{"" if dom is None else f"{dom:.2f}"}\n'
        for model, kind, avg, best, dom in rows
    )
    import_results(text)


def long_names() -> None:
    """What real data holds and a QA pass found pages widened by: a task's 64-character checksum (the task
    page, 584 px on a phone), a 200-character harness (the campaigns table, 2,675 px) and model (the rollout
    filters' select boxes, 1,609 px); and what cut the failures list's Evidence column at 1440 px: evidence,
    secondary causes and behaviour flags."""
    from agents.models import AgentModel, Harness
    from evaluations.models import Campaign
    from tasks.models import Task
    from trajectories.models import Rollout

    Task.objects.filter(name="synthetic_task_01").update(checksum="1156466e" * 8)
    model = AgentModel.objects.filter(name="synthetic-model-02").get()
    AgentModel.objects.filter(pk=model.pk).update(display_name="m" * 200)
    harness = Harness.objects.create(name="h" * 200, version="v" * 50)
    # Its page as a run leaves it: five rollouts a task in its grid, a failed preflight, reasons and notes
    # that are a path or an exception without a space.
    path = "/var/lib/autolab/workers/gpu-0/" + "sandbox-" * 20 + "trial.log"
    campaign = Campaign.objects.create(
        model=model, harness=harness, version=Task.objects.get(name="synthetic_task_01").version, k=5,
        status="failed", status_reason=f"preflight failed: {path} is not writable", notes=path,
        preflight={"cpu": {"worker": "celery@" + "w" * 120, "ok": False,
                           "checks": [{"name": "storage", "ok": False, "detail": f"{path} is not writable"}]}},
    )
    mine = Rollout.objects.filter(model=model).order_by("task__name", "pk")[:15]
    Rollout.objects.filter(pk__in=[r.pk for r in mine]).update(campaign=campaign)
    Rollout.objects.filter(pk__in=[r.pk for r in mine[:3]]).update(
        status="failed", infra_error=True, status_reason=f"OSError: [Errno 28] No space left on device: '{path}'")
    evidence = [{"kind": "verifier", "text": "reason: no_lora_file; " + "the verifier found no file to score " * 5,
                 "step_id": None, "cause": "no_artifact"}]
    zero = Rollout.objects.filter(reward=0).order_by("pk")[:20]
    Rollout.objects.filter(pk__in=[r.pk for r in zero]).update(
        outcome="zero", failure_cause="grading_disrupted", failure_secondary=["premature_termination", "budget_exhausted"],
        failure_evidence=evidence, behaviour_flags=["regressed_after_best", "never_called_benchmark", "timed_out_but_scored"],
    )


def object_pages() -> list[str]:
    from evaluations.models import Campaign
    from trajectories.models import Rollout

    rollouts = list(Rollout.objects.filter(task__name="synthetic_task_01").order_by("pk")[:2])
    first = rollouts[0]
    campaign = Campaign.objects.create(model=first.model, harness=first.harness, version=first.task.version, k=1)
    # The campaign of `long_names`: a 200-character model and harness.
    long = Campaign.objects.get(harness__name="h" * 200)
    return [f"/rollouts/{rollouts[0].pk}/", f"/compare/?r={rollouts[0].pk}&r={rollouts[1].pk}",
            f"/campaigns/{campaign.pk}/", f"/campaigns/{campaign.pk}/cancel/", f"/campaigns/rollouts/{rollouts[0].pk}/cancel/",
            f"/campaigns/{long.pk}/", f"/campaigns/{long.pk}/cancel/"]


def widths_of(page, base: str, urls: list[str]) -> dict[str, int]:
    widths = {}
    for url in urls:
        assert page.goto(base + url).status == 200, url
        widths[url] = page.evaluate("() => document.documentElement.scrollWidth")
    return widths


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_no_page_is_wider_than_the_window(browser, live_server, width, height):
    """`/tasks/` was 1,042 px and `/rollouts/` 1,176 px wide on a phone: the whole page scrolled sideways."""
    from trajectories.tests.failure_helpers import user
    from trajectories.tests.test_failures_browser import login

    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    long_names()
    published_table()
    build_boards()  # as the boards worker would (a page never builds one)
    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    pages = PAGES + object_pages()
    widths = widths_of(page, live_server.url, pages)
    # The published section's chart, drawn (when about to be seen), holds the page's width too.
    page.goto(live_server.url + "/?version=synthetic")
    assert "as its authors published it: 10 models (main set) and 1 ablation ↓" in page.locator(".published-line").inner_text()
    page.locator("#chart-published").scroll_into_view_if_needed()
    page.wait_for_selector("#chart-published .main-svg")
    widths["/?version=synthetic#published"] = page.evaluate("() => document.documentElement.scrollWidth")
    login(page, live_server, user("staff", staff=True))
    widths.update(widths_of(page, live_server.url, STAFF_PAGES))
    context.close()
    assert widths == {url: width for url in [*pages, "/?version=synthetic#published", *STAFF_PAGES]}


def boxes(page) -> list[dict]:
    """Each scrolling box of the page: its id or table, whether it overflows, what its hint line says."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.table-scroll, .heatmap-scroll')).map(box => ({
        name: box.id || (box.querySelector('table') || {}).id || (box.querySelector('table') || {}).className,
        overflows: box.scrollWidth > box.clientWidth + 1,
        hint: getComputedStyle(box, '::before').content,
    }))""")


def test_wide_tables_fit_at_1440_and_say_that_they_scroll_on_a_phone(browser, live_server):
    """At 1440 px /tasks/ cut its Resources column and /failures/ its Evidence column (inside a scrolling box,
    so the page kept its width); at 390 px the cost and medal tables lost columns with nothing to say so."""
    call_command("generate_synthetic", "--steps", "0", stdout=open("/dev/null", "w"))
    long_names()
    published_table()
    build_boards()  # as the boards worker would (a page never builds one)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    cut = {}
    for url, tables in FIT_AT_1440.items():
        page.goto(live_server.url + url)
        for table in tables:
            cut[table] = page.eval_on_selector(table, "t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1")
    context.close()
    assert cut == {table: False for tables in FIT_AT_1440.values() for table in tables}

    from evaluations.models import Campaign

    campaign = f"/campaigns/{Campaign.objects.get(harness__name='h' * 200).pk}/"  # its grid of five rollouts a task
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    silent = {}
    for url in ["/?version=synthetic", "/tasks/", "/failures/", "/heatmap/?version=synthetic", "/rollouts/", campaign]:
        page.goto(live_server.url + url)
        page.wait_for_function("() => document.readyState === 'complete'")
        page.wait_for_timeout(200)  # the hint's script is async
        silent[url] = [box["name"] for box in boxes(page) if box["overflows"] and "Scroll sideways" not in box["hint"]]
    medals = [box for box in boxes(page) if box["name"] == "medal-board"]
    context.close()
    assert silent == {url: [] for url in silent}
    assert medals == [] or not medals[0]["overflows"]


def test_the_launch_form_shows_the_chosen_versions_tasks(browser, live_server):
    """The task list offered every version's tasks; choosing a version now shows its tasks only."""
    from tasks.models import BenchmarkVersion, Task
    from trajectories.tests.failure_helpers import user
    from trajectories.tests.test_failures_browser import login

    older = BenchmarkVersion.objects.create(name="older")
    newer = BenchmarkVersion.objects.create(name="newer")
    Task.objects.create(version=older, name="old_task")
    Task.objects.create(version=newer, name="new_task")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    login(page, live_server, user("staff", staff=True))
    page.goto(live_server.url + "/campaigns/new/")

    def shown() -> list[str]:
        return page.eval_on_selector_all("#id_tasks option", "os => os.filter(o => !o.hidden).map(o => o.textContent)")

    assert shown() == ["newer / new_task"]
    page.select_option("#id_tasks", label="newer / new_task")
    page.select_option("#id_version", str(older.pk))
    assert shown() == ["older / old_task"]
    assert page.eval_on_selector_all("#id_tasks option:checked", "os => os.length") == 0
    context.close()
