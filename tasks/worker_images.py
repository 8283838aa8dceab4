"""What a container engine on this worker has for a task's images, and what it cannot honour (tasks.images' rules).

`environment_problems` is the one answer to "can this worker build this
task's image?", read by the preflight (before a campaign's rollouts exist),
by `import_tasks` (which names, per task, what this worker cannot honour)
and by the environment itself. Each reason names the task's image and what
to do about it:

- a base image neither in the engine's store nor mapped, when its registry
  cannot be reached from here (an online worker pulls it at build time);
- a mapped image that is not in the store (a stand-in not built yet);
- a package the stand-in's archive lacks (stand-ins list their archive's
  packages: scripts/build-standin-images.sh);
- a host the build downloads from (pip's --index-url, curl), or Go modules
  and Rust crates it fetches, out of reach.

Django-free; the engine is asked with its own CLI, each answer cached in
this process (a campaign's preflight asks about the same images again and
again).
"""
from __future__ import annotations

import functools
import shutil
import socket
import subprocess
import time
from pathlib import Path

from tasks import images
from tasks.images import MirrorMap

# Written into each stand-in by scripts/build-standin-images.sh.
STANDIN_PACKAGES = "/usr/share/autolab-standin/packages"
STANDIN_LABEL = "org.autolab.standin.for"
# Where the registries that serve a reference's host answer (Docker Hub's API is not docker.io).
REGISTRY_ENDPOINTS = {"docker.io": "registry-1.docker.io"}
PROBE_TIMEOUT_SEC = 3.0
PROBE_TTL_SEC = 60.0
_probes: dict[str, tuple[float, bool]] = {}


def image_id(engine: str, reference: str) -> str:
    """The image's id in the engine's store, or "" when it has none by that name."""
    try:
        done = subprocess.run([engine, "image", "inspect", "--format", "{{.Id}}", reference],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else ""


def image_label(engine: str, reference: str, label: str) -> str:
    try:
        done = subprocess.run([engine, "image", "inspect", "--format", f'{{{{index .Config.Labels "{label}"}}}}', reference],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    value = done.stdout.strip() if done.returncode == 0 else ""
    return "" if value in ("<no value>", "map[]") else value


@functools.lru_cache(maxsize=64)
def _packages_of(engine: str, identity: str) -> frozenset[str] | None:
    try:
        done = subprocess.run([engine, "run", "--rm", "--network", "none", "--entrypoint", "cat", identity,
                               STANDIN_PACKAGES], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return frozenset(line.strip() for line in done.stdout.splitlines() if line.strip())


def archive_packages(engine: str, reference: str) -> frozenset[str] | None:
    """The packages a stand-in's apt archive offers (its own list), or None for an image that keeps no list."""
    identity = image_id(engine, reference)
    if not identity or not image_label(engine, reference, STANDIN_LABEL):
        return None
    return _packages_of(engine, identity)


def reachable(host: str, port: int = 443) -> bool:
    """Whether a TCP connection to the host opens within a few seconds (remembered for a minute)."""
    now = time.monotonic()
    seen = _probes.get(host)
    if seen and now - seen[0] < PROBE_TTL_SEC:
        return seen[1]
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_SEC):
            answer = True
    except OSError:
        answer = False
    _probes[host] = (now, answer)
    return answer


def registry_reachable(reference: str) -> bool:
    registry = images.registry_of(reference)
    host, _, port = REGISTRY_ENDPOINTS.get(registry, registry).partition(":")
    return reachable(host, int(port or 443))


@functools.cache
def answering_engines() -> tuple[str, ...]:
    """The container engines installed here whose daemon or store answers (podman, docker)."""
    found = []
    for engine in ("podman", "docker"):
        if shutil.which(engine) is None:
            continue
        try:
            done = subprocess.run([engine, "version"], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            found.append(engine)
    return tuple(found)


def environment_problems(engine: str, task_dir: Path, mirrors: MirrorMap) -> list[str]:
    """Why this worker's engine cannot build the task's image ([] when it can), one reason a finding."""
    environment = Path(task_dir) / "environment"
    dockerfile = environment / "Dockerfile"
    if not dockerfile.is_file():
        return []  # a prebuilt image or a compose file of the task's own: Harbor's to pull
    try:
        text = dockerfile.read_text()
    except OSError as exc:
        return [f"environment/Dockerfile cannot be read ({exc.strerror})"]
    problems = []
    for requested in images.base_images(text):
        used = mirrors.target(requested)
        if used is None:
            if not image_id(engine, requested) and (images.is_local(requested) or not registry_reachable(requested)):
                problems.append(
                    f"the base image {requested} is not in {engine}'s store nor mapped in {images.MIRRORS_VARIABLE}, "
                    f"and its registry {images.registry_of(requested)} cannot be reached from this worker"
                )
            continue
        if not image_id(engine, used) and (images.is_local(used) or not registry_reachable(used)):
            problems.append(f"{requested} is mapped to {used} ({mirrors.origin}), which is not in {engine}'s store "
                            "(scripts/build-standin-images.sh builds the project's stand-ins)")
            continue
        offered = archive_packages(engine, used)
        if offered is not None:
            lacking = [name for name in images.apt_packages(text) if name not in offered]
            if lacking:
                problems.append(f"apt installs {', '.join(lacking)}, which the archive of {used} (the stand-in for "
                                f"{requested}) does not have")
    unreachable = [host for host in images.download_hosts(text) if not reachable(host)]
    if unreachable:
        problems.append(f"the build downloads from {', '.join(unreachable)}, which cannot be reached from this worker")
    for language, download in images.dependency_downloads(environment):
        host = images.DEPENDENCY_HOSTS[language]
        if not reachable(host):
            problems.append(f"the build downloads {download}, and {host} cannot be reached from this worker (no proxy)")
    return problems
