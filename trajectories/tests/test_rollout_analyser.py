"""RolloutAnalyser: a rollout analysed as its steps arrive equals the same rollout analysed at once.

The runner's live import feeds each tick's new steps to one analyser; the
pages then show what a re-import of the finished trial would.
"""
from __future__ import annotations

from dataclasses import asdict

import pytest

from tasks.spec import TaskSpec
from trajectories.analysis.rollout import RolloutAnalyser, analyse_rollout
from trajectories.reading.atif import parse_trajectory_data

from .harness_trajectories import HARNESSES
from .real_trials import OPUS, flux2_spec, load_steps
from .test_analysis import HASH_JOIN, T0, keys, step

EVAL = TaskSpec(name="t", metric="composite_quality", direction="higher", instruction="| Local eval | `python3 /app/evaluate.py` |")


def in_batches(steps, spec, started_at, sizes):
    """The analyser's result after feeding `steps` in batches of `sizes` (cycled), and the positions it revised."""
    analyser = RolloutAnalyser(spec, started_at)
    revised: set[int] = set()
    done, turn = 0, 0
    while done < len(steps):
        size = sizes[turn % len(sizes)]
        analyser.add(steps[done : done + size])
        result = analyser.result()
        revised |= {position for position in analyser.revised() if position < done}
        done += size
        turn += 1
    return result, revised


def test_a_result_printed_by_a_later_poll_revises_the_benchmark_step():
    steps = [
        step(1, 0, [keys("python3 /app/evaluate.py\n", 60)], "Generating 1/8\n"),
        step(2, 60, [keys("", 60)], "Generating 8/8\n"),
        step(3, 120, [keys("", 60)], '{"score": 0.61}\n'),
        step(4, 180, [keys("python3 /app/evaluate.py\n", 60)], "Generating 1/8\n"),
        step(5, 240, [keys("ls /app/output\n")], '{"score": 0.70}\n'),
    ]
    analyser = RolloutAnalyser(EVAL, None)
    analyser.add(steps[:2])
    first = analyser.result()
    assert first.steps[0].metric.status == "unparseable" and first.curve == []
    assert analyser.revised() == set()
    analyser.add(steps[2:3])
    second = analyser.result()
    assert second.steps[0].metric.value == 0.61
    assert analyser.revised() == {0}
    assert [(point.step_id, point.t) for point in second.curve] == [(3, 120.0)]  # plotted where it was printed
    analyser.add(steps[3:])
    third = analyser.result()
    # Step 4's run was followed by a step that is no poll: its result is final, unread.
    assert third.steps[3].metric.status == "unparseable"
    assert analyser.revised() == set()
    assert asdict(third) == asdict(analyse_rollout(steps, EVAL, None))


@pytest.mark.parametrize("sizes", [[1], [2, 3], [7]])
def test_made_up_runtime_rollout_in_batches(sizes):
    steps = [
        step(1, 0, source="user"),
        step(2, 10, [keys("make && ./bench\n")], "root@x:/app# make && ./bench\nruntime: 18000 ms\nroot@x:/app# "),
        step(3, 100, [keys("cat > /app/solve.c <<'EOF'\nint fast;\nEOF\n"), keys("make && ./bench\n", 30)], "runtime: 900 ms\n"),
        step(4, 200, [keys("./bench\n")], "still running\n"),
        step(5, 250, [keys("", 30)], "runtime: 1.5 s\n"),
        step(6, 300, [keys("./bench\n")], "Baseline time: 20.0 s\nYour time: 0.40 s\n"),
        step(7, 400, [("mark_task_complete", {})], ""),
    ]
    started = T0 - __import__("datetime").timedelta(seconds=20)
    whole = analyse_rollout(steps, HASH_JOIN, started)
    batched, revised = in_batches(steps, HASH_JOIN, started, sizes)
    assert asdict(batched) == asdict(whole)
    assert whole.steps[3].metric.value == 1.5  # read from step 5's poll
    if sizes == [1]:
        assert revised == {3}


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_every_harness_fixture_in_single_steps(harness):
    make, _ = HARNESSES[harness]
    steps = parse_trajectory_data(make()).steps
    spec = TaskSpec(name="t", metric="runtime_ms", direction="lower", instruction="Run `python3 /app/bench.py`.")
    assert asdict(in_batches(steps, spec, None, [1])[0]) == asdict(analyse_rollout(steps, spec, None))


@pytest.mark.parametrize("sizes", [[1], [5, 1, 13]])
def test_real_opus_rollout_in_batches(shared_trials_dir, shared_tasks_dir, sizes):
    steps = load_steps(shared_trials_dir / OPUS)
    spec = flux2_spec(shared_tasks_dir)
    whole = analyse_rollout(steps, spec, None)
    batched, revised = in_batches(steps, spec, None, sizes)
    assert asdict(batched) == asdict(whole)
    assert whole.curve and whole.files
    # Step 133's evaluation printed its score in step 137's poll: one revision, one step.
    if sizes == [1]:
        assert revised == {132}


def test_a_check_repeated_with_the_same_calls_repeats():
    steps = [
        step(1, 0, [keys("tail -3 train.log\n")], "step 10 loss 2.1\n"),
        step(2, 60, [keys("tail -3 train.log\n")], "step 20 loss 1.9\n"),
        step(3, 120, [keys("", 30)], ""),
        step(4, 150, [keys("tail -3 train.log\n")], "step 30 loss 1.7\n"),
        step(5, 180, [keys("tail -5 train.log\n")], "step 30 loss 1.7\n"),
        step(6, 240, [keys("cat > a.py <<'EOF'\nx = 1\nEOF\n")], ""),
        step(7, 300, [keys("cat > a.py <<'EOF'\nx = 1\nEOF\n")], ""),
    ]
    result = analyse_rollout(steps, HASH_JOIN, None)
    # Waits between checks do not count: step 4 looks as step 2 did. An edit repeated is no check.
    assert [analysis.repeats for analysis in result.steps] == [False, True, False, True, False, False, False]
