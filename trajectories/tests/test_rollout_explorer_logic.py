"""The explorer's plain helpers (trajectories.explorer), table-tested."""
from types import SimpleNamespace

import pytest

from trajectories import explorer


@pytest.mark.parametrize(
    "kinds, expected",
    [([], "other"), (["edit"], "edit"), (["edit", "benchmark"], "benchmark"), (["wait", "inspect"], "inspect"), (["odd"], "other")],
)
def test_primary_kind(kinds, expected):
    assert explorer.primary_kind(kinds) == expected


@pytest.mark.parametrize(
    "value, expected",
    [(None, []), ("", []), ("benchmark,edit", ["benchmark", "edit"]), ("edit, benchmark,bogus", ["benchmark", "edit"])],
)
def test_parse_only(value, expected):
    assert explorer.parse_only(value) == expected


@pytest.mark.parametrize("seconds, expected", [(0, "0"), (900, "15m"), (3600, "1h"), (5400, "1h 30m")])
def test_tick_label(seconds, expected):
    assert explorer.tick_label(seconds) == expected


def step(step_id, elapsed, kinds=(), metric=None, score=None, source="agent"):
    return SimpleNamespace(
        step_id=step_id, elapsed_sec=elapsed, kind_list=list(kinds), metric_value=metric, metric_score=score, source=source, diff=""
    )


def test_timeline_scales_to_the_budget():
    steps = [step(1, 0.0), step(2, 1800.0, ["benchmark"]), step(3, None)]
    timeline = explorer.build_timeline(steps, budget_sec=7200, last_improvement_sec=1800.0)
    assert [(m["step_id"], m["kind"], m["percent"]) for m in timeline.marks] == [(1, "other", 0.0), (2, "benchmark", 25.0)]
    assert timeline.budget_percent == 100.0 and timeline.last_improvement_percent == 25.0
    # A rollout that overran its budget stretches the strip instead.
    over = explorer.build_timeline([step(1, 9000.0)], budget_sec=4500, last_improvement_sec=None)
    assert over.budget_percent == 50.0 and over.last_improvement_percent is None


def test_timeline_merges_steps_in_one_column_of_the_strip():
    # A 1000 s strip: a column is 1 s wide.
    steps = [
        step(1, 0.0, ["wait"]),
        step(2, 0.3, ["benchmark"]),
        step(3, 0.6, ["wait"]),
        step(4, 0.9, ["edit"]),
        step(5, 5.0, ["wait"]),
        step(6, 999.0),
        step(7, 1000.0, ["submit"]),
    ]
    timeline = explorer.build_timeline(steps, budget_sec=1000, last_improvement_sec=None)
    shown = [(m["step_id"], m["first"], m["last"], m["count"], m["kind"], m["kinds"]) for m in timeline.marks]
    assert shown == [
        # The benchmark call shows through the waits and the edit around it.
        (2, 1, 4, 4, "benchmark", "benchmark edit wait"),
        (5, 5, 5, 1, "wait", "wait"),
        (6, 6, 6, 1, "other", ""),
        (7, 7, 7, 1, "submit", "submit"),
    ]
    assert timeline.marks[0]["percent"] == 0.03


def test_a_long_rollout_has_at_most_one_mark_per_column():
    steps = [step(i, i * 1.5, ["wait"]) for i in range(1, 20001)]
    timeline = explorer.build_timeline(steps, budget_sec=None, last_improvement_sec=None)
    assert len(timeline.marks) <= explorer.TIMELINE_COLUMNS + 1
    assert sum(m["count"] for m in timeline.marks) == 20000
    assert [m["first"] for m in timeline.marks] == sorted(m["first"] for m in timeline.marks)


def test_curve_points_derived_from_steps_follow_direction():
    rollout = SimpleNamespace(curve=[], task=SimpleNamespace(direction="higher"))
    steps = [step(1, 1.0, metric=0.5), step(2, 2.0), step(3, 3.0, metric=0.4), step(4, 4.0, metric=0.7)]
    points = explorer.curve_points(rollout, steps)
    assert [(p["step_id"], p["best_metric"], p["improved"]) for p in points] == [(1, 0.5, True), (3, 0.5, False), (4, 0.7, True)]


def test_decorate_steps_latency_only_when_counts_match():
    steps = [step(1, 0.0, source="user"), step(2, 5.0), step(3, 9.0)]
    explorer.decorate_steps(steps, [1000.0, 2000.0])
    assert [s.llm_latency_ms for s in steps] == [None, 1000.0, 2000.0]
    assert [s.delta_sec for s in steps] == [None, 5.0, 4.0]
    explorer.decorate_steps(steps, [1000.0])
    assert [s.llm_latency_ms for s in steps] == [None, None, None]


def test_decorate_steps_counts_over_the_whole_trajectory_for_a_page():
    outline = [step(1, 0.0, source="user"), step(2, 5.0), step(3, 9.0), step(4, 20.0)]
    page = [step(3, 9.0), step(4, 20.0)]
    explorer.decorate_steps(page, [100.0, 200.0, 300.0], outline=outline)
    # Step 3 is the second agent step: the second request; its previous step is 2.
    assert [s.llm_latency_ms for s in page] == [200.0, 300.0]
    assert [s.delta_sec for s in page] == [4.0, 11.0]


@pytest.mark.parametrize(
    "n, number, last_by_default, expected_number, expected_ids, expected_ranges",
    [
        (0, None, False, 1, [], []),
        (2, None, True, 1, [1, 2], [(1, 1, 2)]),
        (3, None, False, 1, [1, 2], [(1, 1, 2), (2, 3, 3)]),
        (5, None, False, 1, [1, 2], [(1, 1, 2), (2, 3, 4), (3, 5, 5)]),
        (5, None, True, 3, [5], [(1, 1, 2), (2, 3, 4), (3, 5, 5)]),
        (5, 2, True, 2, [3, 4], [(1, 1, 2), (2, 3, 4), (3, 5, 5)]),
        (5, 9, False, 3, [5], [(1, 1, 2), (2, 3, 4), (3, 5, 5)]),
        (5, -1, False, 1, [1, 2], [(1, 1, 2), (2, 3, 4), (3, 5, 5)]),
        (4, None, True, 2, [3, 4], [(1, 1, 2), (2, 3, 4)]),
    ],
)
def test_step_page(n, number, last_by_default, expected_number, expected_ids, expected_ranges):
    shown = [step(i, float(i)) for i in range(1, n + 1)]
    page = explorer.step_page(shown, number, last_by_default=last_by_default, per_page=2)
    assert page.number == expected_number
    assert [s.step_id for s in page.items] == expected_ids
    assert page.ranges == expected_ranges
    assert page.count == max(1, len(expected_ranges))
    assert page.total == n


@pytest.mark.parametrize("step_id, expected", [(1, 1), (3, 1), (4, 2), (9, 3), (10, None), (2, None)])
def test_page_number_of_a_step(step_id, expected):
    # A filtered list: step ids with gaps.
    shown = [step(i, float(i)) for i in (1, 3, 4, 6, 9)]
    assert explorer.page_number_of(shown, step_id, per_page=2) == expected


def times(*values):
    return [step(i + 1, t) for i, t in enumerate(values)]


@pytest.mark.parametrize(
    "a, b, of_a, of_b, spans",
    [
        # Both fit in one window.
        ((0.0, 5.0), (1.0,), [1, 1], [1], [(0.0, 5.0)]),
        # Side a fills its window of two first; b's later step goes with a's third.
        ((0.0, 1.0, 2.0, 3.0), (0.5, 2.5), [1, 1, 2, 2], [1, 2], [(0.0, 1.0), (2.0, 3.0)]),
        # A long gap in one rollout: the other's steps fill windows meanwhile.
        ((0.0, 100.0), (1.0, 2.0, 3.0, 4.0, 5.0), [1, 3], [1, 1, 2, 2, 3], [(0.0, 2.0), (3.0, 4.0), (5.0, 100.0)]),
        # Steps without a time take the last known one.
        ((0.0, None, None, 9.0), (), [1, 1, 2, 2], [], [(0.0, 0.0), (0.0, 9.0)]),
        # No steps at all: one empty window.
        ((), (), [], [], []),
    ],
)
def test_compare_windows(a, b, of_a, of_b, spans):
    windows = explorer.compare_windows(times(*a), times(*b), per_window=2)
    assert (windows.of_a, windows.of_b, windows.spans) == (of_a, of_b, spans)
    assert windows.count == max(1, len(spans))


@pytest.mark.parametrize(
    "value, shown",
    [
        (0.9102, "0.9102"),
        (0.35897305800756796, "0.359"),
        (0.0, "0"),
        (1, "1"),
        (1.23456, "1.2346"),
        (-0.00001, "0"),
        (None, "—"),
        (True, "—"),
        ("0.5", "—"),
        (float("nan"), "nan"),
    ],
)
def test_reward_filter(value, shown):
    from trajectories.templatetags.explorer_tags import reward

    assert reward(value) == shown


@pytest.mark.parametrize(
    "n, at, size, shown, before, after",
    [
        (1, 0, 12, [0], 0, 0),
        (3, 2, 12, [0, 1, 2], 0, 0),
        (12, 11, 12, list(range(12)), 0, 0),
        (13, 0, 12, list(range(12)), 0, 1),  # the first: the window starts at it
        (13, 12, 12, list(range(1, 13)), 1, 0),  # the last: the window ends at it
        (500, 250, 12, list(range(244, 256)), 244, 244),  # in the middle: centred
        (500, 3, 12, list(range(12)), 0, 488),
        (500, 496, 4, [494, 495, 496, 497], 494, 2),
        (5, 99, 3, [0, 1, 2], 0, 2),  # not among them (cannot happen on a page): the first ones
    ],
)
def test_a_rollouts_siblings_are_a_window_around_it(n, at, size, shown, before, after):
    siblings = [SimpleNamespace(pk=i) for i in range(n)]
    window = explorer.sibling_window(siblings, at, size)
    assert [s.pk for s in window.shown] == shown
    assert (window.before, window.after, window.total) == (before, after, n)
