"""scripts/build-standin-images.sh: the stand-ins the real AutoLab tasks' base images map to.

Each engine present gets the script run (quick when its images are up to
date: it only inspects them; .ci/run has built them before the tests), then
the images are read the way a preflight and a task build would: labels,
the archive's package list, and pip refusing nothing outside a venv.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.containers

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "build-standin-images.sh"
BASE_IMAGE = "localhost/autolab-site-base:bookworm"
PACKAGES = "/usr/share/autolab-standin/packages"
# stand-in image -> what its org.autolab.standin.for label says it stands in for
STANDINS = {
    "localhost/autolab-standin-ubuntu:bookworm": "ubuntu:22.04",
    "localhost/autolab-standin-python:bookworm": "python:3.*-slim",
}


def engine_cmd(engine: str, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([engine, *args], capture_output=True, text=True, timeout=timeout)


@functools.cache
def built(engine: str) -> str:
    """Runs the script for `engine` once; returns why it cannot run here ("" when it ran)."""
    if shutil.which(engine) is None:
        return f"{engine} is not installed (.ci/run installs it)"
    base = engine_cmd(engine, "image", "inspect", BASE_IMAGE)
    if base.returncode != 0:
        # Also the answer when dockerd is not running: inspect cannot reach it.
        first = (base.stderr.strip().splitlines() or ["no output"])[0]
        return f"the base image {BASE_IMAGE} is not in {engine} ({first}; scripts/build-base-image.sh)"
    run = subprocess.run(
        ["bash", str(SCRIPT)], env={**os.environ, "ENGINE": engine}, capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return ""


def require_built(engine: str) -> None:
    reason = built(engine)
    if reason:
        pytest.skip(f"stand-ins not checked on {engine}: {reason}")


@pytest.mark.parametrize("engine", ["podman", "docker"])
@pytest.mark.parametrize("image", sorted(STANDINS))
def test_the_stand_in_says_what_it_is_and_lists_its_archive(engine, image):
    require_built(engine)
    labels = engine_cmd(engine, "image", "inspect", "--format", "{{json .Config.Labels}}", image)
    assert labels.returncode == 0, labels.stderr
    assert f'"org.autolab.standin.for":"{STANDINS[image]}"' in labels.stdout
    assert '"org.autolab.standin.archive":"debian bookworm"' in labels.stdout

    listed = engine_cmd(engine, "run", "--rm", "--network", "none", image, "cat", PACKAGES)
    assert listed.returncode == 0, listed.stderr
    names = set(listed.stdout.split())
    # The whole archive, not what is installed: a preflight asks it about packages
    # a task's Dockerfile would install.
    assert {"python3", "gcc", "make", "tmux", "valgrind"} <= names
    assert len(names) > 10_000
    # Ubuntu's, in most of the real C timing tasks: the one a preflight must name.
    assert "linux-tools-generic" not in names


@pytest.mark.parametrize("engine", ["podman", "docker"])
def test_the_python_stand_in_lets_pip_install_outside_a_venv(engine):
    """Like python:3.x-slim's pip: no PEP 668 refusal (`pip install X` in the real Dockerfiles)."""
    require_built(engine)
    image = "localhost/autolab-standin-python:bookworm"
    # --no-index: offline, pip gets as far as resolving, which is after the
    # externally-managed check it would have failed.
    pip = engine_cmd(
        engine, "run", "--rm", "--network", "none", image, "sh", "-c",
        "python --version && pip install --no-index six; echo exit=$?",
    )
    assert "Python 3.11" in pip.stdout
    assert "externally-managed-environment" not in pip.stdout + pip.stderr
    assert "No matching distribution found for six" in pip.stdout + pip.stderr


def test_a_missing_base_image_is_one_readable_line():
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (.ci/run installs it)")
    run = subprocess.run(
        ["bash", str(SCRIPT)],
        env={**os.environ, "ENGINE": "podman", "AUTOLAB_BASE_IMAGE": "localhost/autolab-no-such-base:none"},
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 1
    assert run.stderr.strip() == (
        "the base image localhost/autolab-no-such-base:none is missing in podman"
        " (ENGINE=podman scripts/build-base-image.sh builds it)"
    )
