"""Smaller things a trial folder says that must not be lost: subagent order, root metadata, bad bytes, handoffs."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.urls import reverse

from trajectories.models import Rollout, SubTrajectory
from trajectories.services import import_trial_dir

from .trialdata import START, make_task, make_trial, trajectory, write_json


@pytest.fixture
def task(db):
    return make_task("demo_task")


def test_subagents_are_listed_in_the_order_they_ran(tmp_path, task, client):
    folder = make_trial(tmp_path)
    # terminus-2 runs summary, then questions, then answers; by name they sort the other way.
    for offset, role in enumerate(["summary", "questions", "answers"]):
        sub = trajectory(1, start=START + timedelta(minutes=10 + offset))
        sub["steps"].insert(0, {"step_id": 0, "timestamp": START.isoformat(), "source": "user", "message": "copied",
                                "is_copied_context": True})
        write_json(folder / "agent" / f"trajectory.summarization-1-{role}.json", sub)
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    names = list(SubTrajectory.objects.filter(rollout=rollout).order_by("pk").values_list("name", flat=True))
    assert names == [f"trajectory.summarization-1-{role}.json" for role in ("summary", "questions", "answers")]
    page = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert page.index("1-summary.json") < page.index("1-questions.json") < page.index("1-answers.json")


def test_root_session_id_and_final_metrics_are_stored(tmp_path, task):
    data = trajectory(2)
    data["final_metrics"].update({"total_steps": 3, "extra": {"total_reasoning_tokens": 42}})
    import_trial_dir(make_trial(tmp_path, trajectory_data=data))
    rollout = Rollout.objects.get()
    assert rollout.session_id == "session-1"
    assert rollout.final_metrics["total_steps"] == 3 and rollout.final_metrics["extra"] == {"total_reasoning_tokens": 42}


def test_one_byte_that_is_not_utf8_is_replaced_with_a_warning(tmp_path, task):
    folder = make_trial(tmp_path)
    path = folder / "agent" / "trajectory.json"
    raw = path.read_bytes().replace(b"time: 10.0 ms", b"time: 10.0 ms \xff\xfe binary")
    path.write_bytes(raw)
    outcome = import_trial_dir(folder)
    assert outcome.outcome == "created", outcome.error
    rollout = Rollout.objects.get()
    assert rollout.n_steps == 3
    observation = rollout.steps.get(step_id=2).observations.get()
    assert observation.content == "time: 10.0 ms \ufffd\ufffd binary"
    assert "trajectory.json: 2 bytes that are not UTF-8 replaced with U+FFFD" in rollout.validation_warnings


def test_linear_history_continuation_keeps_the_handoff_with_the_answers(tmp_path, task):
    main = trajectory(2)
    main["continued_trajectory_ref"] = "trajectory.cont-1.json"
    folder = make_trial(tmp_path, trajectory_data=main)
    cont = trajectory(1, start=START + timedelta(hours=1))
    handoff = "Summary: ... Answers to your questions: 1. the benchmark is python3 bench.py"
    copied = [dict(step, is_copied_context=True) for step in main["steps"]]
    copied = [{k: v for k, v in step.items() if k not in ("tool_calls", "observation", "metrics")} for step in copied]
    copied.append({"step_id": len(copied) + 1, "source": "user", "message": handoff, "is_copied_context": True})
    agent_steps = [dict(step, step_id=len(copied) + n) for n, step in enumerate(cont["steps"][1:], 1)]
    cont["steps"] = copied + agent_steps
    (folder / "agent" / "trajectory.cont-1.json").write_text(json.dumps(cont))
    import_trial_dir(folder)
    rollout = Rollout.objects.get()
    steps = list(rollout.steps.filter(subtrajectory=None).order_by("position"))
    assert [s.message for s in steps].count(handoff) == 1
    handoff_step = next(s for s in steps if s.message == handoff)
    assert handoff_step.position == 3 and handoff_step.extra["continuation"]["copied_context"] is True
    assert rollout.n_steps == len(steps) == 3 + 1 + 1  # main, the handoff, the continuation's own agent step


def test_repeated_and_gapped_step_ids_get_one_address_each(tmp_path, task, client):
    data = trajectory(12)
    for step in data["steps"][3:13]:
        step["step_id"] = 10  # ten steps share id 10
    data["steps"].append(dict(data["steps"][1], step_id=40))
    import_trial_dir(make_trial(tmp_path, trajectory_data=data))
    rollout = Rollout.objects.get()
    steps = list(rollout.steps.filter(subtrajectory=None).order_by("position"))
    assert [s.step_id for s in steps] == list(range(1, 15))
    # The file's ids are kept where they differ from the position (the tenth step's is 10 anyway).
    assert [s.extra.get("atif_step_id") for s in steps][3:] == [10] * 6 + [None] + [10] * 3 + [40]
    [warning] = [w for w in rollout.validation_warnings if "step ids:" in w]
    assert "9 steps repeat an id (10 ×10)" in warning and "2 gaps (missing 4-9, 11-39)" in warning
    page = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert page.count('id="step-10"') == 1 and page.count('id="step-14"') == 1
    # ?step=N is the step at position N.
    response = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk]) + "?step=12")
    assert response.status_code in (200, 302)


def test_warnings_about_ids_list_the_first_few_and_count_the_rest():
    from trajectories.reading.atif import parse_trajectory_data

    data = trajectory(20)
    for n, step in enumerate(data["steps"]):
        step["step_id"] = 1 + 2 * n  # every other id missing
    warnings = parse_trajectory_data(data).warnings
    [warning] = [w for w in warnings if w.startswith("step ids:")]
    assert "20 gaps (missing 2, 4, 6, 8, 10, and 15 more)" in warning
