"""What the trajectory explorer pages show, computed from stored rows.

Plain functions over models and numbers, no HTTP: the timeline strip's
positions, the timing bar, the plot's data, diff line classes. The views
only fetch rows and call these.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from autolab_site.durations import format_duration
from tasks.lib.numbers import as_float
from tasks.services import describe_anchors, describe_verifier_metric, stored_anchors, verifier_metric

from trajectories.analysis import folding
from trajectories.analysis.curve import decimate_curve
from trajectories.analysis.diffs import diff_lines, files_in_diff
from trajectories.analysis.step_kinds import ORDER, StepKind

# Step kinds written by trajectories.analysis.rollout, in the order a mark's colour
# is chosen when a step has several (a benchmark run that also edits shows
# as a benchmark).
STEP_KINDS = [kind for kind in ORDER if kind != StepKind.OTHER.value]


def _rank(kind: str) -> int:
    """A kind's place in STEP_KINDS; "other" and unknown kinds come last."""
    return STEP_KINDS.index(kind) if kind in STEP_KINDS else len(STEP_KINDS)


def _ordered(kinds: Iterable[str]) -> list[str]:
    return sorted(kinds, key=lambda kind: (_rank(kind), kind))


def primary_kind(kinds: Iterable[str]) -> str:
    kinds = set(kinds)
    for kind in STEP_KINDS:
        if kind in kinds:
            return kind
    return StepKind.OTHER.value


def parse_only(value: str | None) -> list[str]:
    """`?only=benchmark,edit` -> known kinds, in a stable order."""
    wanted = {part.strip() for part in (value or "").split(",")}
    return [kind for kind in STEP_KINDS if kind in wanted]


def step_matches_only(kinds: Iterable[str], only: list[str]) -> bool:
    return not only or bool(set(kinds) & set(only))


@dataclass
class Phase:
    name: str
    seconds: float
    percent: float


PHASES = [
    ("environment setup", "environment_setup_started_at", "environment_setup_finished_at"),
    ("agent setup", "agent_setup_started_at", "agent_setup_finished_at"),
    ("agent", "agent_started_at", "agent_finished_at"),
    ("verifier", "verifier_started_at", "verifier_finished_at"),
]


def timing_phases(rollout) -> list[Phase]:
    """Harbor's four timed phases with their share of the phases' total."""
    durations = []
    for name, start_field, end_field in PHASES:
        start, end = getattr(rollout, start_field), getattr(rollout, end_field)
        if start and end and end >= start:
            durations.append((name, (end - start).total_seconds()))
    total = sum(seconds for _, seconds in durations)
    if total <= 0:
        return []
    return [Phase(name, seconds, round(100 * seconds / total, 2)) for name, seconds in durations]


@dataclass
class Timeline:
    span_sec: float
    marks: list[dict[str, Any]]
    budget_percent: float | None
    last_improvement_percent: float | None
    ticks: list[dict[str, Any]]


def _percent(value: float, span: float) -> float:
    return round(max(0.0, min(100.0, 100 * value / span)), 3)


# The strip's resolution: at most one mark per thousandth of its width.
# Thousands of steps would otherwise be thousands of overlapping links, most
# of a long rollout's page.
TIMELINE_COLUMNS = 1000


def build_timeline(steps, budget_sec: float | None, last_improvement_sec: float | None) -> Timeline:
    """Marks over elapsed wall-clock, scaled so the budget line fits too.

    Consecutive steps that fall in one column of the strip share a mark,
    coloured by the most telling kind among them (a benchmark call shows
    through the waits around it) and linking to the first step of that
    kind; `first` and `last` say which steps it covers.
    """
    elapsed = [s.elapsed_sec for s in steps if s.elapsed_sec is not None]
    span = max([1.0, *elapsed, budget_sec or 0.0, last_improvement_sec or 0.0])
    # A long rollout has tens of thousands of steps: per step only the column
    # is worked out; kinds are looked up once per distinct kinds string.
    scale = TIMELINE_COLUMNS / span
    kinds_info: dict[str, tuple[str, int]] = {}
    marks: list[dict[str, Any]] = []
    mark: dict[str, Any] | None = None
    for s in steps:
        at = s.elapsed_sec
        if at is None:
            continue
        column = min(TIMELINE_COLUMNS, max(0, int(at * scale)))
        key = getattr(s, "kinds", None)
        if key is None:
            key = " ".join(s.kind_list)
        info = kinds_info.get(key)
        if info is None:
            kind = primary_kind(s.kind_list)
            info = kinds_info[key] = (kind, _rank(kind))
        if mark is not None and mark["column"] == column:
            mark["last"] = s.step_id
            mark["count"] += 1
            mark["kind_strings"].add(key)
            if info[1] < mark["rank"]:
                mark.update(kind=info[0], rank=info[1], step_id=s.step_id, elapsed=at)
            continue
        mark = {
            "column": column,
            "step_id": s.step_id,
            "first": s.step_id,
            "last": s.step_id,
            "count": 1,
            "kind": info[0],
            "rank": info[1],
            "kind_strings": {key},
            "elapsed": at,
        }
        marks.append(mark)
    for mark in marks:
        kinds = {kind for text in mark.pop("kind_strings") for kind in (text or "").split()}
        mark["kinds"] = " ".join(_ordered(kinds))
        mark["percent"] = _percent(mark["elapsed"], span)
        del mark["rank"]
    step = _tick_step(span)
    ticks = [{"percent": _percent(t, span), "label": tick_label(t)} for t in _frange(0, span, step)]
    return Timeline(
        span_sec=span,
        marks=marks,
        budget_percent=_percent(budget_sec, span) if budget_sec else None,
        last_improvement_percent=_percent(last_improvement_sec, span) if last_improvement_sec is not None else None,
        ticks=ticks,
    )


def _tick_step(span: float) -> float:
    for step in (60, 300, 600, 900, 1800, 3600, 7200, 14400):
        if span / step <= 8:
            return float(step)
    return float(math.ceil(span / 8 / 3600) * 3600)


def _frange(start: float, stop: float, step: float) -> list[float]:
    values = []
    value = start
    while value <= stop + 1e-9:
        values.append(value)
        value += step
    return values


def tick_label(seconds: float) -> str:
    """Axis labels on whole minutes: "0", "15m", "1h", "1h 30m"."""
    minutes = int(round(seconds / 60))
    if minutes == 0:
        return "0"
    hours, minutes = divmod(minutes, 60)
    if not hours:
        return f"{minutes}m"
    return f"{hours}h" + (f" {minutes:02d}m" if minutes else "")


def better(direction: str, a: float, b: float) -> bool:
    return a < b if direction == "lower" else a > b


def curve_points(rollout, steps) -> list[dict[str, Any]]:
    """The stored curve, or one derived from step metrics when absent."""
    if rollout.curve:
        return [dict(point) for point in rollout.curve if as_float(point.get("metric")) is not None]
    points = []
    best_metric = best_score = None
    for s in steps:
        if s.metric_value is None:
            continue
        improved = best_metric is None or better(rollout.task.direction, s.metric_value, best_metric)
        if improved:
            best_metric, best_score = s.metric_value, s.metric_score
        points.append(
            {
                "step_id": s.step_id,
                "t": s.elapsed_sec,
                "metric": s.metric_value,
                "score": s.metric_score,
                "best_metric": best_metric,
                "best_score": best_score,
                "improved": improved,
            }
        )
    return points


def points_between(points: list[dict[str, Any]], x: str, low: float, high: float) -> list[dict[str, Any]]:
    """The points whose x (elapsed seconds, or step id when `x` is "step") lies in [low, high]."""
    key = "step_id" if x == "step" else "t"
    return [point for point in points if as_float(point.get(key)) is not None and low <= point[key] <= high]


_KIND_LISTS: dict[str, list[str]] = {}


class OutlineStep:
    """The light columns of one step: what the timeline, the plot and page ranges read.

    Plain objects, not model instances: a twelve-hour rollout has tens of
    thousands of steps and building Django models for each was most of its
    page's time.
    """

    __slots__ = (
        "pk", "step_id", "position", "source", "elapsed_sec", "kinds", "metric_value", "metric_score", "repeats", "kind_list",
    )
    FIELDS = ("id", "step_id", "position", "source", "elapsed_sec", "kinds", "metric_value", "metric_score", "repeats")

    def __init__(self, pk, step_id, position, source, elapsed_sec, kinds, metric_value, metric_score, repeats=False):
        self.pk, self.step_id, self.position, self.source = pk, step_id, position, source
        self.elapsed_sec, self.kinds, self.metric_value, self.metric_score = elapsed_sec, kinds, metric_value, metric_score
        self.repeats = repeats
        # Shared, never changed: a rollout has a handful of distinct kinds strings and thousands of steps.
        kind_list = _KIND_LISTS.get(kinds)
        if kind_list is None:
            kind_list = _KIND_LISTS[kinds] = kinds.split() if kinds else []
        self.kind_list = kind_list


# One character per step in the page's outline: the bits of its kinds
# (STEP_KINDS order) as a base64url digit, safe in JSON and in HTML.
_KIND_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_KIND_BITS = {kind: 1 << index for index, kind in enumerate(STEP_KINDS)}


def compact_outline(steps) -> dict[str, Any]:
    """Every step's id, elapsed time and kinds, in a few bytes each.

    `ids`: runs [first id, count] of consecutive ids; `t`: whole seconds, each
    the difference from the previous known time (null where unknown); `k`:
    one digit of _KIND_DIGITS per step. static/js/explorer.js decodes it.
    """
    runs: list[list[int]] = []
    times: list[int | None] = []
    digits = []
    previous = 0
    for s in steps:
        if runs and s.step_id == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([s.step_id, 1])
        if s.elapsed_sec is None:
            times.append(None)
        else:
            rounded = int(round(s.elapsed_sec))
            times.append(rounded - previous)
            previous = rounded
        bits = 0
        for kind in s.kind_list:
            bits |= _KIND_BITS.get(kind, 0)
        digits.append(_KIND_DIGITS[bits])
    return {"ids": runs, "t": times, "k": "".join(digits), "kinds": STEP_KINDS}


def rollout_metric(rollout) -> float | None:
    """The metric the rollout's verifier scored (tasks.anchors.verifier_metric), read from its stored fields.

    Read now rather than from the stored anchors: a regrade rewrites the
    fields, and rollouts imported before the task's own metric name was
    read keep the anchors they were stored with.
    """
    return verifier_metric(rollout.task, rollout.verifier_fields, rollout.verifier_outputs)


def rollout_metric_text(rollout) -> str:
    """The verifier's metric as the result card says it, beside the reward: "comparator_count 60 (lower is better)"."""
    return describe_verifier_metric(rollout.task, rollout_metric(rollout))


def rollout_anchors(rollout):
    """The anchors the rollout's scores use: those its reward was computed with (tasks.anchors)."""
    return stored_anchors(rollout.task, rollout.anchors)


def plot_data(rollout, steps) -> dict[str, Any]:
    """Everything the best-so-far plot draws, for json_script."""
    task = rollout.task
    anchors = rollout_anchors(rollout)
    every_point = curve_points(rollout, steps)
    points = decimate_curve(every_point)
    measured = {p["step_id"] for p in every_point}
    unparsed = [
        {"step_id": s.step_id, "t": s.elapsed_sec}
        for s in steps
        if StepKind.BENCHMARK.value in s.kind_list and s.step_id not in measured
    ]
    timed = [s for s in steps if s.elapsed_sec is not None]
    return {
        "points": points,
        # More than "points" holds: the plot asks curve.json for the rest when zoomed in.
        "points_total": len(every_point),
        "unparsed": unparsed,
        # Every step (compact_outline): the plot marks the current step, and
        # key navigation crosses pages of steps with it.
        "outline": compact_outline(steps),
        "metric": task.metric,
        "direction": task.direction,
        "baseline": anchors.baseline,
        "reference": anchors.reference,
        "anchors_status": anchors.status,
        "anchors_text": describe_anchors(anchors),
        "budget": task.budget_sec,
        "final_score": rollout.reward,
        "final_metric": rollout_metric(rollout),
        "end_t": rollout.agent_duration_sec or (timed[-1].elapsed_sec if timed else None),
        "end_step": steps[-1].step_id if steps else None,
    }


def file_changes(stored: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The rollout's changed files as the page shows them: lines added and removed, and why
    a net diff is missing. None when the rollout predates the analysis that works them out."""
    if stored is None:
        return None
    shown = []
    for change in stored:
        diff = change.get("diff") or ""
        lines = diff_lines(diff)
        note = ""
        if not change.get("end_known", True):
            note = "a change to it could not be replayed and nothing showed it after: no net diff"
        elif not diff:
            note = "it ended as it was before its first change"
        elif not change.get("start_known", True):
            note = "its content before the first change was never shown: the diff shows it as a new file"
        shown.append(
            {
                "path": change.get("path", ""),
                "step_ids": change.get("step_ids") or [],
                "lines": lines,
                "added": sum(1 for cls, _ in lines if cls == "add"),
                "removed": sum(1 for cls, _ in lines if cls == "del"),
                "note": note,
            }
        )
    return shown


def decorate_steps(steps, api_request_times_msec: list | None, with_diffs: bool = True, outline=None) -> None:
    """Per-step display facts: time since the previous step, LLM latency.

    Harbor's `api_request_times_msec` has one entry per model call; when
    their count equals the number of agent steps (terminus-2) the n-th
    agent step took the n-th request. `outline` is the whole trajectory
    (rows with step_id, source and elapsed_sec) when `steps` is a part of it, a
    page or a filter: both facts are counted over the whole trajectory.
    """
    outline = steps if outline is None else outline
    times = api_request_times_msec or []
    per_agent = len(times) == sum(1 for s in outline if s.source == "agent")
    delta: dict[int, float | None] = {}
    latency: dict[int, float | None] = {}
    previous = None
    agent_index = 0
    for s in outline:
        delta[s.step_id] = s.elapsed_sec - previous if s.elapsed_sec is not None and previous is not None else None
        if s.elapsed_sec is not None:
            previous = s.elapsed_sec
        if s.source == "agent":
            latency[s.step_id] = times[agent_index] if per_agent and as_float(times[agent_index]) is not None else None
            agent_index += 1
    for s in steps:
        s.primary_kind = primary_kind(s.kind_list)
        s.delta_sec = delta.get(s.step_id)
        s.llm_latency_ms = latency.get(s.step_id)
        s.diff_files = files_in_diff(s.diff) if with_diffs and s.diff else []


# Steps rendered on one rollout page. A step is about 2.5 KB of HTML with
# its output previews; a twelve-hour AutoLab run can have thousands.
STEPS_PER_PAGE = 200


@dataclass
class StepPage:
    """One page of a rollout's steps, and the whole list's page ranges."""

    number: int
    count: int
    items: list
    # (page number, first step id, last step id) for every page.
    ranges: list[tuple[int, int, int]]
    total: int


def step_page(shown: list, number: int | None, *, last_by_default: bool = False, per_page: int | None = None) -> StepPage:
    """Page `number` (1-based, clamped) of `shown`; the first or last page when None.

    A running rollout opens on its last page, where new steps arrive.
    """
    per_page = per_page or STEPS_PER_PAGE
    count = max(1, math.ceil(len(shown) / per_page))
    if number is None:
        number = count if last_by_default else 1
    number = min(max(number, 1), count)
    ranges = [
        (index // per_page + 1, shown[index].step_id, shown[min(index + per_page, len(shown)) - 1].step_id)
        for index in range(0, len(shown), per_page)
    ]
    start = (number - 1) * per_page
    return StepPage(number=number, count=count, items=shown[start : start + per_page], ranges=ranges, total=len(shown))


# Other rollouts of the same entry and task linked from a rollout's page; the
# rollout list has them all (a long campaign may have hundreds).
SIBLINGS_SHOWN = 12


@dataclass
class Siblings:
    """A window of a rollout's siblings (in their order) around it, and how many lie outside it."""

    shown: list
    before: int
    after: int

    @property
    def total(self) -> int:
        return self.before + len(self.shown) + self.after


def sibling_window(siblings: list, pk: int, size: int | None = None) -> Siblings:
    """At most `size` of `siblings` (SIBLINGS_SHOWN), centred on the one whose pk is `pk` where the ends allow."""
    at = next((i for i, other in enumerate(siblings) if other.pk == pk), 0)
    start, stop = sibling_bounds(at, len(siblings), size)
    return Siblings(shown=siblings[start:stop], before=start, after=len(siblings) - stop)


def sibling_bounds(at: int, total: int, size: int | None = None) -> tuple[int, int]:
    """[start, stop) of the window of `total` siblings around the one at `at`: what the page reads of them
    (a long campaign's group has thousands)."""
    size = size or SIBLINGS_SHOWN
    start = min(max(at - size // 2, 0), max(total - size, 0))
    return start, min(start + size, total)


# Steps of either rollout in one window of the compare page.
COMPARE_WINDOW_STEPS = 200


@dataclass
class CompareWindows:
    """Compare's windows of elapsed time, each with at most a window's steps per side."""

    # The window (1-based) of each step of side a, then of side b, in their order.
    of_a: list[int]
    of_b: list[int]
    # (first, last) elapsed seconds of each window's steps.
    spans: list[tuple[float, float]]

    @property
    def count(self) -> int:
        return max(1, len(self.spans))


def carried_times(steps) -> list[float]:
    """Each step's elapsed seconds, or the last known one before it (0 at first)."""
    times, last = [], 0.0
    for s in steps:
        if s.elapsed_sec is not None:
            last = s.elapsed_sec
        times.append(last)
    return times


def compare_windows(a_steps, b_steps, per_window: int | None = None) -> CompareWindows:
    """Cut both rollouts' steps, merged by elapsed time, into windows.

    Compare scrolls its columns together by time, so a window is a span of
    time in both rollouts: a new one starts when either side has filled
    its window. Steps at the same time stay in order.
    """
    per_window = per_window or COMPARE_WINDOW_STEPS
    events = sorted(
        [(t, 0, i) for i, t in enumerate(carried_times(a_steps))] + [(t, 1, i) for i, t in enumerate(carried_times(b_steps))]
    )
    of = ([0] * len(a_steps), [0] * len(b_steps))
    spans: list[tuple[float, float]] = []
    counts = [0, 0]
    for t, side, index in events:
        if not spans or counts[side] == per_window:
            spans.append((t, t))
            counts = [0, 0]
        counts[side] += 1
        spans[-1] = (spans[-1][0], t)
        of[side][index] = len(spans)
    return CompareWindows(of_a=of[0], of_b=of[1], spans=spans)


def page_number_of(shown: list, step_id: int, per_page: int | None = None) -> int | None:
    """The page of `shown` that holds step `step_id`, or None."""
    per_page = per_page or STEPS_PER_PAGE
    for index, s in enumerate(shown):
        if s.step_id == step_id:
            return index // per_page + 1
    return None


def group_outputs(steps) -> None:
    """Put each observation under the tool call it answers.

    Harnesses that link results to calls (source_call_id) read best with
    each output under its command; terminus-2 returns one unlinked terminal
    capture per step, shown after all the step's commands. Uses the
    prefetched rows only.
    """
    for s in steps:
        # Empty outputs (a heredoc that printed nothing) show as nothing.
        observations = [obs for obs in s.observations.all() if getattr(obs, "output_length", 1)]
        by_call: dict[int, list] = {}
        loose = []
        for obs in observations:
            if obs.tool_call_id is not None:
                by_call.setdefault(obs.tool_call_id, []).append(obs)
            else:
                loose.append(obs)
        calls = list(s.tool_calls.all())
        known = {call.pk for call in calls}
        loose += [obs for call_id, group in by_call.items() if call_id not in known for obs in group]
        s.call_blocks = [(call, by_call.get(call.pk, [])) for call in calls]
        s.loose_observations = sorted(loose, key=lambda obs: obs.position)


def failure_cause(rollout) -> tuple[str, str]:
    """(cause, "label" | "automatic" | "") — a staff label wins."""
    label = _label_of(rollout)
    if label is not None and label.cause:
        return label.cause, "label"
    if rollout.failure_cause:
        return rollout.failure_cause, "automatic"
    return "", ""


def _label_of(rollout):
    """The staff FailureLabel, or None (the one-to-one row may be missing)."""
    from django.core.exceptions import ObjectDoesNotExist

    try:
        return rollout.label
    except ObjectDoesNotExist:
        return None




@dataclass
class Fold:
    """Consecutive low-information steps shown as one row until opened."""

    steps: list  # outline rows (step_id, position, elapsed_sec, kinds)
    seconds: float | None  # from its first step to the step after it (or its last)
    is_fold = True

    @property
    def first(self):
        return self.steps[0]

    @property
    def last(self):
        return self.steps[-1]

    @property
    def step_ids(self) -> list[int]:
        return [s.step_id for s in self.steps]

    @property
    def kind(self) -> str:
        """"wait" when it only waits, else "check": the class and the kinds keys jump by."""
        return StepKind.WAIT.value if all(_waits(s) for s in self.steps) else "check"

    @property
    def kinds(self) -> str:
        """Every kind of its steps, as data-kinds (key navigation by kind stops on the row)."""
        found = {kind for s in self.steps for kind in s.kind_list}
        return " ".join(kind for kind in STEP_KINDS if kind in found)

    @property
    def summary(self) -> str:
        waits = sum(1 for s in self.steps if _waits(s))
        checks = len(self.steps) - waits
        parts = []
        if waits:
            parts.append(f"{waits} wait{'s' if waits != 1 else ''}")
        if checks:
            parts.append(f"{checks} repeated check{'s' if checks != 1 else ''}")
        text = " and ".join(parts)
        return f"{text}, {format_duration(self.seconds)}" if self.seconds is not None else text


def _waits(step) -> bool:
    return folding.only_waits(step.kind_list)


def foldable(step) -> bool:
    return folding.foldable(step.kind_list, step.repeats)


def fold_steps(steps: list, following=None, min_steps: int | None = None) -> list:
    """`steps` in order, each run of `min_steps` or more foldable ones replaced by a Fold.

    `following` is the step after the last of `steps` (on the next page),
    whose time ends a run that closes this page.
    """
    min_steps = min_steps or folding.FOLD_MIN_STEPS
    rows: list = []
    run: list = []

    def close(next_step) -> None:
        if len(run) >= min_steps:
            start = run[0].elapsed_sec
            end = next_step.elapsed_sec if next_step is not None and next_step.elapsed_sec is not None else run[-1].elapsed_sec
            seconds = end - start if start is not None and end is not None and end >= start else None
            rows.append(Fold(steps=list(run), seconds=seconds))
        else:
            rows.extend(run)
        run.clear()

    for s in steps:
        if foldable(s):
            run.append(s)
            continue
        close(s)
        rows.append(s)
    close(following)
    return rows
