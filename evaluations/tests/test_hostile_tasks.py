"""The hostile-task suite (hostile.py) through the real runner, on every backend.

Each backend runs every attack once, as the oracle of a sealed version's
campaign, and each rollout must end with the honest reward (0), counted,
its cause named, in one attempt; the host's files must be as they were and
its secrets nowhere in what the trial left. Meanwhile a local user's view
of the host is watched (hostile.HostWatch): no setuid file the sandboxes
leave can be run, and no copy out holds more of the disk than the task's
storage.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from django.test import Client

from evaluations.running.campaigns import create_campaign
from evaluations.running.local_runs import run_campaign_sync, run_campaigns_sync
from evaluations.sandbox import backends
from tasks import images
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from trajectories.models import RolloutStatus
from trajectories.statuses import Disposition, disposition

from evaluations.tests.container_helpers import require_engine
from evaluations.tests.hostile import (
    ATTACKS,
    DISCOVER_SORTING_FORGED,
    FORGED,
    REAL_ATTACKS,
    HostWatch,
    host_secret,
    host_state,
    make_hostile_tasks,
    make_real_hostile_tasks,
)
from evaluations.tests.runner_helpers import EVERY_BACKEND, runner_settings, utility_entry
from evaluations.tests.sandbox_helpers import require_sandbox
from evaluations.tests.test_real_tasks import CI_MIRRORS, usable_engines
from evaluations.tests.board_factories import build_boards

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
            shutil.rmtree(folder)
    report = import_tasks(tasks, version="hostile")
    assert report.ok, report.summary()
    version = BenchmarkVersion.objects.get(name="hostile")
    if version.sealed_grading != sealed:
        version.sealed_grading = sealed
        version.save(update_fields=["sealed_grading"])
    return version


def outcome_problems(rollout, attack, folder: Path, secret: str) -> list[str]:
    """What is wrong with an attack's rollout: anything but the honest zero, counted, its cause named, once."""
    problems = []
    if attack.graded and (rollout.status != RolloutStatus.FINISHED or rollout.reward != 0.0):
        problems.append(f"{rollout.status}, reward {rollout.reward}: {rollout.verifier_fields}")
    if not attack.graded and (rollout.status != RolloutStatus.FAILED or rollout.reward is not None):
        # Ended while it was graded: no reward, and it counts (a zero).
        problems.append(f"{rollout.status}, reward {rollout.reward}, not failed without one")
    if FORGED in str(rollout.verifier_fields):
        problems.append("the forged reward reached the verifier's fields")
    if rollout.infra_error or rollout.attempts != 1:
        problems.append(f"infra_error {rollout.infra_error}, {rollout.attempts} attempts")
    if disposition(rollout.status, False, rollout.infra_error, rollout.excluded) != Disposition.COUNTED:
        problems.append("not counted in the figures")
    if rollout.failure_cause != attack.cause:
        problems.append(f"cause {rollout.failure_cause!r}, not {attack.cause!r}: {rollout.exception_message[:300]}")
    if secret and secret in trial_texts(folder):
        problems.append("the host's secret is in the trial folder")
    if attack.says not in rollout.exception_message:
        problems.append(f"{attack.says!r} not said: {rollout.exception_message[:300]!r}")
    if attack.verifier_reason and (rollout.verifier_fields or {}).get("reason") != attack.verifier_reason:
        problems.append(f"not the verifier's refusal ({attack.verifier_reason}): {rollout.verifier_fields}")
    if rollout.task.name == "forged_usage":
        # The oracle calls no model: its usage is none, whatever its sandbox wrote; the steps are its own account.
        if (rollout.cost_usd, rollout.n_input_tokens, rollout.n_output_tokens) != (None, None, None):
            problems.append(f"usage taken from the sandbox: {rollout.cost_usd}, {rollout.n_input_tokens}")
        if (rollout.usage_source, rollout.trajectory_source) != ("none", "agent") or not rollout.n_steps:
            problems.append(f"sources {rollout.usage_source}, {rollout.trajectory_source}, {rollout.n_steps} steps")
    if rollout.task.name == "disk_fill":
        size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
        if size >= 300 * MIB:
            problems.append(f"the trial folder holds {size // MIB} MB of a 256 MB task")
    return problems


def trial_texts(folder: Path) -> str:
    return "\n".join(path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file()
                     and not path.is_symlink() and path.stat().st_size < 50 * MIB)


@pytest.fixture
def reachable_sandbox_dir():
    """A sandbox folder where a worker keeps it (/tmp/autolab-sandboxes): below folders every local user may enter."""
    host_dir = Path(tempfile.mkdtemp(prefix="autolab-hostile-"))
    host_dir.chmod(0o755)
    yield host_dir / "sandboxes"
    shutil.rmtree(host_dir, ignore_errors=True)


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_no_attack_decides_its_score_on_any_backend(backend, settings, tmp_path, reachable_sandbox_dir):
    require_backend(backend)
    runner_settings(settings, tmp_path)
    settings.SANDBOX_DIR = reachable_sandbox_dir
    settings.KEEP_TRIAL_FOLDERS = True
    version = hostile_version(tmp_path)
    assert version.sealed_grading, "new versions seal grading"
    before, secret = host_state(), host_secret()
    model, harness = utility_entry("oracle")
    campaign = create_campaign(model, harness, version, k=1, backend=backend, enqueue=False)

    watch = HostWatch([settings.SANDBOX_DIR, settings.TRIALS_DIR], peak_of="sparse_copy__")
    watch.start()
    try:
        run_campaign_sync(campaign, own_process=True, concurrency=3)
    finally:
        watch.stop()

    assert host_state() == before
    # Every attack's outcome is checked before the test fails, so one run names every attack that worked.
    failed: dict[str, list[str]] = {}
    for rollout in campaign.rollouts.select_related("task"):
        name = rollout.task.name
        folder = settings.TRIALS_DIR / str(campaign.pk) / rollout.trial_name
        problems = outcome_problems(rollout, ATTACKS[name], folder, secret)
        if problems:
            failed[name] = problems + [f"events: {list(rollout.events.values_list('detail', flat=True))}"]
    assert sorted(campaign.rollouts.values_list("task__name", flat=True)) == sorted(ATTACKS)
    # The copy out of 4 GiB of sparse files never held more than the task's storage on the host.
    if watch.peak >= 300 * MIB:
        failed.setdefault("sparse_copy", []).append(f"the host held {watch.peak // MIB} MB of a 256 MB task's files")
    # The setuid copies of bash were there while the trial lasted, and no local user could run them.
    run = {path: out for path, out in watch.ran.items() if out.isdigit()}
    if run or not any(path.endswith("rootbash") for path in watch.ran):
        failed.setdefault("setuid_root", []).append(f"run by nobody (path: uid): {run or 'no setuid file seen'}")
    setuid_left = [str(path) for path in settings.TRIALS_DIR.rglob("*")
                   if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o6000]
    if setuid_left:
        failed.setdefault("setuid_root", []).append(f"setuid files in the trial folders: {setuid_left}")
    assert failed == {}
    assert list(settings.SANDBOX_DIR.iterdir()) == []
    # The grid and the failure taxonomy name the new cause.
    grid = Client().get(f"/campaigns/{campaign.pk}/progress.json").json()
    labels = {row["task"]: row["cells"][0]["label"] for row in grid["rows"]}
    assert labels["kill_everything"] == labels["disk_fill"] == "finished (sandbox ended by the agent)", labels
    assert labels["grading_stall"] == "failed (timed out in grading)", labels
    assert labels["grading_fork_bomb"] == "finished (grading disrupted by the agent)", labels
    # The board's cost and token figures hold nothing the sandbox wrote.
    build_boards(version)  # as the boards worker would (the API never builds one)
    (row,) = Client().get("/api/v1/leaderboard/", {"version": version.name}).json()["entries"]
    assert (row["cost_usd"], row["input_tokens"], row["output_tokens"]) == (None, None, None), row
    assert row["benchmark_calls_per_hour"] in (None, 0), row


@pytest.mark.containers
@pytest.mark.shared
def test_no_attack_on_a_real_task_decides_its_score(settings, tmp_path, real_tasks_dir, monkeypatch, reachable_sandbox_dir):
    """The probes written against AutoLab's own tasks (hostile.REAL_ATTACKS), on podman and docker in one pool.

    Real tasks need a container engine (bubblewrap refuses them before launch: the next test); their
    verifiers are the published ones, which run the candidate as root and trust the workspace.
    """
    engines = usable_engines()
    runner_settings(settings, tmp_path)
    settings.SANDBOX_DIR = reachable_sandbox_dir
    settings.KEEP_TRIAL_FOLDERS = True
    monkeypatch.setenv(images.MIRRORS_VARIABLE, str(settings.BASE_DIR / CI_MIRRORS))
    report = import_tasks(make_real_hostile_tasks(real_tasks_dir, tmp_path / "real_hostile"), version="real-hostile")
    assert report.ok, report.summary()
    version = BenchmarkVersion.objects.get(name="real-hostile")
    assert version.sealed_grading
    secret = host_secret()
    model, harness = utility_entry("oracle")
    campaigns = [create_campaign(model, harness, version, k=1, backend=engine, enqueue=False) for engine in engines]
    run_campaigns_sync(campaigns, own_process=True, concurrency=4)

    failed: dict[tuple[str, str], list[str]] = {}
    for campaign in campaigns:
        assert sorted(campaign.rollouts.values_list("task__name", flat=True)) == sorted(REAL_ATTACKS)
        for rollout in campaign.rollouts.select_related("task"):
            name = rollout.task.name
            folder = settings.TRIALS_DIR / str(campaign.pk) / rollout.trial_name
            problems = outcome_problems(rollout, REAL_ATTACKS[name], folder, secret)
            if DISCOVER_SORTING_FORGED in str(rollout.verifier_fields) or rollout.verifier_fields.get("metric") == 1:
                problems.append(f"the forged result reached the verifier's fields: {rollout.verifier_fields}")
            if problems:
                failed[(campaign.backend, name)] = problems + [f"events: {list(rollout.events.values_list('detail', flat=True))}"]
    assert failed == {}
    assert list(settings.SANDBOX_DIR.iterdir()) == []


@pytest.mark.shared
def test_the_real_task_probes_are_refused_on_bubblewrap_before_launch(tmp_path, real_tasks_dir):
    """Why the real-task probes run on the container engines only: bubblewrap says, per task, that it cannot build them."""
    tasks = make_real_hostile_tasks(real_tasks_dir, tmp_path / "real_hostile")
    refusals = {task.name: backends.get("bubblewrap").task_problems(task) for task in sorted(tasks.iterdir())}
    assert set(refusals) == set(REAL_ATTACKS)
    assert all(any(problem.startswith("needs a container backend") for problem in found) for found in refusals.values()), refusals


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
