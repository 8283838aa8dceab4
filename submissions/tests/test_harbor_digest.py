"""A task imported from its folder, then run by Harbor: the submission's task digest check passes.

Harbor 0.26 writes each trial's `lock.json` with the task's digest,
"sha256:" + `Packager.compute_content_hash(task_dir)`: its own hash of the
publishable files (task.toml, instruction.md, README, environment/, tests/,
solution/, steps/). The version pins that digest for each task as it was
imported; the lock here is built by Harbor's own `build_trial_lock`, as a
Harbor run builds it, never by hand. A task imported from its task.toml and
instruction.md alone pins the digest of those two files, which a run of the
full task never matches: the check says so.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model

from submissions import checks, services
from submissions.models import Team
from submissions.tests.helpers import tar_gz
from tasks.models import Task
from tasks.services import import_tasks
from trajectories.tests import trialdata

pytestmark = pytest.mark.django_db

EXAMPLE_TASK = Path(__file__).resolve().parents[2] / "examples" / "tasks" / "count_primes"


def harbor_lock(task_dir: Path) -> dict:
    """The trial lock Harbor 0.26 writes for a local run of `task_dir` (offline: nothing is downloaded or run)."""
    from harbor.models.job.lock import build_trial_lock
    from harbor.models.trial.config import TaskConfig, TrialConfig

    config = TrialConfig(task=TaskConfig(path=task_dir))
    resolved = SimpleNamespace(path=task_dir, content_hash=None, resolved_git_commit_id=None)
    lock = build_trial_lock(trial_config=config, task_download_result=resolved)
    return json.loads(lock.model_dump_json())


def harbor_job(task_name: str, task_dir: Path, dest: Path, n_trials: int = 2) -> Path:
    """A job folder of `n_trials` trials of the task, each with the lock.json Harbor writes for it."""
    job = dest / "job"
    lock = harbor_lock(task_dir)
    for n in range(n_trials):
        trial = trialdata.make_trial(job, f"{task_name}__trial{n}", task_name=task_name)
        result = json.loads((trial / "result.json").read_text())
        result["id"] = f"00000000-0000-0000-0000-00000000000{n}"
        result.pop("task_checksum")  # the lock's digest is the one read
        (trial / "result.json").write_text(json.dumps(result))
        (trial / "lock.json").write_text(json.dumps(lock))
    return job


@pytest.fixture
def site(settings, tmp_path):
    settings.UPLOADS_DIR = tmp_path / "uploads"
    settings.SUBMISSIONS_DIR = tmp_path / "submissions"
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "artifacts")},
    }}
    User = get_user_model()
    team = Team.objects.create(name="Outside Lab")
    member = User.objects.create_user("member")
    team.members.add(member)
    return {"team": team, "member": member, "tmp": tmp_path}


def digest_check(site, version_name: str, job: Path) -> dict:
    version = Task.objects.filter(version__name=version_name).first().version
    submission = services.receive(
        team=site["team"], user=site["member"], version=version, upload=tar_gz(job), file_name="job.tar.gz",
        model_name="test-model", harness_name="terminus-2", contact="lab@example.org",
    )
    services.check(submission)
    submission.refresh_from_db()
    return next(c for c in submission.checks if c["name"] == checks.TASK_DIGEST)


def import_one(task_dir: Path, version: str) -> Task:
    report = import_tasks(task_dir, version=version)
    assert report.ok, report.as_dict()
    return Task.objects.get(version__name=version, name=report.results[0].name)


def test_an_example_task_run_by_harbor_passes_the_digest_check(site):
    task = import_one(EXAMPLE_TASK, "digest-example")
    job = harbor_job(task.name, EXAMPLE_TASK, site["tmp"] / "sent")
    check = digest_check(site, "digest-example", job)
    assert check["passed"], check["reason"]


def test_a_real_task_run_by_harbor_passes_the_digest_check(site, real_tasks_dir):
    task_dir = real_tasks_dir / "discover_sorting"
    task = import_one(task_dir, "digest-real")
    job = harbor_job(task.name, task_dir, site["tmp"] / "sent")
    check = digest_check(site, "digest-real", job)
    assert check["passed"], check["reason"]


def test_a_changed_task_fails_the_digest_check(site, tmp_path):
    task = import_one(EXAMPLE_TASK, "digest-changed")
    changed = tmp_path / "count_primes"
    shutil.copytree(EXAMPLE_TASK, changed)
    (changed / "tests" / "test.sh").write_text((changed / "tests" / "test.sh").read_text() + "\n# changed\n")
    check = digest_check(site, "digest-changed", harbor_job(task.name, changed, site["tmp"] / "sent"))
    assert not check["passed"] and "the task differs from the version's" in check["reason"]


def test_a_task_imported_without_its_folders_says_so(site, shared_tasks_dir, real_tasks_dir):
    """../shared/autolab/tasks holds task.toml and instruction.md alone: their digest is recorded, which no run matches."""
    from harbor.publisher.packager import Packager

    described = shared_tasks_dir / "discover_sorting"
    task = import_one(described, "digest-described")
    assert not (task.has_environment or task.has_tests)
    assert task.harbor_digest == Packager.compute_content_hash(described)[0]
    job = harbor_job(task.name, real_tasks_dir / "discover_sorting", site["tmp"] / "sent")
    check = digest_check(site, "digest-described", job)
    assert not check["passed"]
    assert "holds only the task.toml and instruction.md of discover_sorting" in check["reason"], check["reason"]
