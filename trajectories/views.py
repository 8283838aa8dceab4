"""Trajectory explorer pages: rollout list, rollout replay, search, compare.

Trajectory text is untrusted: templates autoescape it, terminal output goes
through trajectories.ansi, and data for scripts goes through json_script.
"""
from __future__ import annotations

import time
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Paginator

from django.db.models import Count, Prefetch, Q
from django.db.models.functions import Coalesce, Length, Substr
from django.http import Http404, HttpResponseBadRequest, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from tasks.scoring import clipped, counted_reward

from trajectories.storing import artifacts
from trajectories import explorer, verdict
from trajectories.failures.rules import CAUSES, FLAGS
from trajectories.grades import history as grade_history
from trajectories.forms import OUTCOMES, SORTS, CurveRangeForm, SearchForm
from trajectories.listing import RolloutList
from trajectories.search import query as search
from trajectories.storing import observation_text as observation_text_module
from trajectories.visibility import shown as visible_rollouts
from trajectories.models import Observation, Rollout, RolloutStatus, Step, SubTrajectory, ToolCall
from trajectories.search.document import highlighted
from trajectories.reading import trial_tabs

PAGE_SIZE = 50
# Characters of each observation embedded in the rollout page; the rest is
# fetched from `step_observation` when the reader asks.
PREVIEW_CHARS = 600
COMPARE_MESSAGE_CHARS = 400


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


@require_GET
def rollout_list(request):
    listing = RolloutList(request.GET)
    context = {
        "nav": "rollouts",
        "page": listing,
        "form": listing.form,
        "filters": listing.form.values(),
        "sort": listing.sort,
        "sorts": SORTS,
        "query": listing.query,
        "sort_query": listing.sort_query,
        "tasks": Task.objects.select_related("version").only("id", "name", "version__name").order_by("name", "version__name"),
        "models": AgentModel.objects.only("id", "name", "display_name"),
        "harnesses": Harness.objects.all(),
        "versions": BenchmarkVersion.objects.only("name"),
        "categories": Task.objects.exclude(category="").order_by("category").values_list("category", flat=True).distinct(),
        "statuses": RolloutStatus.choices,
        "outcomes": OUTCOMES,
        "causes": CAUSES.items(),
        "flags": FLAGS,
    }
    # Bad filters: the page as asked, with their errors above an empty list (400).
    return render(request, "trajectories/rollout_list.html", context, status=200 if listing.valid else 400)


def _observation_previews():
    """Observations with a short preview and the full length, not the text."""
    return (
        Observation.objects.annotate(
            preview=Substr("content", 1, PREVIEW_CHARS), output_length=Coalesce("full_length", Length("content"))
        )
        .defer("content", "extra")
        .order_by("position")
    )


def _main_steps(rollout: Rollout):
    return Step.objects.filter(rollout=rollout, subtrajectory__isnull=True).order_by("position")


def _outline(rollout: Rollout) -> list[explorer.OutlineStep]:
    """Every main step's light columns, as plain objects."""
    return [explorer.OutlineStep(*row) for row in _main_steps(rollout).values_list(*explorer.OutlineStep.FIELDS)]


def _get_rollout(request, pk: int) -> Rollout:
    return get_object_or_404(
        visible_rollouts(request, Rollout.objects.select_related("task__version", "model", "harness", "label")), pk=pk
    )


@require_GET
def rollout_live(request, pk: int):
    """What a running rollout's page polls: new steps are fetched and appended (static/js/live.js).

    With ?plot=1 it also carries the plot data (every step's outline and the
    curve), which the page takes after appending steps: key navigation and
    the best-so-far plot then know the new steps without a reload.
    """
    from .templatetags.explorer_tags import reward as reward_text

    with_plot = request.GET.get("plot") == "1"
    if with_plot:
        rollout = _get_rollout(request, pk)
    else:
        rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.only("id", "status", "reward", "trial_name", "artifacts")), pk=pk)
    live = {
        "status": rollout.status,
        "status_text": rollout.get_status_display(),
        "active": rollout.is_active,
        "steps": rollout.steps.filter(subtrajectory__isnull=True).count(),
        "reward": rollout.reward,
        "reward_text": reward_text(rollout.reward),
        "logs": artifacts.log_tails(rollout),
    }
    if with_plot:
        live["plot"] = _outline_figures(rollout)[2]
    return JsonResponse(live)


# The light columns of every main step: the timeline, the plot, page ranges.
OUTLINE_FIELDS = ("id", "step_id", "position", "source", "elapsed_sec", "kinds", "metric_value", "metric_score")


# Rollouts with more steps than this keep their outline, timeline and plot
# data in the cache between requests: working them out again was most of a
# 20,000-step page's time, and they change only when the rollout does.
CACHED_OUTLINE_STEPS = 2000


def _siblings(rollout: Rollout) -> explorer.Siblings:
    """The window of the rollout's siblings (same task, model and harness) that its page links to.

    Read a window's worth: a group of 6,536 repeats was loaded whole, as
    models, on each of its rollout pages for 12 links (135 ms a page). A
    group that fits the window (most: a few repeats) is one query; a larger
    one is counted first.
    """
    group = Rollout.objects.filter(task_id=rollout.task_id, model_id=rollout.model_id, harness_id=rollout.harness_id)
    ordered = group.only("id", "index", "reward").order_by("index", "pk")
    first = list(ordered[: explorer.SIBLINGS_SHOWN + 1])
    if len(first) <= explorer.SIBLINGS_SHOWN:
        return explorer.sibling_window(first, rollout.pk)
    earlier = Q(index__lt=rollout.index) | Q(index=rollout.index, pk__lt=rollout.pk)  # their order: index, then pk
    counts = group.aggregate(total=Count("pk"), at=Count("pk", filter=earlier))
    start, stop = explorer.sibling_bounds(counts["at"], counts["total"])
    shown = list(ordered[start:stop])
    return explorer.Siblings(shown=shown, before=start, after=counts["total"] - start - len(shown))


def _outline_figures(rollout: Rollout) -> tuple[list[explorer.OutlineStep], explorer.Timeline, dict]:
    """The outline of every main step, the timeline strip and the plot data."""
    n_steps = _main_steps(rollout).count() if rollout.n_steps > CACHED_OUTLINE_STEPS else 0
    key = f"rollout-outline-v2:{rollout.pk}:{rollout.updated_at.isoformat() if rollout.updated_at else ''}:{n_steps}"
    cached = cache.get(key) if n_steps > CACHED_OUTLINE_STEPS else None
    if cached is not None:
        rows, timeline, plot = cached
        return [explorer.OutlineStep(*row) for row in rows], timeline, plot
    rows = list(_main_steps(rollout).values_list(*explorer.OutlineStep.FIELDS))
    outline = [explorer.OutlineStep(*row) for row in rows]
    timeline = explorer.build_timeline(outline, rollout.task.budget_sec, rollout.last_improvement_sec)
    plot = explorer.plot_data(rollout, outline)
    if n_steps > CACHED_OUTLINE_STEPS:
        cache.set(key, (rows, timeline, plot), 3600)
    return outline, timeline, plot


@require_GET
def rollout_detail(request, pk: int):
    rollout = _get_rollout(request, pk)
    only = explorer.parse_only(request.GET.get("only"))
    outline, timeline, plot = _outline_figures(rollout)
    shown = [s for s in outline if explorer.step_matches_only(s.kind_list, only)]
    if "step" in request.GET:
        return _redirect_to_step(rollout, request, outline, shown, only)
    page = explorer.step_page(shown, _int_or_none(request.GET.get("page")), last_by_default=rollout.is_active)
    # Runs of waits fold into one row each; only the other steps' text is fetched.
    end = page.items[-1] if page.items else None
    following = next((s for s in shown if end is not None and s.position > end.position), None)
    rows = explorer.fold_steps(page.items, following=following) if not only else list(page.items)
    steps = _full_steps([row.pk for row in rows if not getattr(row, "is_fold", False)], rollout, outline)
    by_pk = {s.pk: s for s in steps}
    rows = [row if getattr(row, "is_fold", False) else by_pk[row.pk] for row in rows]
    cause, cause_source = explorer.failure_cause(rollout)
    siblings = _siblings(rollout)
    context = {
        "nav": "rollouts",
        "rollout": rollout,
        "task": rollout.task,
        "steps": steps,
        "rows": rows,
        "page": page,
        "page_step_ids": {s.step_id for s in page.items},
        "only": only,
        "only_param": ",".join(only),
        "kinds": explorer.STEP_KINDS,
        "cause": cause,
        "cause_source": cause_source,
        "siblings": siblings,
        "phases": explorer.timing_phases(rollout),
        # The timeline and plot always cover the whole rollout, filtered or not.
        "timeline": timeline,
        "plot": plot,
        "anchors": explorer.rollout_anchors(rollout),
        "files_changed": explorer.file_changes(rollout.files_changed),
        "score_log": _score_log_summary(rollout),
        # A reward the version clips: shown as the verifier wrote it, beside what the board counts.
        "counted_reward": counted_reward(rollout.reward, rollout.task.version.clip_rewards)
        if clipped(rollout.reward, rollout.task.version.clip_rewards) else None,
        "metric_text": explorer.rollout_metric_text(rollout),
        "verifier_fields": sorted((rollout.verifier_fields or {}).items()),
        "verifier_outputs": sorted((rollout.verifier_outputs or {}).items()),
        "preview_chars": PREVIEW_CHARS,
        "live_steps": len(outline),
        # What static/js/live.js waits for before it shows a run's end: ended, and classified.
        "settled": _settled(rollout),
        # A running trial's log tails follow the run (static/js/live.js); an ended one's log is the Log tab.
        "logs": artifacts.log_tails(rollout) if rollout.is_active else {},
        "grades": grade_history(rollout),
        "trial_tabs": trial_tabs.TABS,
        "subagents": rollout.subtrajectories.select_related("parent_step").annotate(n_steps=Count("steps")).order_by("pk"),
    }
    return render(request, "trajectories/rollout_detail.html", context)


def _settled(rollout: Rollout) -> bool:
    """The page shows the rollout's final state: it has ended and its end has been classified.

    The runner records the end, then classifies it: a page read between the
    two says "Not classified yet", so a live page asks again for a moment.
    """
    return not rollout.is_active and rollout.outcome not in ("", "running")


def _score_log_summary(rollout: Rollout) -> dict | None:
    """What the leaderboard counts for a rollout of a version scored by the best of its score log (RE-Bench)."""
    version = rollout.task.version
    if not version.keeps_score_logs:
        return None
    entries = [e for e in rollout.score_log or [] if isinstance(e, dict) and isinstance(e.get("score"), (int, float))]
    return {
        "score": verdict.run_score(rollout.reward, score_log=[e["score"] for e in entries],
                                   final_only=rollout.task.final_only, convention=version.scoring),
        "entries": entries,
        "final_only": rollout.task.final_only,
    }


def _full_steps(pks: list[int], rollout: Rollout, outline: list) -> list[Step]:
    """The rows of steps `pks` with what the page shows of them, in order."""
    steps = list(
        Step.objects.filter(pk__in=pks)
        .order_by("position")
        .defer("extra")
        .prefetch_related(
            Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")),
            Prefetch("observations", queryset=_observation_previews()),
        )
    )
    explorer.decorate_steps(steps, rollout.api_request_times_msec, outline=outline)
    explorer.group_outputs(steps)
    return steps


@require_GET
def rollout_curve(request, pk: int):
    """The benchmark results between `low` and `high`, at full resolution (or decimated again past CURVE_POINTS_SHOWN).

    What the plot asks for when zoomed in on a rollout with more results
    than it was sent (explorer.decimate_curve).
    """
    form = CurveRangeForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
    rollout = _get_rollout(request, pk)
    # The stored curve is the curve; only a rollout without one derives it from its steps.
    steps = [] if rollout.curve else _outline(rollout)
    x, low, high = form.cleaned_data["x"], form.cleaned_data["low"], form.cleaned_data["high"]
    inside = explorer.points_between(explorer.curve_points(rollout, steps), x, low, high)
    return JsonResponse({"points": explorer.decimate_curve(inside), "total": len(inside)})


@require_GET
def step_fragment(request, pk: int):
    """Main steps at positions `first` to `last` as HTML: what a folded row opens into."""
    rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.only("id", "api_request_times_msec")), pk=pk)
    first, last = _int_or_none(request.GET.get("first")), _int_or_none(request.GET.get("last"))
    if first is None or last is None or last < first or last - first >= explorer.STEPS_PER_PAGE:
        return HttpResponseBadRequest(f"first and last: positions of at most {explorer.STEPS_PER_PAGE} steps, first <= last")
    outline = _outline(rollout)
    pks = [s.pk for s in outline if first <= s.position <= last]
    if not pks:
        raise Http404("No steps there")
    steps = _full_steps(pks, rollout, outline)
    return render(
        request, "trajectories/partials/steps.html", {"rollout": rollout, "steps": steps, "preview_chars": PREVIEW_CHARS}
    )


def _redirect_to_step(rollout: Rollout, request, outline: list, shown: list, only: list[str]):
    """`?step=N`: the page that holds step N, scrolled to it.

    Links from other pages (search hits, compare, subagents, the timeline)
    name a step, not a page. A step the `only` filter hides is shown
    unfiltered; `q` (a find in the rollout) is carried over.
    """
    step_id = _int_or_none(request.GET.get("step"))
    number = explorer.page_number_of(shown, step_id) if step_id is not None else None
    if number is None and step_id is not None and only:
        only, number = [], explorer.page_number_of(outline, step_id)
    if number is None:
        raise Http404(f"Rollout {rollout.pk} has no step {request.GET.get('step')!r}")
    params = {"page": number} if len(shown if only else outline) > explorer.STEPS_PER_PAGE else {}
    if only:
        params["only"] = ",".join(only)
    if request.GET.get("q"):
        params["q"] = request.GET["q"]
    query = f"?{urlencode(params)}" if params else ""
    return redirect(f"{reverse('trajectories:rollout_detail', args=[rollout.pk])}{query}#step-{step_id}")


@require_GET
def step_observation(request, pk: int, step_id: int):
    """Full observations of one step (or the one at ?position=N), as an HTML fragment."""
    rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.only("id")), pk=pk)
    sub = _int_or_none(request.GET.get("sub"))
    steps = Step.objects.filter(rollout=rollout, subtrajectory_id=sub) if sub else _main_steps(rollout)
    step = get_object_or_404(steps, step_id=step_id)
    observations = step.observations.order_by("position")
    if "position" in request.GET:
        position = _int_or_none(request.GET["position"])
        observations = observations.filter(position=position) if position is not None else observations.none()
        if not observations:
            raise Http404("No such observation")
    context = {"observations": observations, "full": True, "rollout": rollout, "step": step}
    if sub:
        context["sub"] = SubTrajectory(pk=sub)
    return render(request, "trajectories/partials/observations.html", context)


@require_GET
def observation_text(request, pk: int, step_id: int, position: int):
    """One observation's whole text, streamed as plain text: only ever on a reader's request.

    A cut observation's text is decompressed a piece at a time, so that a
    50 MB build log costs the server no more memory than its compressed form.
    """
    sub = _int_or_none(request.GET.get("sub"))
    steps = Step.objects.filter(rollout_id=pk, subtrajectory_id=sub) if sub else Step.objects.filter(
        rollout_id=pk, subtrajectory__isnull=True
    )
    observation = (
        Observation.objects.filter(step__in=steps.filter(step_id=step_id)[:1], position=position)
        .select_related("full_text")
        .first()
    )
    if observation is None:
        raise Http404("No such observation")
    full = getattr(observation, "full_text", None) if observation.cut_at is not None else None
    chunks = observation_text_module.decompressed_chunks(bytes(full.data)) if full else observation_text_module.text_chunks(
        observation.content
    )
    response = StreamingHttpResponse(chunks, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = f'inline; filename="rollout-{pk}-step-{step_id}-output-{position}.txt"'
    return response


@require_GET
def subagent_detail(request, pk: int, sub_pk: int):
    """One subagent trajectory (e.g. terminus-2's summarisation) of a rollout."""
    rollout = _get_rollout(request, pk)
    sub = get_object_or_404(SubTrajectory.objects.select_related("parent_step"), pk=sub_pk, rollout=rollout)
    steps = list(
        Step.objects.filter(subtrajectory=sub)
        .order_by("position")
        .defer("extra")
        .prefetch_related(
            Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")),
            Prefetch("observations", queryset=_observation_previews()),
        )
    )
    explorer.decorate_steps(steps, None)
    explorer.group_outputs(steps)
    context = {"nav": "rollouts", "rollout": rollout, "task": rollout.task, "sub": sub, "steps": steps, "preview_chars": PREVIEW_CHARS}
    return render(request, "trajectories/subagent_detail.html", context)


@require_GET
def rollout_search(request, pk: int):
    """Step ids of one rollout whose text, full outputs included, contains q."""
    rollout = get_object_or_404(visible_rollouts(request, Rollout.objects.only("id")), pk=pk)
    q = (request.GET.get("q") or "").strip()
    step_ids, cut_short = search.matching_steps(rollout.pk, q) if q else ([], False)
    return JsonResponse({"q": q, "step_ids": step_ids, "cut_short": cut_short})


# What a search result shows of its rollout (trajectories/search.html): up to 200
# hits' rollouts are read, and their other columns (logs, curves, JSON) cost more
# than the search itself.
SEARCH_ROLLOUT_FIELDS = (
    "id", "index", "task__name", "model__name", "model__display_name", "harness__name", "harness__version",
)


@require_GET
def search_view(request):
    form = SearchForm(request.GET)
    valid = form.is_valid()
    q = form.cleaned_data["q"] if valid else ""
    filters = form.filters() if valid else search.Filters()
    found = search.search(q, filters) if q else search.SearchResult()
    if found.busy:
        # Every scan slot is taken: a pause before the answer keeps a client
        # that loops on such queries from costing the site more than the scans.
        time.sleep(float(getattr(settings, "AUTOLAB_SEARCH_BUSY_PAUSE_SEC", 0.5)))
    hits = found.hits
    rollouts = (
        Rollout.objects.select_related("task", "model", "harness")
        .only(*SEARCH_ROLLOUT_FIELDS)
        .in_bulk({h.rollout_id for h in hits})
    )
    results = [(hit, rollouts[hit.rollout_id]) for hit in hits if hit.rollout_id in rollouts]
    page = Paginator(results, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    # Substring hits rank 0: the query's words were found in no step.
    by_words = bool(hits) and hits[0].rank > 0
    context = {
        "nav": "rollouts",
        "form": form,
        "q": q or (request.GET.get("q") or "").strip(),
        "filters": filters,
        "results": results,
        "page": page,
        "shown": [
            (hit, r, highlighted(hit.snippet, q, by_words=by_words), _hit_link(hit, r, q)) for hit, r in page.object_list
        ],
        "query": query.urlencode(),
        "limit_reached": len(hits) >= 200,
        "by_words": by_words,
        "notice": found.notice,
        "tasks": Task.objects.select_related("version").only("id", "name", "version__name").order_by("name"),
        "models": AgentModel.objects.only("id", "name", "display_name"),
        "harnesses": Harness.objects.all(),
        "kinds": explorer.STEP_KINDS,
    }
    response = render(request, "trajectories/search.html", context, status=200 if valid else 400)
    if found.busy:
        response["Retry-After"] = "1"
    return response


# What a hit outside the steps is called, and the trial tab that shows it.
HIT_TEXTS = {"verifier": "verifier output", "log": "trial log"}


def _hit_link(hit: search.Hit, rollout: Rollout, q: str) -> tuple[str, str]:
    """(href, label) of a search hit: its step on the rollout page, or the tab showing its verifier output or
    trial log (the Log tab filtered to the query's lines)."""
    if hit.where not in HIT_TEXTS:
        return reverse("trajectories:rollout_detail", args=[rollout.pk]) + f"?step={hit.step_id}", f"step {hit.step_id}"
    href = reverse("trajectories:trial_tab", args=[rollout.pk, hit.where])
    return (href + "?" + urlencode({"q": q}) if hit.where == "log" else href), HIT_TEXTS[hit.where]


def _compare_side(rollout: Rollout, outline: list, window_of: list[int], window: int) -> dict:
    """One column of the compare page: the rollout's steps in `window`, its whole curve."""
    ids = [s.pk for s, number in zip(outline, window_of) if number == window]
    steps = list(
        Step.objects.filter(pk__in=ids)
        .order_by("position")
        .only(*OUTLINE_FIELDS, "metric_unit", "metric_status", "rollout_id")
        .annotate(message_head=Substr("message", 1, COMPARE_MESSAGE_CHARS), message_length=Length("message"))
        .prefetch_related(Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")))
    )
    explorer.decorate_steps(steps, None, with_diffs=False, outline=outline)
    plot = explorer.plot_data(rollout, outline)
    return {
        "rollout": rollout,
        "steps": steps,
        "plot": plot,
        # The anchors its own page states (explorer.rollout_anchors), beside its name: the plot draws each side's.
        "anchors": explorer.rollout_anchors(rollout),
        "anchors_text": plot["anchors_text"],
        "files_changed": explorer.file_changes(rollout.files_changed),
    }


def _compare_window(request, windows: explorer.CompareWindows, outlines: list[list]) -> int:
    """`?focus=a-57` (step 57 of rollout a): the window holding it; else `?window=N`, clamped."""
    side, _, step_id = (request.GET.get("focus") or "").partition("-")
    if side in ("a", "b") and (wanted := _int_or_none(step_id)) is not None:
        of = windows.of_a if side == "a" else windows.of_b
        for s, number in zip(outlines[0 if side == "a" else 1], of):
            if s.step_id == wanted:
                return number
    number = _int_or_none(request.GET.get("window")) or 1
    return min(max(number, 1), windows.count)


def _compare_label(rollout: Rollout) -> str:
    """A compared rollout in the chart's legend, by the number its page gives it (not its database id)."""
    return f"{rollout.model} · {rollout.harness} · rollout {rollout.number}"


@require_GET
def compare(request):
    a_id, b_id = _int_or_none(request.GET.get("a")), _int_or_none(request.GET.get("b"))
    picked = request.GET.getlist("r")  # the rollout list's "compare selected" checkboxes
    if a_id is None and b_id is None and len(picked) == 2:
        a_id, b_id = _int_or_none(picked[0]), _int_or_none(picked[1])
    context = {"nav": "rollouts", "error": ""}
    if a_id is None or b_id is None:
        context["error"] = "Choose two rollouts to compare (tick two in the rollout list, or /compare/?a=<rollout id>&b=<rollout id>)."
        return render(request, "trajectories/compare.html", context, status=400)
    a, b = _get_rollout(request, a_id), _get_rollout(request, b_id)
    if a.task_id != b.task_id:
        context["error"] = (
            f"These rollouts are of different tasks ({a.task.name} v{a.task.version.name} and "
            f"{b.task.name} v{b.task.version.name}); only rollouts of the same task can be compared."
        )
        context.update(a=a, b=b)
        return render(request, "trajectories/compare.html", context, status=400)
    outlines = [_outline(r) for r in (a, b)]
    windows = explorer.compare_windows(*outlines)
    window = _compare_window(request, windows, outlines)
    left, right = _compare_side(a, outlines[0], windows.of_a, window), _compare_side(b, outlines[1], windows.of_b, window)
    context.update(
        a=a,
        b=b,
        task=a.task,
        sides=[left, right],
        window=window,
        windows=[(number, first, last) for number, (first, last) in enumerate(windows.spans, start=1)] if windows.count > 1 else [],
        plots={"a": left["plot"], "b": right["plot"], "a_label": _compare_label(a), "b_label": _compare_label(b)},
    )
    return render(request, "trajectories/compare.html", context)

