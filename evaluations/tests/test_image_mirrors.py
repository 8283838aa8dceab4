"""The mirror map on real engines: a task's base image built from its target, the task folder unchanged,
what was built recorded for the rollout, and what cannot be built said before a trial, in one line (issue 44)."""
from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from evaluations.sandbox import backends
from evaluations.tests.container_helpers import BASE_IMAGE, image_id, make_env
from evaluations.tests.sandbox_helpers import TINY_TASK
from tasks import images, worker_images
from tasks.images import MirrorMap
from trajectories import run_environment

pytestmark = pytest.mark.containers

PUBLISHED = "ubuntu:22.04"  # what a real task asks for, and no engine here has


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


def task_from(tmp_path: Path, *lines: str, base: str = PUBLISHED) -> Path:
    """The tiny task, built FROM `base` with `lines` after its FROM."""
    task = tmp_path / "task"
    shutil.copytree(TINY_TASK, task)
    dockerfile = task / "environment" / "Dockerfile"
    body = dockerfile.read_text().replace(f"FROM {BASE_IMAGE}", f"FROM {base}")
    dockerfile.write_text(body.replace("WORKDIR /app", "\n".join([*lines, "WORKDIR /app"]), 1))
    return task


def test_a_mapped_base_image_is_built_from_its_target_and_recorded(tmp_path, engine, monkeypatch):
    task = task_from(tmp_path)
    before = folder_digest(task)
    monkeypatch.setenv(images.MIRRORS_VARIABLE, f"{PUBLISHED} = {BASE_IMAGE}")
    env = make_env(tmp_path, task, engine)

    async def scenario():
        await env.start(force_build=False)
        try:
            done = await env.exec("cat /etc/debian_version")
            assert done.return_code == 0 and done.stdout.strip().startswith("12")  # bookworm, the stand-in
        finally:
            await env.stop(delete=True)

    asyncio.run(scenario())
    assert folder_digest(task) == before  # the task's files, Dockerfile included, as published
    assert env._main_image_name.endswith("__mirror-" + env._main_image_name.rsplit("__mirror-", 1)[1])
    record = run_environment.parse((tmp_path / "trial" / run_environment.FILE_NAME).read_bytes())
    assert record["engine"] == engine and record["image"] == env._main_image_name
    assert record["image_id"] == image_id(engine, env._main_image_name)
    assert record["substitutions"] == [
        {"requested": PUBLISHED, "used": BASE_IMAGE, "image_id": image_id(engine, BASE_IMAGE), "stand_in_for": ""}
    ]
    assert run_environment.summary(record) == f"{BASE_IMAGE} instead of {PUBLISHED}"


def test_a_package_the_archive_lacks_fails_the_build_in_one_line(tmp_path, engine, monkeypatch):
    # The base image keeps no package lists: apt knows no package at all, and says so without the network.
    task = task_from(tmp_path, "RUN apt-get install -y --no-install-recommends linux-tools-generic")
    monkeypatch.setenv(images.MIRRORS_VARIABLE, f"{PUBLISHED} = {BASE_IMAGE}")
    env = make_env(tmp_path, task, engine)
    from harbor.environments.base import SandboxBuildFailedError

    async def scenario():
        try:
            await env.start(force_build=False)
        finally:
            await env.stop(delete=True)

    def stopped_containers() -> set[str]:
        listed = subprocess.run([engine, "ps", "-a", "-q", "--filter", "status=exited"], capture_output=True, text=True)
        return set(listed.stdout.split())

    before = stopped_containers()
    with pytest.raises(SandboxBuildFailedError) as raised:
        asyncio.run(scenario())
    assert stopped_containers() - before == set()  # the failed step's container is not left behind
    message = str(raised.value)
    assert message == (f"building the task's image failed: apt found no package linux-tools-generic in the archive of "
                       f"{BASE_IMAGE} (a stand-in's archive may lack a package of the published image's)")


def test_what_cannot_be_built_here_is_said_per_task(tmp_path, engine, monkeypatch):
    """Each reason the preflight and the runner give before a trial: the image, the map, the downloads."""
    unmapped = task_from(tmp_path / "a", base="python:3.11-slim")
    monkeypatch.delenv(images.MIRRORS_VARIABLE, raising=False)
    if worker_images.registry_reachable("python:3.11-slim") or worker_images.reachable("proxy.golang.org"):
        pytest.skip("Docker Hub or the Go proxy is reachable from here: nothing to refuse")
    assert backends.get(engine).task_problems(unmapped) == [
        f"the base image python:3.11-slim is not in {engine}'s store nor mapped in {images.MIRRORS_VARIABLE}, "
        "and its registry docker.io cannot be reached from this worker"
    ]

    mapped_to_nothing = MirrorMap.parse("python:3.*-slim = localhost/autolab-not-built:1", origin="the test's map")
    assert worker_images.environment_problems(engine, unmapped, mapped_to_nothing) == [
        f"python:3.11-slim is mapped to localhost/autolab-not-built:1 (the test's map), which is not in {engine}'s "
        "store (scripts/build-standin-images.sh builds the project's stand-ins)"
    ]

    fetching = task_from(tmp_path / "b", "RUN pip install torch --index-url https://download.invalid/whl/cpu",
                         base=BASE_IMAGE)
    (fetching / "environment" / "go.mod").write_text("module m\n\nrequire github.com/x/y v1.0.0\n")
    assert worker_images.environment_problems(engine, fetching, MirrorMap()) == [
        "the build downloads from download.invalid, which cannot be reached from this worker",
        "the build downloads Go modules (go.mod requires modules, with no vendor/ folder), and proxy.golang.org "
        "cannot be reached from this worker (no proxy)",
    ]

    monkeypatch.setenv(images.MIRRORS_VARIABLE, "python:3.11-slim = ")
    assert backends.get(engine).task_problems(unmapped) == [
        f"{images.MIRRORS_VARIABLE}, line 1: 'python:3.11-slim =' is not SOURCE = TARGET"
    ]
    monkeypatch.setenv(images.MIRRORS_VARIABLE, f"{PUBLISHED} = {BASE_IMAGE}")
    assert backends.get(engine).task_problems(task_from(tmp_path / "c")) == []


def test_a_stand_ins_package_list_names_what_its_archive_lacks(tmp_path, engine):
    """scripts/build-standin-images.sh's Ubuntu stand-in: Debian's archive has no linux-tools-generic."""
    standin = "localhost/autolab-standin-ubuntu:bookworm"
    if not image_id(engine, standin):
        pytest.skip(f"the stand-in {standin} is not built in {engine} (scripts/build-standin-images.sh)")
    task = task_from(tmp_path, "RUN apt-get update && apt-get install -y gcc make linux-tools-generic valgrind")
    problems = worker_images.environment_problems(engine, task, MirrorMap.parse(f"{PUBLISHED} = {standin}"))
    assert problems == [f"apt installs linux-tools-generic, which the archive of {standin} (the stand-in for "
                        f"{PUBLISHED}) does not have"]


@pytest.mark.django_db
def test_the_rollout_page_and_api_say_a_stand_in_ran(tmp_path, client):
    """An imported trial with our sandbox's record: the page's badge and words, the API's record."""
    from trajectories.models import Rollout
    from trajectories.services import import_trial_dir
    from trajectories.tests.trialdata import make_task, make_trial

    make_task()
    folder = make_trial(tmp_path / "trials")
    record = {"writer": "autolab-site sandbox", "engine": "podman", "image": "hb__demo__mirror-1234",
              "image_id": "sha256:feed", "substitutions": [
                  {"requested": PUBLISHED, "used": "localhost/autolab-standin-ubuntu:bookworm", "image_id": "sha256:beef",
                   "stand_in_for": PUBLISHED}]}
    (folder / run_environment.FILE_NAME).write_text(json.dumps(record))
    rollout = Rollout.objects.get(pk=import_trial_dir(folder).rollout_id)
    assert rollout.environment["substitutions"][0]["used"] == "localhost/autolab-standin-ubuntu:bookworm"
    page = client.get(f"/rollouts/{rollout.pk}/").content.decode()
    assert 'id="run-environment"' in page and "stand-in</span> built from localhost/autolab-standin-ubuntu:bookworm " \
        f"instead of {PUBLISHED}: not the published environment" in page
    rows = client.get("/api/v1/rollouts/").json()["results"]
    api = next(row for row in rows if row["id"] == rollout.pk)
    assert api["environment"]["image"] == "hb__demo__mirror-1234"
    assert api["environment"]["substitutions"][0]["requested"] == PUBLISHED


def test_the_preflight_names_the_task_and_its_image_before_a_launch(tmp_path, engine, monkeypatch):
    """The check a campaign's queue runs before any rollout exists (evaluations.running.preflight)."""
    from evaluations.running.preflight import ModelSettings, run_checks

    monkeypatch.setenv(images.MIRRORS_VARIABLE, f"{PUBLISHED} = {BASE_IMAGE}")
    runnable = task_from(tmp_path / "a")
    unmapped = task_from(tmp_path / "b", base="python:3.11-slim")
    if worker_images.registry_reachable("python:3.11-slim"):
        pytest.skip("Docker Hub is reachable from here: python:3.11-slim would be pulled")
    report = run_checks(ModelSettings(harness="oracle"), engine, [str(runnable), str(unmapped)])
    backend = {check.name: check for check in report.checks}["backend"]
    label = backends.get(engine).label
    assert not report.ok and backend.detail == (
        f"{label} cannot run 1 task(s): task: the base image python:3.11-slim is not in {engine}'s store nor mapped "
        f"in {images.MIRRORS_VARIABLE}, and its registry docker.io cannot be reached from this worker"
    )
