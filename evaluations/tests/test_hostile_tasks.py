"""The hostile-task suite (hostile.py) through the real runner, on every backend.

Each backend runs every attack once, as the oracle of a sealed version's
campaign, and each rollout must end with the honest reward (0), counted,
its cause named, in one attempt; the host's files must be as they were and
its secrets nowhere in what the trial left.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from evaluations.running.campaigns import create_campaign
from evaluations.running.local_runs import run_campaign_sync
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from trajectories.models import RolloutStatus
from trajectories.statuses import Disposition, disposition

from evaluations.tests.container_helpers import require_engine
from evaluations.tests.hostile import ATTACKS, FORGED, host_secret, host_state, make_hostile_tasks
from evaluations.tests.runner_helpers import EVERY_BACKEND, runner_settings, utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox

pytestmark = [pytest.mark.django_db(transaction=True)]

MIB = 1 << 20


def require_backend(backend: str) -> None:
    if backend == "bubblewrap":
        require_sandbox()
    else:
        require_engine(backend)


def hostile_version(tmp_path: Path, *, sealed: bool = True, only: tuple[str, ...] = ()) -> BenchmarkVersion:
    tasks = make_hostile_tasks(tmp_path / "hostile")
    for folder in tasks.iterdir():
        if only and folder.name not in only:
            import shutil

            shutil.rmtree(folder)
    report = import_tasks(tasks, version="hostile")
    assert report.ok, report.summary()
    version = BenchmarkVersion.objects.get(name="hostile")
    if version.sealed_grading != sealed:
        version.sealed_grading = sealed
        version.save(update_fields=["sealed_grading"])
    return version


def trial_texts(folder: Path) -> str:
    return "\n".join(path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file()
                     and not path.is_symlink() and path.stat().st_size < 50 * MIB)


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_no_attack_decides_its_score_on_any_backend(backend, settings, tmp_path):
    require_backend(backend)
    runner_settings(settings, tmp_path)
    settings.KEEP_TRIAL_FOLDERS = True
    version = hostile_version(tmp_path)
    assert version.sealed_grading, "new versions seal grading"
    before, secret = host_state(), host_secret()
    model, harness = utility_entry("oracle")
    campaign = create_campaign(model, harness, version, k=1, backend=backend, enqueue=False)

    run_campaign_sync(campaign)

    assert host_state() == before
    seen = {}
    for rollout in campaign.rollouts.select_related("task"):
        name = rollout.task.name
        events = list(rollout.events.values_list("detail", flat=True))
        seen[name] = (rollout.reward, rollout.failure_cause)
        if ATTACKS[name].graded:
            assert rollout.status == RolloutStatus.FINISHED and rollout.reward == 0.0, (name, rollout.reward, events)
        else:  # the verifier ran out of time: no reward, a failure that counts 0
            assert rollout.status == RolloutStatus.FAILED and rollout.reward is None, (name, rollout.reward, events)
        assert FORGED not in str(rollout.verifier_fields), (name, rollout.verifier_fields)
        assert disposition(rollout.status, False, rollout.infra_error, rollout.excluded) == Disposition.COUNTED, name
        assert not rollout.infra_error and rollout.attempts == 1, (name, events)
        assert rollout.failure_cause == ATTACKS[name].cause, (name, rollout.failure_cause, rollout.exception_message)
        folder = settings.TRIALS_DIR / str(campaign.pk) / rollout.trial_name
        if secret:
            assert secret not in trial_texts(folder), name
        if name == "disk_fill":
            assert "storage_mb" in rollout.exception_message
            size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
            assert size < 300 * MIB, f"the trial folder holds {size // MIB} MB of a 256 MB task"
        if name == "kill_everything":
            assert "ended its sandbox" in rollout.exception_message
        if name == "forged_usage":
            # The oracle calls no model: its usage is none, whatever its sandbox wrote; the steps are its own account.
            assert (rollout.cost_usd, rollout.n_input_tokens, rollout.n_output_tokens) == (None, None, None)
            assert (rollout.usage_source, rollout.trajectory_source) == ("none", "agent"), rollout.validation_warnings
            assert rollout.n_steps > 0  # read, and shown as the agent's own account
    assert sorted(seen) == sorted(ATTACKS)
    assert list(settings.SANDBOX_DIR.iterdir()) == []
    # The grid and the failure taxonomy name the new cause.
    grid = Client().get(f"/campaigns/{campaign.pk}/progress.json").json()
    labels = {row["task"]: row["cells"][0]["label"] for row in grid["rows"]}
    assert labels["kill_everything"] == labels["disk_fill"] == "finished (sandbox ended by the agent)", labels
    assert labels["grading_stall"] == "failed (timed out in grading)", labels
    assert labels["grading_fork_bomb"] == "finished (grading disrupted by the agent)", labels
    # The board's cost and token figures hold nothing the sandbox wrote.
    (row,) = Client().get("/api/v1/leaderboard/", {"version": version.name}).json()["entries"]
    assert (row["cost_usd"], row["input_tokens"], row["output_tokens"]) == (None, None, None), row
    assert row["benchmark_calls_per_hour"] in (None, 0), row


def test_without_sealed_grading_the_shared_verifier_runs_the_agents_python(settings, tmp_path):
    """Why grading is sealed: on podman, Harbor's shared verifier finds the agent's python3 first on PATH."""
    require_backend("podman")
    runner_settings(settings, tmp_path)
    version = hostile_version(tmp_path, sealed=False, only=("path_wrapper",))
    task = version.tasks.get()
    toml = Path(task.source_path) / "task.toml"
    # The example's own task.toml asks for a separate verifier: this copy does not.
    toml.write_text(toml.read_text().replace('environment_mode = "separate"', 'environment_mode = "shared"'))
    model, harness = utility_entry("oracle")
    campaign = create_campaign(model, harness, version, k=1, backend="podman", enqueue=False)
    run_campaign_sync(campaign)
    assert campaign.rollouts.get().reward == 1.0


def test_a_grading_fork_bomb_leaves_the_verifier_room_on_every_backend():
    """The candidate's process limit (tests/candidate.py) is far below its sandbox's, on every backend."""
    import inspect
    import re

    from evaluations.sandbox.bubblewrap import BubblewrapEnvironment
    from evaluations.sandbox.containers import DEFAULT_MAX_PROCESSES
    from evaluations.tests.runner_helpers import EXAMPLES

    text = (EXAMPLES / "count_primes" / "tests" / "candidate.py").read_text()
    candidate_limit = int(re.search(r"^MAX_PROCESSES = (\d+)$", text, re.M).group(1))
    bubblewrap = inspect.signature(BubblewrapEnvironment.__init__).parameters["max_processes"].default
    assert 4 * candidate_limit <= min(bubblewrap, DEFAULT_MAX_PROCESSES), (candidate_limit, bubblewrap)
