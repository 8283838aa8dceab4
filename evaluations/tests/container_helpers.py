"""Shared by the container backend tests: skip reasons, environments and trials on podman and docker.

Every container test runs on both engines (the `engine` fixture): Harbor's
orchestrator is one, but the frontends are not (podman-compose 1.x,
compose v1 or v2), and each has broken something of ours before.
"""
from __future__ import annotations

import asyncio
import functools
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

BASE_IMAGE = "localhost/autolab-site-base:bookworm"
ENGINES = ("podman", "docker")
SANDBOX_CLASS = {"podman": "PodmanSandbox", "docker": "DockerSandbox"}


@functools.cache
def engine_problem(engine: str) -> str:
    """Why real containers of `engine` cannot run here ("" when they can)."""
    from evaluations.sandbox import backends

    problems = backends.get(engine).host_problems()
    if problems:
        return "; ".join(problems) + " (.ci/run installs and starts it)"
    image = subprocess.run([engine, "image", "inspect", BASE_IMAGE], capture_output=True, timeout=60)
    if image.returncode != 0:
        return f"the base image {BASE_IMAGE} is missing (ENGINE={engine} scripts/build-base-image.sh builds it)"
    return ""


def podman_problem() -> str:
    return engine_problem("podman")


def require_engine(engine: str) -> None:
    problem = engine_problem(engine)
    if problem:
        pytest.skip(f"real {engine} containers unavailable: {problem}")


def require_podman() -> None:
    require_engine("podman")


def sandbox_class(engine: str):
    from evaluations.sandbox import containers

    return getattr(containers, SANDBOX_CLASS[engine])


def make_env(tmp_path: Path, task_dir: Path, engine: str, *, network: str = "no-network", **kwargs):
    from harbor.models.task.config import NetworkMode, NetworkPolicy
    from harbor.models.task.task import Task
    from harbor.models.trial.paths import TrialPaths

    task = Task(task_dir=task_dir)
    paths = TrialPaths(trial_dir=tmp_path / "trial")
    paths.mkdir()
    return sandbox_class(engine)(
        environment_dir=task.paths.environment_dir,
        environment_name=task.short_name,
        session_id=f"test-{engine}-{uuid.uuid4().hex[:8]}",
        trial_paths=paths,
        task_env_config=task.config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode(network)),
        sandbox_root=tmp_path / "sandboxes",
        **kwargs,
    )


def run_trial(tmp_path: Path, task_dir: Path, engine: str, agent: str = "oracle", *, sealed: bool = False):
    """One Harbor trial of `task_dir` on our `engine` environment: (result, trial folder)."""
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig, VerifierConfig
    from harbor.trial.trial import Trial

    from evaluations.sandbox.sealing import SealedTrial

    config = TrialConfig(
        task=TaskConfig(path=task_dir),
        trials_dir=tmp_path / "trials",
        trial_name=f"{task_dir.name}__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name=agent),
        environment=EnvironmentConfig(
            import_path=f"evaluations.sandbox.containers:{SANDBOX_CLASS[engine]}",
            kwargs={"sandbox_root": str(tmp_path / "sandboxes")},
        ),
        verifier=VerifierConfig(import_path="evaluations.running.verifier:TolerantVerifier"),
    )

    async def run():
        trial = await (SealedTrial if sealed else Trial).create(config)
        return await trial.run()

    return asyncio.run(run()), tmp_path / "trials" / config.trial_name


def containers_of(session_id: str, engine: str = "podman") -> list[str]:
    """Names of the containers (any state) of a Harbor session."""
    if shutil.which(engine) is None:
        return []
    listed = subprocess.run(
        [engine, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, timeout=60
    ).stdout.split()
    project = session_id.lower().replace(".", "-")
    return [name for name in listed if project in name]


def image_id(engine: str, name: str) -> str:
    found = subprocess.run([engine, "image", "inspect", "--format", "{{.Id}}", name], capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else ""
