"""The sandbox backends a campaign can run on: one registry, one interface.

Each backend says how to configure Harbor's environment for a trial, what
a worker host needs and how to check it (the preflight), whether a task can
run on it at all (checked before a trial starts), and how to remove what a
dead worker left behind. The runner, the reaper, the launch form and the
worker table of docs/operators.md all read this one table.

Django-free: paths come in as arguments.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tasks.hardware import GpuNeed

CONTAINERS_MODULE = "evaluations.sandbox.containers"


@dataclass(frozen=True)
class SandboxBackend:
    name: str
    label: str
    help: str
    # What a worker host needs, in words (docs/operators.md and the launch page).
    host_needs: str
    # Whether tasks that need GPUs can run on it.
    gpus: bool
    # sandbox_root -> Harbor's EnvironmentConfig for a trial.
    environment: Callable[[Path], object]
    # Why this host cannot run the backend at all ([] when it can).
    host_problems: Callable[[], list[str]]
    # Why one task (its folder) cannot run on it ([] when it can).
    task_problems: Callable[[Path], list[str]] = field(default=lambda task_dir: [])
    # Remove what is left of a session (processes, containers) on this host; returns how many.
    cleanup: Callable[[str], int] = field(default=lambda session_id: 0)


# -- containers -------------------------------------------------------------------


def compose_project(session_id: str) -> str:
    """The compose project name Harbor gives a session's containers."""
    name = session_id.lower()
    if not re.match(r"^[a-z0-9]", name):
        name = "0" + name
    return re.sub(r"[^a-z0-9_-]", "-", name)


def remove_session_containers(engine: str, session_id: str) -> int:
    """Force-remove every container of the session's compose project; how many."""
    if shutil.which(engine) is None:
        return 0
    try:
        listed = subprocess.run(
            [engine, "ps", "-a", "-q", "--filter", f"label=com.docker.compose.project={compose_project(session_id)}"],
            capture_output=True, text=True, timeout=60,
        )
        ids = listed.stdout.split()
        if ids:
            subprocess.run([engine, "rm", "-f", *ids], capture_output=True, timeout=120)
        return len(ids)
    except (OSError, subprocess.SubprocessError):
        return 0


def _engine_problems(engine: str, compose: list[str]) -> list[str]:
    if shutil.which(engine) is None:
        return [f"{engine} is not installed"]
    try:
        info = subprocess.run([engine, "info"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"{engine} info failed: {exc}"]
    if info.returncode != 0:
        detail = (info.stderr or info.stdout).decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return [f"{engine} is not reachable ({engine} info: {detail[0][:200]})"]
    if not compose:
        return [f"no compose frontend for {engine}"]
    return []


def _podman_problems() -> list[str]:
    from evaluations.sandbox.containers import podman_compose_path

    compose = podman_compose_path()
    problems = _engine_problems("podman", [compose] if compose else [])
    return [p.replace("no compose frontend for podman", "podman-compose is not installed (pip install podman-compose)")
            for p in problems]


def _docker_problems() -> list[str]:
    from evaluations.sandbox.containers import compose_v2_works, docker_compose_v1_path

    problems = _engine_problems("docker", ["docker", "compose"])
    if not problems and not compose_v2_works() and docker_compose_v1_path() is None:
        problems.append(
            "Docker Compose is missing (neither `docker compose version` nor docker-compose works: "
            "install the Compose plugin, or Debian's docker-compose)"
        )
    return problems


# -- GPUs ---------------------------------------------------------------------------


def _gpu_problems(task_dir: Path, shortfall: Callable[[GpuNeed], str]) -> list[str]:
    """A backend's GPU check of a task: `shortfall` of what it needs ("" when given), or why task.toml cannot be read."""
    from tasks.hardware import task_gpu_need
    from tasks.taskdir import TaskDirError

    try:
        need = task_gpu_need(task_dir)
    except (TaskDirError, OSError) as exc:
        return [str(exc)]
    problem = shortfall(need) if need.count else ""
    return [problem] if problem else []


def _docker_gpu_shortfall(need: GpuNeed) -> str:
    """Whether this worker can give the task its GPUs: tasks.hardware's rule, then the engine's toolkit.

    Harbor's Docker environment says it gives GPUs wherever it runs (the
    Compose device request is written either way); whether the host has
    them is decided here, before a trial starts, so that a worker without
    them refuses the task with its reason instead of failing at `up`.
    """
    from tasks.hardware import detect_host_gpus, gpu_shortfall

    worker = socket.gethostname()
    shortfall = gpu_shortfall(need, detect_host_gpus(), f"worker {worker}")
    if shortfall or nvidia_container_toolkit():
        return shortfall
    return (f"needs {need}, and the Docker engine of worker {worker} cannot give containers GPUs: install the "
            "NVIDIA Container Toolkit (no nvidia-container-runtime-hook on PATH, no nvidia runtime in docker info)")


def nvidia_container_toolkit() -> bool:
    """Whether this host's Docker engine can answer an NVIDIA device request.

    dockerd registers its `nvidia` device driver when the toolkit's hook
    (nvidia-container-runtime-hook, or nvidia-cdi-hook) is on its PATH;
    a host set up with the toolkit's runtime lists `nvidia` in its runtimes.
    """
    if shutil.which("nvidia-container-runtime-hook") or shutil.which("nvidia-cdi-hook"):
        return True
    try:
        info = subprocess.run(["docker", "info", "--format", "{{json .Runtimes}}"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return info.returncode == 0 and "nvidia" in info.stdout


def _no_gpus(label: str) -> Callable[[GpuNeed], str]:
    """The GPU shortfall of a backend that gives no task GPUs at all."""
    return lambda need: f"needs {need}, and {label} cannot give a task GPUs: run it on the docker backend, on a worker with the GPU"


def _container_task_problems(engine: str, gpu_shortfall: Callable[[GpuNeed], str]) -> Callable[[Path], list[str]]:
    """A container backend's check of a task: its GPUs first (the reason that matters), then its image.

    The image: whether this worker's engine can build it here, with the
    worker's mirror map (tasks.worker_images: a base image neither present
    nor mapped, a stand-in not built, a package the stand-in's archive
    lacks, a dependency download with no way out).
    """

    def problems(task_dir: Path) -> list[str]:
        from tasks import images, worker_images

        found = _gpu_problems(task_dir, gpu_shortfall)
        if found:
            return found
        try:
            mirrors = images.MirrorMap.from_environment()
        except images.ImageMirrorError as exc:
            return [str(exc)]
        return worker_images.environment_problems(engine, task_dir, mirrors)

    return problems


def _container_environment(class_name: str):
    def configure(sandbox_root: Path):
        from harbor.models.trial.config import EnvironmentConfig

        return EnvironmentConfig(
            import_path=f"{CONTAINERS_MODULE}:{class_name}", kwargs={"sandbox_root": str(sandbox_root)}
        )

    return configure


# -- bubblewrap ---------------------------------------------------------------------


def _bubblewrap_environment(sandbox_root: Path):
    from harbor.models.trial.config import EnvironmentConfig

    return EnvironmentConfig(
        import_path="evaluations.sandbox.bubblewrap:BubblewrapEnvironment",
        kwargs={"sandbox_root": str(sandbox_root)},
    )


def _bubblewrap_host_problems() -> list[str]:
    from evaluations.sandbox.bubblewrap import host_problems

    return host_problems()


def _bubblewrap_task_problems(task_dir: Path) -> list[str]:
    from evaluations.sandbox.bubblewrap import check_task_dir

    # A GPU is the reason that matters: no host sandbox gives one, whatever else the task needs.
    problems = _gpu_problems(task_dir, _no_gpus("the bubblewrap sandbox"))
    if problems:
        return problems
    problems = check_task_dir(task_dir)
    return ["needs a container backend: " + "; ".join(problems)] if problems else []


def _bubblewrap_cleanup(session_id: str) -> int:
    from evaluations.sandbox.bubblewrap import kill_sandbox

    return kill_sandbox(session_id)


# -- cloud providers ---------------------------------------------------------------------


def _provider(kind: str):
    def configure(sandbox_root: Path):
        from harbor.models.trial.config import EnvironmentConfig

        return EnvironmentConfig(type=kind)

    return configure


def _needs_variables(*names: str, package: str):
    def problems() -> list[str]:
        found = []
        try:
            __import__(package)
        except ImportError:
            found.append(f"the {package} package is not installed on this worker")
        found += [f"{name} is not set on this worker" for name in names if not os.environ.get(name)]
        return found

    return problems


BACKENDS: dict[str, SandboxBackend] = {
    backend.name: backend
    for backend in (
        SandboxBackend(
            name="docker",
            label="Docker",
            help="Harbor's Docker environment: builds the task's image, GPUs through NVIDIA device requests.",
            host_needs="a Docker engine with the Compose plugin (and the NVIDIA Container Toolkit for GPU tasks)",
            gpus=True,
            environment=_container_environment("DockerSandbox"),
            host_problems=_docker_problems,
            task_problems=_container_task_problems("docker", _docker_gpu_shortfall),
            cleanup=lambda session_id: remove_session_containers("docker", session_id),
        ),
        SandboxBackend(
            name="podman",
            label="Podman",
            help="Harbor's orchestrator on rootful Podman: builds the task's image; no GPUs.",
            host_needs="rootful podman with runc, podman-compose, and the base images the tasks build FROM",
            gpus=False,
            environment=_container_environment("PodmanSandbox"),
            host_problems=_podman_problems,
            task_problems=_container_task_problems("podman", _no_gpus("Harbor's Podman environment")),
            cleanup=lambda session_id: remove_session_containers("podman", session_id),
        ),
        SandboxBackend(
            name="bubblewrap",
            label="bubblewrap sandbox (host)",
            help="The fallback without a container engine: the task on the worker host's own tools, "
            "for Dockerfiles that need nothing beyond them.",
            host_needs="root, bwrap, nsenter, setpriv, prlimit and tmux",
            gpus=False,
            environment=_bubblewrap_environment,
            host_problems=_bubblewrap_host_problems,
            task_problems=_bubblewrap_task_problems,
            cleanup=_bubblewrap_cleanup,
        ),
        SandboxBackend(
            name="modal",
            label="Modal",
            help="Harbor's Modal provider (cloud sandboxes, GPUs).",
            host_needs="the modal package and MODAL_TOKEN_ID / MODAL_TOKEN_SECRET",
            gpus=True,
            environment=_provider("modal"),
            host_problems=_needs_variables("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", package="modal"),
        ),
        SandboxBackend(
            name="daytona",
            label="Daytona",
            help="Harbor's Daytona provider (cloud sandboxes).",
            host_needs="the daytona package and DAYTONA_API_KEY",
            gpus=True,
            environment=_provider("daytona"),
            host_problems=_needs_variables("DAYTONA_API_KEY", package="daytona"),
        ),
    )
}


class UnknownBackend(KeyError):
    pass


def get(name: str) -> SandboxBackend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise UnknownBackend(f"unknown sandbox backend {name!r} (one of {', '.join(BACKENDS)})") from None


def local_default() -> str:
    """The backend this host can run: podman, else docker, else bubblewrap (for make demo)."""
    for name in ("podman", "docker", "bubblewrap"):
        if not BACKENDS[name].host_problems():
            return name
    return "bubblewrap"
