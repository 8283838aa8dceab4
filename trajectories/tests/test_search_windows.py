"""The substring stage takes the rollouts that could hold a fragment a window of documents at a time.

A fragment inside words of every rollout stops at the first window; a rare
one has the rollouts past it found at once. Either way the hits are those
of looking through every step in order: these tests compare them with that,
over more rollouts than one window holds.
"""
import pytest

from trajectories.models import Step
from trajectories.search import query as search

from . import factories

pytestmark = pytest.mark.django_db

ROLLOUTS = search.FIRST_WINDOW + 40  # the first window, and more past it
RARE = {3, search.FIRST_WINDOW + 5, ROLLOUTS - 1}  # rollouts holding the rare fragment


@pytest.fixture
def rollouts():
    """ROLLOUTS rollouts of 3 steps: the second of each runs evaluate_local.py, the third of RARE ones says
    'calibrationword'; the first task's rollouts are a third of them."""
    model, harness = factories.make_model(), factories.make_harness()
    tasks = [factories.make_task(), factories.make_task()]
    made = [
        factories.make_rollout(task=tasks[0 if n % 3 == 0 else 1], model=model, harness=harness, index=n)
        for n in range(ROLLOUTS)
    ]
    steps = []
    for n, rollout in enumerate(made):
        for position in range(3):
            message = f"step {position} of run {n}."
            if position == 1:
                message += " python evaluate_local.py --quick"
            if position == 2 and n in RARE:
                message += " the calibrationword was off"
            steps.append(Step(rollout=rollout, position=position, step_id=position + 1, source="agent", message=message))
    Step.objects.bulk_create(steps)
    search.rebuild_documents([rollout.pk for rollout in made])
    return made, tasks


def _every_step_holding(fragment: str, task=None) -> list[tuple[int, int, str]]:
    """(rollout, position, where) of every main step whose message holds `fragment`, in order: the answer
    of reading every step."""
    steps = Step.objects.filter(subtrajectory__isnull=True, message__icontains=fragment)
    if task is not None:
        steps = steps.filter(rollout__task=task)
    return [(rollout_id, position, "message") for rollout_id, position in steps.order_by("rollout_id", "position").values_list("rollout_id", "position")]


def _found(fragment: str, limit: int = 200, **filters) -> list[tuple[int, int, str]]:
    result = search.search(fragment, search.Filters(**filters), limit=limit)
    assert not result.cut_short and not result.busy
    # A fragment inside words: no step holds it as words, the substring stage answers.
    assert all(hit.rank == 0 for hit in result.hits)
    return [(hit.rollout_id, hit.position, hit.where) for hit in result.hits]


def test_a_fragment_in_every_rollout_gives_the_first_hits_in_order(rollouts):
    expected = _every_step_holding("aluate_lo")
    assert len(expected) == ROLLOUTS
    assert _found("aluate_lo", limit=20) == expected[:20]
    assert _found("aluate_lo") == expected


def test_a_rare_fragment_is_found_past_the_first_window(rollouts):
    expected = _every_step_holding("alibrationwor")
    assert [rollout_id for rollout_id, _, _ in expected] == [rollouts[0][n].pk for n in sorted(RARE)]
    assert _found("alibrationwor") == expected


def test_filters_choose_the_rollouts_windows_look_through(rollouts):
    task = rollouts[1][0]
    expected = _every_step_holding("aluate_lo", task=task)
    assert 0 < len(expected) < ROLLOUTS
    assert _found("aluate_lo", task=task.pk) == expected
    assert _found("aluate_lo", limit=7, task=task.pk) == expected[:7]
