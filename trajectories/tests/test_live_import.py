"""The runner's live import: each tick stores the steps trajectory.json gained, and ends as a full import would.

The real opus rollout (../shared) is replayed as Harbor writes it while it
runs: trajectory.json rewritten whole after each step, no result.json.
"""
from __future__ import annotations

import json
import re
import shutil

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from harbor.utils.trajectory_utils import format_trajectory_json

from agents.services import ensure_harness, ensure_model
from tasks.services import import_tasks, match_task
from trajectories.models import Observation, Rollout, RolloutDocument, RolloutStatus, Step, ToolCall
from trajectories.services import import_trial_dir, live_import
from trajectories.storing.ingest import ANALYSIS_SUMMARY_FIELDS

from .real_trials import OPUS

pytestmark = pytest.mark.django_db

# Cuts of the 139 steps: step 133 runs the evaluation, step 137's poll shows its score.
CUTS = [1, 2, 60, 133, 134, 136, 137, 139]


@pytest.fixture
def opus(tmp_path, shared_tasks_dir, shared_trials_dir):
    import_tasks(shared_tasks_dir, version="1.1")
    source = shared_trials_dir / OPUS
    steps = json.loads((source / "agent" / "trajectory.json").read_text())
    return source, steps


def running_copy(source, folder, name):
    shutil.copytree(source, folder)
    (folder / "result.json").unlink()
    config = json.loads((folder / "config.json").read_text())
    config["trial_name"] = name
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def write_steps(folder, document, n, **changes):
    data = dict(document, steps=document["steps"][:n], **changes)
    (folder / "agent" / "trajectory.json").write_text(format_trajectory_json(data))


def runner_rollout(folder) -> Rollout:
    config = json.loads((folder / "config.json").read_text())
    model, harness = ensure_model("openai/claude-opus-4.6"), ensure_harness("terminus-2", "2.0.0")
    task = match_task(config["task"]["path"].rsplit("/", 1)[-1], version="1.1")
    return Rollout.objects.create(
        task=task, model=model, harness=harness, trial_name=config["trial_name"], status=RolloutStatus.RUNNING
    )


def running(opus, tmp_path):
    """(trial folder, its trajectory, a running copy, the runner's rollout, its live import)."""
    source, document = opus
    folder = running_copy(source, tmp_path / f"live__{OPUS}", "live")
    rollout = runner_rollout(folder)
    return source, document, folder, rollout, live_import(folder, rollout.pk)


def stored(rollout: Rollout) -> dict:
    """Everything the pages read of a rollout's main trajectory, ids aside."""
    rollout.refresh_from_db()
    return {
        "steps": list(Step.objects.filter(rollout=rollout).order_by("position").values_list(
            "position", "step_id", "timestamp", "elapsed_sec", "kinds", "message", "diff", "search_document",
            "metric_value", "metric_unit", "metric_score", "metric_status", "prompt_tokens",
        )),
        "calls": list(ToolCall.objects.filter(step__rollout=rollout).order_by("step__position", "position").values_list(
            "step__position", "position", "call_id", "function_name", "arguments", "kinds",
        )),
        "observations": list(Observation.objects.filter(step__rollout=rollout).order_by("step__position", "position").values_list(
            "step__position", "position", "content", "tool_call__position",
        )),
        "figures": {name: getattr(rollout, name) for name in (*ANALYSIS_SUMMARY_FIELDS, "n_steps", "n_input_tokens", "final_metrics")},
        "words": set(RolloutDocument.objects.get(rollout=rollout).words.split()),
    }


def imported_at_once(source, tmp_path, document, n, **changes) -> dict:
    folder = running_copy(source, tmp_path / f"once-{n}__{OPUS}", f"once-{n}")
    write_steps(folder, document, n, **changes)
    outcome = import_trial_dir(folder, live=True)
    assert outcome.ok, outcome.error
    return stored(Rollout.objects.get(pk=outcome.rollout_id))


def test_ticks_store_what_an_import_of_the_same_file_stores(opus, tmp_path):
    source, document, folder, rollout, live = running(opus, tmp_path)
    for n in CUTS:
        write_steps(folder, document, n, final_metrics={"total_prompt_tokens": 1000 * n})
        outcome = live.tick()
        assert outcome.ok and outcome.n_steps == n, outcome.error
        if n in (136, 137):
            step_133 = Step.objects.get(rollout=rollout, position=132)
            assert step_133.metric_status == ("unparseable" if n == 136 else "parsed")
    assert live.full_imports == 1  # the first tick only
    got = stored(rollout)
    assert got["figures"]["n_input_tokens"] == 139_000 and got["figures"]["curve"]
    expected = imported_at_once(source, tmp_path, document, 139, final_metrics={"total_prompt_tokens": 139_000})
    assert got == expected
    assert rollout.status == RolloutStatus.RUNNING and rollout.checksum == ""


def test_a_tick_reads_none_of_the_stored_steps(opus, tmp_path):
    source, document, folder, rollout, live = running(opus, tmp_path)
    write_steps(folder, document, 100)
    assert live.tick().ok
    write_steps(folder, document, 101)
    with CaptureQueriesContext(connection) as queries:
        assert live.tick().n_steps == 101
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    rows_read = [sql for sql in reads if re.search(r'(FROM|JOIN) "trajectories_(step|toolcall|observation)"', sql)]
    assert reads and not rows_read, rows_read


def test_a_rewritten_trajectory_is_imported_in_full(opus, tmp_path):
    source, document, folder, rollout, live = running(opus, tmp_path)
    write_steps(folder, document, 50)
    assert live.tick().ok
    revised = json.loads(json.dumps(document))
    revised["steps"][10]["message"] = "a summarisation rewrote this step"
    write_steps(folder, revised, 52)
    assert live.tick().n_steps == 52
    assert live.full_imports == 2
    write_steps(folder, revised, 53)
    assert live.tick().n_steps == 53 and live.full_imports == 2
    assert stored(rollout) == imported_at_once(source, tmp_path, revised, 53)


def test_a_file_caught_mid_write_is_read_on_the_next_tick(opus, tmp_path):
    source, document, folder, rollout, live = running(opus, tmp_path)
    write_steps(folder, document, 20)
    assert live.tick().ok
    path = folder / "agent" / "trajectory.json"
    write_steps(folder, document, 22)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 300])
    assert live.tick().error
    path.write_bytes(whole)
    assert live.tick().n_steps == 22 and live.full_imports == 1
    assert Step.objects.filter(rollout=rollout).count() == 22


def test_a_rollout_that_ended_is_no_longer_written(opus, tmp_path):
    source, document, folder, rollout, live = running(opus, tmp_path)
    write_steps(folder, document, 5)
    assert live.tick().ok
    Rollout.objects.filter(pk=rollout.pk).update(status=RolloutStatus.CANCELLED)
    write_steps(folder, document, 6)
    assert "no longer live" in live.tick().error
    assert Step.objects.filter(rollout=rollout).count() == 5


def test_a_trial_with_subagent_files_is_imported_in_full_on_every_tick(opus, tmp_path):
    source, document, folder, rollout, live = running(opus, tmp_path)
    write_steps(folder, document, 10)
    assert live.tick().ok and live.full_imports == 1
    summary = dict(document, steps=document["steps"][:2], session_id="summary-1")
    (folder / "agent" / "trajectory.summarization-1-summary.json").write_text(format_trajectory_json(summary))
    for n in (11, 12):
        write_steps(folder, document, n)
        assert live.tick().n_steps == n
    assert live.full_imports == 3
    assert Step.objects.filter(rollout=rollout, subtrajectory=None).count() == 12
