"""terminus-2 driven by the scripted stub LLM: live steps, then the full trajectory."""
from __future__ import annotations

import logging
import re
import threading
import time

import pytest

from evaluations.demo import demo_model_and_harness
from evaluations.running.campaigns import create_campaign
from evaluations.running.runner import run_rollout
from evaluations.running.stub_llm import start_stub_server
from trajectories import statuses
from trajectories.models import Rollout, RolloutStatus, Step

from evaluations.tests.runner_helpers import import_examples, runner_settings
from evaluations.tests.sandbox_helpers import require_sandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stub_server():
    server = start_stub_server(port=0)
    yield server
    server.shutdown()


def stub_rollout(settings, tmp_path, monkeypatch, port: int, task: str) -> Rollout:
    """One queued rollout of the scripted stub driving terminus-2 on an example task (bubblewrap)."""
    require_sandbox()
    runner_settings(settings, tmp_path)
    settings.STUB_LLM_PORT = port
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-the-stub")
    version = import_examples()
    model, harness = demo_model_and_harness("terminus-2", "scripted-stub", "scripted stub (not a model)")
    assert model.api_base == f"http://127.0.0.1:{port}/v1" and model.is_scripted
    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(name=task), k=1,
                               backend="bubblewrap", enqueue=False)
    return campaign.rollouts.get()


def test_terminus_with_the_stub_streams_steps_and_scores(settings, tmp_path, monkeypatch, stub_server, caplog):
    rollout = stub_rollout(settings, tmp_path, monkeypatch, stub_server.port, "sort8_network")
    caplog.set_level(logging.INFO, logger="evaluations.running.runner")

    outcome = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("result", run_rollout(rollout.pk)))
    thread.start()
    live_steps = 0
    deadline = time.monotonic() + 120
    while thread.is_alive() and time.monotonic() < deadline:
        status = Rollout.objects.filter(pk=rollout.pk).values_list("status", flat=True).get()
        if status in statuses.ACTIVE:
            live_steps = max(live_steps, Step.objects.filter(rollout_id=rollout.pk).count())
        time.sleep(0.2)
    thread.join(timeout=60)
    assert not thread.is_alive()

    assert live_steps > 0, "steps were visible while the trial ran"
    # The watcher imported the growing trajectory tick by tick, the whole trial only once.
    counts = re.search(r"(\d+) live imports, (\d+) of them in full", caplog.text)
    assert counts and int(counts[1]) >= 2 and int(counts[2]) == 1, caplog.text[-2000:]
    assert outcome["result"].status == RolloutStatus.FINISHED
    rollout.refresh_from_db()
    assert rollout.reward == pytest.approx(1.0)
    assert rollout.n_steps >= 6
    assert rollout.n_benchmark_calls == 2
    assert rollout.n_edits >= 1
    assert Step.objects.filter(rollout=rollout, kinds__contains=" edit ").exclude(diff="").exists()
    curve = rollout.curve
    assert [point["metric"] for point in curve] == [28.0, 19.0]
    assert rollout.best_metric == 19.0
    assert stub_server.state.requests >= 6
    # The dummy key stayed in the worker: not in the stored config or the sandbox's trial folder.
    assert "dummy-key-for-the-stub" not in str(rollout.config)
    from trajectories.storing.artifacts import open_artifact

    assert len(rollout.artifacts) >= 5
    for entry in rollout.artifacts:
        with open_artifact(rollout, entry["path"]) as stored:
            assert b"dummy-key-for-the-stub" not in stored.read(), entry["path"]
    # The terminal pane and the trial's log, for the rollout page.
    assert {"trial.log", "agent/terminus_2.pane"} <= {entry["path"] for entry in rollout.artifacts}
    # terminus-2 runs on the host: its usage and steps are its own, and the runner says which files the sandbox wrote.
    assert (rollout.usage_source, rollout.trajectory_source) == ("harness", "harness")
    from trajectories.storing.artifacts import stored_json

    record = stored_json(rollout, "autolab-provenance.json")
    assert record["usage"] == "harness" and "agent/terminus_2.pane" in record["from_sandbox"], record
    assert "agent/trajectory.json" not in record["from_sandbox"] and "result.json" not in record["from_sandbox"]


@pytest.mark.parametrize("task", ["count_primes", "ring_classifier"])
def test_the_stub_solves_every_example_task(settings, tmp_path, monkeypatch, stub_server, task):
    """count_primes used to fail every time: the stub typed its rewrite into a terminal still busy benchmarking."""
    rollout = stub_rollout(settings, tmp_path, monkeypatch, stub_server.port, task)
    assert run_rollout(rollout.pk).status == RolloutStatus.FINISHED
    rollout.refresh_from_db()
    assert rollout.n_benchmark_calls == 2 and rollout.n_edits >= 1
    assert rollout.reward > 0.3, (rollout.reward, rollout.failure_cause, rollout.verifier_fields)
    assert len(rollout.curve) == 2 and rollout.curve[1]["best_score"] > rollout.curve[0]["score"]


def test_the_stub_waits_for_a_benchmark_slower_than_its_first_look(settings, tmp_path, monkeypatch):
    """The stub glances at the terminal after 0.3 s; count_primes' benchmark takes seconds: it must wait, not type."""
    from evaluations.running.stub_llm import script_for_task

    from evaluations.tests.runner_helpers import EXAMPLES

    server = start_stub_server(port=0, scripts=[script_for_task(EXAMPLES / "count_primes", bench_duration=0.3)])
    try:
        rollout = stub_rollout(settings, tmp_path, monkeypatch, server.port, "count_primes")
        assert run_rollout(rollout.pk).status == RolloutStatus.FINISHED
    finally:
        server.shutdown()
    rollout.refresh_from_db()
    assert rollout.reward > 0.3, (rollout.reward, rollout.failure_cause)
    assert [point["metric"] is not None for point in rollout.curve] == [True, True]
