"""AutoLab v1.1's 11 GPU tasks (../shared), on workers with and without GPUs.

Queued to `gpu` with their type; refused at preflight and before a run by
a worker that cannot give them their GPU, with one reason per task; podman
and bubblewrap cannot give GPUs at all. No GPU exists here: what Docker
would be asked for is read from the compose configuration a GPU task's
sandbox would start with (nothing is started).
"""
from __future__ import annotations

import asyncio
import base64
import json
import shutil
import socket
from pathlib import Path

import pytest
import yaml

from evaluations.models import Campaign
from evaluations.running.campaigns import create_campaign
from evaluations.running.preflight import ModelSettings, run_checks
from evaluations.running.runner import RunnerConfigError, check_can_run_here
from evaluations.sandbox import backends
from tasks.hardware import detect_host_gpus
from tasks.models import BenchmarkVersion
from tasks.services import import_tasks
from tasks.tests.test_hardware import REAL_GPU_TASKS, fake_nvidia_smi

from evaluations.tests.container_helpers import make_env
from evaluations.tests.runner_helpers import EXAMPLES, utility_entry
from evaluations.tests.worker_helpers import BrokerNamespace

HOST = socket.gethostname()
H100 = "NVIDIA H100 80GB HBM3"


def no_gpu_here() -> None:
    host = detect_host_gpus()
    if host.names:
        pytest.skip(f"this worker has {host}: the refusals are for a worker without one")


def gpu_task_dirs(real_tasks_dir: Path) -> list[Path]:
    return [real_tasks_dir / name for name in sorted(REAL_GPU_TASKS)]


def import_real(real_tasks_dir: Path) -> BenchmarkVersion:
    report = import_tasks(real_tasks_dir, version="1.1")
    assert report.ok, report.summary()
    return BenchmarkVersion.objects.get(name="1.1")


def waiting_messages(namespace: BrokerNamespace, queue: str) -> list[dict]:
    """The run messages waiting in a Redis queue: Celery's headers and the task's (args, kwargs)."""
    found = []
    for raw in namespace.waiting(queue):
        message = json.loads(raw)
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        found.append({"headers": message["headers"], "args": args, "kwargs": kwargs})
    return found


@pytest.mark.shared
@pytest.mark.django_db(transaction=True)
def test_a_campaign_on_the_real_gpu_tasks_queues_each_rollout_to_gpu_with_its_type(real_tasks_dir, redis_app):
    version = import_real(real_tasks_dir)
    model, harness = utility_entry("oracle")
    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(gpus__gt=0), k=2, backend="docker")
    assert len(campaign.send_report.sent) == 22 and not campaign.send_report.unsent
    assert waiting_messages(redis_app, "cpu") == []
    rollouts = {rollout.pk: rollout.task.name for rollout in campaign.rollouts.select_related("task")}
    sent = waiting_messages(redis_app, "gpu")
    assert sorted(message["args"][0] for message in sent) == sorted(rollouts)
    for message in sent:
        kind = REAL_GPU_TASKS[rollouts[message["args"][0]]]
        assert message["kwargs"] == {"gpu_type": kind, "gpus": 1}
        headers = message["headers"]
        assert (headers["queue"], headers["gpu_type"], headers["gpus"]) == ("gpu", kind, 1)


@pytest.mark.shared
def test_preflight_on_a_worker_without_a_gpu_refuses_each_gpu_task_with_its_reason(real_tasks_dir, monkeypatch):
    no_gpu_here()
    # The CPU task's base image, from the project's own (no registry here): tasks.images' mirror map.
    monkeypatch.setenv("AUTOLAB_IMAGE_MIRRORS", "ubuntu:22.04 = localhost/autolab-site-base:bookworm")
    if backends.get("docker").host_problems():
        pytest.skip("Docker is not usable here: " + "; ".join(backends.get("docker").host_problems()))
    folders = [*gpu_task_dirs(real_tasks_dir), real_tasks_dir / "discover_sorting"]  # and a CPU task, which passes
    report = run_checks(ModelSettings(harness="oracle"), "docker", [str(path) for path in folders], queue="gpu")
    backend = {check.name: check for check in report.checks}["backend"]
    assert not backend.ok and backend.detail.startswith(f"Docker cannot run {len(REAL_GPU_TASKS)} task(s): ")
    assert backend.detail.split(": ", 1)[1].split("; ")[:2] == [
        f"data_select_ifeval: needs 1 x H100 GPU, and worker {HOST} has no GPU (nvidia-smi is not installed "
        "and there is no /dev/nvidia* device)",
        f"flux2_klein_lora: needs 1 x L40S GPU, and worker {HOST} has no GPU (nvidia-smi is not installed "
        "and there is no /dev/nvidia* device)",
    ]
    assert backend.detail.endswith("; and 6 more")
    assert backends.get("docker").task_problems(real_tasks_dir / "discover_sorting") == []


@pytest.mark.shared
@pytest.mark.parametrize("name, label", [("podman", "Harbor's Podman environment"), ("bubblewrap", "the bubblewrap sandbox")])
def test_podman_and_bubblewrap_cannot_give_gpus_at_all(real_tasks_dir, name, label):
    for folder in gpu_task_dirs(real_tasks_dir):
        assert backends.get(name).task_problems(folder) == [
            f"needs 1 x {REAL_GPU_TASKS[folder.name]} GPU, and {label} cannot give a task GPUs: "
            "run it on the docker backend, on a worker with the GPU"
        ], folder.name


@pytest.mark.shared
def test_a_gpu_worker_needs_the_nvidia_container_toolkit_for_docker(real_tasks_dir, tmp_path, monkeypatch):
    """A worker whose nvidia-smi lists an H100: its Docker engine gives containers GPUs only through the toolkit's hook."""
    bin_dir = fake_nvidia_smi(tmp_path / "bin", H100)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin")
    docker = backends.get("docker")
    if backends.nvidia_container_toolkit():
        pytest.skip("this worker has the NVIDIA Container Toolkit")
    assert docker.task_problems(real_tasks_dir / "scaling_law") == [
        f"needs 1 x H100 GPU, and the Docker engine of worker {HOST} cannot give containers GPUs: install the "
        "NVIDIA Container Toolkit (no nvidia-container-runtime-hook on PATH, no nvidia runtime in docker info)"
    ]
    assert docker.task_problems(real_tasks_dir / "flux2_klein_lora") == [
        f"needs 1 x L40S GPU, and worker {HOST} has 1 GPU: {H100}"
    ]
    hook = bin_dir / "nvidia-container-runtime-hook"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    # Its GPUs given, what is left is its image (nvidia/cuda: pulled by a GPU worker online, else mapped).
    assert not [problem for problem in docker.task_problems(real_tasks_dir / "scaling_law") if "GPU" in problem]


@pytest.mark.shared
@pytest.mark.django_db
def test_the_runner_refuses_a_gpu_task_before_its_trial_on_a_worker_without_a_gpu(real_tasks_dir):
    no_gpu_here()
    if backends.get("docker").host_problems():
        pytest.skip("Docker is not usable here: " + "; ".join(backends.get("docker").host_problems()))
    version = import_real(real_tasks_dir)
    model, harness = utility_entry("oracle")
    campaign = create_campaign(model, harness, version, tasks=version.tasks.filter(name="scaling_law"), k=1,
                               backend="docker", enqueue=False)
    with pytest.raises(RunnerConfigError) as refused:
        check_can_run_here(campaign.rollouts.get())
    assert str(refused.value) == (
        f"scaling_law: needs 1 x H100 GPU, and worker {HOST} has no GPU (nvidia-smi is not installed and there "
        "is no /dev/nvidia* device)"
    )
    assert Campaign.objects.get(pk=campaign.pk).rollouts.get().status == "queued"


def test_every_local_backend_refuses_a_gpu_task_it_cannot_give_gpus(tmp_path):
    """A backend added without a GPU check fails here: on a machine without GPUs, every local backend refuses."""
    from evaluations.sandbox.backends import BACKENDS

    no_gpu_here()
    task = tmp_path / "gpu_task"
    shutil.copytree(EXAMPLES / "sort8_network", task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("gpus = 0", 'gpus = 1\ngpu_types = ["H100"]'))
    local = {name: backend for name, backend in BACKENDS.items() if name not in ("modal", "daytona")}
    assert set(local) == {"docker", "podman", "bubblewrap"}
    for name, backend in local.items():
        problems = backend.task_problems(task)
        assert len(problems) == 1 and problems[0].startswith("needs 1 x H100 GPU, and "), (name, problems)


# -- the device request Docker would be given ------------------------------------------------


def require_compose() -> None:
    from evaluations.sandbox.containers import compose_v2_works, docker_compose_v1_path

    if not compose_v2_works() and docker_compose_v1_path() is None:
        pytest.skip("no Docker Compose frontend here (docker compose, or Debian's docker-compose)")


async def compose_config(env) -> dict:
    """The GPU request DockerSandbox.start() brings up, as Compose resolves it: Harbor's override files written
    as start() writes them, then `config` over the files `up` is given (nothing is built or started)."""
    env._mounts_compose_path = env._write_mounts_compose_file()
    env._env_compose_path = env._write_env_compose_file()
    env._resources_compose_path = await env._write_resources_compose_file()
    done = await env._run_docker_compose_command(["config"])
    return yaml.safe_load(done.stdout)


@pytest.mark.shared
def test_each_real_gpu_task_asks_docker_for_its_gpus_once(real_tasks_dir, tmp_path):
    """7 of the 11 bring a compose file with their own device request, 4 get Harbor's: one request either way."""
    require_compose()
    own_compose = {folder.name for folder in gpu_task_dirs(real_tasks_dir)
                   if (folder / "environment" / "docker-compose.yaml").exists()}
    assert len(own_compose) == 7
    for folder in gpu_task_dirs(real_tasks_dir):
        env = make_env(tmp_path / folder.name, folder, "docker")
        assert env.capabilities.gpus  # Harbor's Docker environment gives GPUs: the preflight decides if this worker can
        main = asyncio.run(compose_config(env))["services"]["main"]
        assert main["deploy"]["resources"]["reservations"]["devices"] == [
            {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}
        ], folder.name
        # Harbor's own request only where the task's compose file makes none (Compose may add two lists up).
        harbor = json.loads(env._resources_compose_path.read_text())["services"]["main"]
        harbor_devices = harbor.get("deploy", {}).get("resources", {}).get("reservations", {}).get("devices")
        assert harbor_devices == (None if folder.name in own_compose else [
            {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}
        ]), folder.name
        assert main["network_mode"] == "none", folder.name
    flux = asyncio.run(compose_config(make_env(tmp_path / "again", real_tasks_dir / "flux2_klein_lora", "docker")))
    assert flux["services"]["main"]["shm_size"] == "8g"  # the rest of the task's own compose file holds


@pytest.mark.parametrize("printed, services", [
    ("services:\n  main:\n    network_mode: none\nversion: '3.9'\n", {"main": {"network_mode": "none"}}),
    ("WARNING: The FOO variable is not set. Defaulting to a blank string.\nservices:\n  main: {}\n", {"main": {}}),
    ("ERROR: Top level object in './docker-compose.yaml' needs to be an object not '<class 'str'>'.\n", None),
    ("", None),
])
def test_what_compose_v1_config_printed_is_read_as_v2_would_write_it(printed, services):
    from evaluations.sandbox.containers import compose_v1_config

    if services is None:
        with pytest.raises(RuntimeError, match="docker-compose config printed no configuration"):
            compose_v1_config(printed)
    else:
        assert compose_v1_config(printed)["services"] == services
