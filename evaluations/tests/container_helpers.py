"""Shared by the container backend tests: skip reasons, environments and trials on podman."""
from __future__ import annotations

import asyncio
import functools
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

BASE_IMAGE = "localhost/autolab-site-base:bookworm"


@functools.cache
def podman_problem() -> str:
    """Why real containers cannot run here ("" when they can)."""
    if shutil.which("podman") is None:
        return "podman is not installed (.ci/run installs it)"
    try:
        info = subprocess.run(["podman", "info"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"podman info failed: {exc}"
    if info.returncode != 0:
        return "podman info failed: " + info.stderr.decode(errors="replace").strip()[:300]
    image = subprocess.run(["podman", "image", "exists", BASE_IMAGE], capture_output=True, timeout=60)
    if image.returncode != 0:
        return f"the base image {BASE_IMAGE} is missing (scripts/build-base-image.sh builds it)"
    from evaluations.sandbox.containers import podman_compose_path

    if podman_compose_path() is None:
        return "podman-compose is not installed"
    return ""


def require_podman() -> None:
    problem = podman_problem()
    if problem:
        pytest.skip("real containers unavailable: " + problem)


def make_podman_env(tmp_path: Path, task_dir: Path, *, network: str = "no-network", **kwargs):
    from harbor.models.task.config import NetworkMode, NetworkPolicy
    from harbor.models.task.task import Task
    from harbor.models.trial.paths import TrialPaths

    from evaluations.sandbox.containers import PodmanSandbox

    task = Task(task_dir=task_dir)
    paths = TrialPaths(trial_dir=tmp_path / "trial")
    paths.mkdir()
    return PodmanSandbox(
        environment_dir=task.paths.environment_dir,
        environment_name=task.short_name,
        session_id=f"test-podman-{uuid.uuid4().hex[:8]}",
        trial_paths=paths,
        task_env_config=task.config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode(network)),
        sandbox_root=tmp_path / "sandboxes",
        **kwargs,
    )


def run_podman_trial(tmp_path: Path, task_dir: Path, agent: str = "oracle"):
    """One Harbor trial of `task_dir` on our podman environment: (result, trial folder)."""
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig, VerifierConfig
    from harbor.trial.trial import Trial

    config = TrialConfig(
        task=TaskConfig(path=task_dir),
        trials_dir=tmp_path / "trials",
        trial_name=f"{task_dir.name}__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name=agent),
        environment=EnvironmentConfig(
            import_path="evaluations.sandbox.containers:PodmanSandbox",
            kwargs={"sandbox_root": str(tmp_path / "sandboxes")},
        ),
        verifier=VerifierConfig(import_path="evaluations.verifier:TolerantVerifier"),
    )

    async def run():
        trial = await Trial.create(config)
        return await trial.run()

    return asyncio.run(run()), tmp_path / "trials" / config.trial_name


def containers_of(session_id: str) -> list[str]:
    """Names of the podman containers (any state) of a Harbor session."""
    listed = subprocess.run(
        ["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, timeout=60
    ).stdout.split()
    project = session_id.lower().replace(".", "-")
    return [name for name in listed if project in name]
