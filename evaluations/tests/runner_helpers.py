"""Fixtures-in-functions shared by the runner tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from django.conf import settings

from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion

EXAMPLES = Path(settings.BASE_DIR) / "examples" / "tasks"


def import_examples(version: str = "examples") -> BenchmarkVersion:
    from tasks.services import import_tasks

    report = import_tasks(EXAMPLES, version=version)
    assert report.ok, report.summary()
    return BenchmarkVersion.objects.get(name=version)


def utility_entry(name: str) -> tuple[AgentModel, Harness]:
    model, _ = AgentModel.objects.get_or_create(name=name, defaults={"is_scripted": True})
    harness, _ = Harness.objects.get_or_create(name=name, version="")
    return model, harness


def runner_settings(settings, tmp_path: Path) -> None:
    settings.TRIALS_DIR = tmp_path / "trials"
    settings.SANDBOX_DIR = tmp_path / "sandboxes"
    settings.RUNNER_HEARTBEAT_SEC = 0.5
    settings.RUNNER_RETRY_BACKOFF_SEC = 0.1


# Every sandbox backend, each marked with what it needs (`-m "not containers"` leaves the engines out).
EVERY_BACKEND = [
    pytest.param("bubblewrap", marks=pytest.mark.sandbox),
    pytest.param("podman", marks=pytest.mark.containers),
    pytest.param("docker", marks=pytest.mark.containers),
]

