"""The container backends (Harbor's Docker/Podman orchestrator through ours), in real podman and docker containers."""
from __future__ import annotations

import asyncio
import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

from autolab_site.safe_files import find_links

from evaluations.tests.container_helpers import containers_of, image_id, make_env, run_trial
from evaluations.tests.escape import FORGED_REWARD, host_files, make_escape_task, make_victims
from evaluations.tests.sandbox_helpers import TINY_TASK, check_copy_out_stops_at_storage

pytestmark = pytest.mark.containers


def test_links_planted_in_the_logs_never_reach_a_host_file(tmp_path, engine):
    """Issue 12's escape, in containers: the solution links /logs names to host files; none changes."""
    victims = make_victims(tmp_path / "host")
    before = host_files(victims)
    result, trial_dir = run_trial(tmp_path, make_escape_task(tmp_path, victims), engine)
    assert host_files(victims) == before
    assert "planted" in (trial_dir / "agent" / "oracle.txt").read_text()
    assert find_links(trial_dir) == []
    assert (trial_dir / "agent" / "exit-code.txt").read_text() == "3"  # the host's own file
    assert result.verifier_result.rewards["reward"] == 1.0 != FORGED_REWARD
    assert list((tmp_path / "sandboxes").iterdir()) == []  # staging removed with the sandbox


PROBE = """
python3 - <<'PY' > /logs/agent/net.txt 2>&1
import socket, struct
route = [line.split() for line in open("/proc/net/route").read().splitlines()[1:]]
gateways = [socket.inet_ntoa(struct.pack("<L", int(r[2], 16))) for r in route if r[1] == "00000000"]
host = gateways[0] if gateways else "10.88.0.1"
try:
    socket.create_connection((host, {port}), timeout=5).sendall(b"from the sandbox")
    print("reached", host)
except OSError as exc:
    print("blocked", host, exc)
PY
"""


class Listener:
    """A TCP server on every host address that records whether anything connected."""

    def __init__(self):
        self.socket = socket.create_server(("0.0.0.0", 0))
        self.port = self.socket.getsockname()[1]
        self.received: list[bytes] = []
        self.socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            with connection:
                self.received.append(connection.recv(100))

    def close(self):
        self._stop.set()
        self._thread.join()
        self.socket.close()


def probe_task(tmp_path: Path, port: int, *, allow_internet: bool) -> Path:
    task = tmp_path / ("open_task" if allow_internet else "closed_task")
    shutil.copytree(TINY_TASK, task)
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + PROBE.format(port=port))
    if allow_internet:
        toml = task / "task.toml"
        toml.write_text(toml.read_text().replace("allow_internet = false", "allow_internet = true"))
    return task


def test_a_trial_log_holds_no_usage_text_of_a_command_the_frontend_lacks(tmp_path, engine):
    """podman-compose and compose v1 have no `compose cp`: uploads go the way that works, not after a failed try.

    Harbor tried `compose cp` for every upload and fell back to a tar stream
    only after it failed, logging the frontend's whole usage text each time
    (five screens per sealed trial on podman).
    """
    result, trial_dir = run_trial(tmp_path, TINY_TASK, engine, sealed=True)
    assert result.verifier_result.rewards["reward"] == 1.0
    log = (trial_dir / "trial.log").read_text()
    assert "usage:" not in log.lower() and "Commands:" not in log, log[:3000]
    assert "compose cp failed" not in log and " cp " not in log, log[:3000]


def test_a_task_without_internet_cannot_reach_the_host(tmp_path, engine):
    """allow_internet = false: the main service has no network, proven against a control run with one."""
    listener = Listener()
    try:
        _, closed = run_trial(tmp_path / "closed", probe_task(tmp_path, listener.port, allow_internet=False), engine)
        assert listener.received == []
        _, opened = run_trial(tmp_path / "open", probe_task(tmp_path, listener.port, allow_internet=True), engine)
    finally:
        listener.close()
    assert (closed / "agent" / "oracle.txt").exists()
    assert (closed / "agent" / "net.txt").read_text().startswith("blocked"), (closed / "agent" / "net.txt").read_text()
    # The control: the same probe with a network reaches the listener.
    assert (opened / "agent" / "net.txt").read_text().startswith("reached")
    assert listener.received == [b"from the sandbox"]


def test_limits_of_task_toml_hold_inside_the_container(tmp_path, engine):
    """cpus = 1, memory_mb = 512 (tiny_sum's task.toml) and the pids limit, read back in the container."""
    env = make_env(tmp_path, TINY_TASK, engine, max_processes=64)

    async def scenario():
        await env.start(force_build=False)
        try:
            read = await env.exec(
                "cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us "
                "/sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max 2>/dev/null "
                "|| cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max"
            )
            forks = await env.exec(
                "python3 -c \"\nimport os, time\nn = 0\ntry:\n    for _ in range(200):\n"
                "        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\n"
                "except OSError:\n    pass\nprint(n)\n\""
            )
            return read, forks, containers_of(env.session_id, engine)
        finally:
            await env.stop(delete=True)

    read, forks, running = asyncio.run(scenario())
    values = read.stdout.split()
    if len(values) == 4:  # cgroup v1
        quota, period, memory, pids = values
        assert int(quota) / int(period) == 1.0
    else:  # cgroup v2: "quota period", memory, pids
        quota, period, memory, pids = values
        assert int(quota) / int(period) == 1.0
    assert int(memory) == 512 * 1024 * 1024
    assert pids == "64"
    assert 0 < int(forks.stdout.strip()) < 64
    assert running and containers_of(env.session_id, engine) == []  # removed at stop


def test_a_second_trial_of_a_task_reuses_its_image(tmp_path, engine):
    def start_and_stop(folder: Path) -> str:
        env = make_env(folder, TINY_TASK, engine)

        async def scenario():
            await env.start(force_build=False)
            await env.stop(delete=True)

        asyncio.run(scenario())
        return env._main_image_name

    name = start_and_stop(tmp_path / "one")
    first = image_id(engine, name)
    assert first, "the image outlives the trial that built it"
    assert start_and_stop(tmp_path / "two") == name
    assert image_id(engine, name) == first  # the same image, not a new build


def test_stop_removes_the_containers_with_one_compose_call(tmp_path, engine, monkeypatch):
    """No grace for the keep-alive, and nothing sent into the removed containers afterwards.

    Harbor's own stop() (which ours calls for its bookkeeping) would chown
    the log binds inside the container and `down` the project again: each
    a compose call costing seconds, into containers that are gone.
    """
    from harbor.environments.docker.docker import DockerEnvironment

    env = make_env(tmp_path, TINY_TASK, engine)
    sent: list[list[str]] = []
    spawn = DockerEnvironment._run_docker_compose_command

    async def recorded(self, command, *args, **kwargs):  # Harbor's call, the one that starts compose
        if self is env:
            sent.append(list(command))
        return await spawn(self, command, *args, **kwargs)

    monkeypatch.setattr(DockerEnvironment, "_run_docker_compose_command", recorded)

    async def scenario():
        await env.start(force_build=False)
        assert containers_of(env.session_id, engine)
        sent.clear()
        await env.stop(delete=True)

    asyncio.run(scenario())
    assert sent == [["down", "--volumes", "--remove-orphans", "-t", "0"]]
    assert containers_of(env.session_id, engine) == []


def test_agent_processes_are_killed_before_grading(tmp_path, engine):
    env = make_env(tmp_path, TINY_TASK, engine)

    async def scenario():
        await env.start(force_build=False)
        try:
            # What terminus-2 leaves: a tmux server, running a job of the agent's.
            await env.exec("tmux new-session -d -s main 'sleep 300'")
            before = await env.exec("ps -eo args | grep -c '^sleep 30[01]'")
            await env.begin_verification()
            after = await env.exec("ps -eo args | grep -c '^sleep 30[01]' || true; tmux has-session 2>/dev/null || echo no-tmux")
            alive = await env.exec("echo still-running")
            return before, after, alive
        finally:
            await env.stop(delete=True)

    before, after, alive = asyncio.run(scenario())
    assert before.stdout.split() == ["1"]
    assert after.stdout.split() == ["0", "no-tmux"]
    assert alive.stdout.strip() == "still-running"


def test_gpu_task_compose_carries_the_nvidia_device_request(tmp_path):
    """No GPU here: the configuration Harbor generates for a GPU task is read instead (Docker backend)."""
    from harbor.models.task.config import NetworkMode, NetworkPolicy
    from harbor.models.task.task import Task
    from harbor.models.trial.paths import TrialPaths

    from evaluations.sandbox.containers import NO_NETWORK_COMPOSE, DockerSandbox

    task_dir = tmp_path / "gpu_task"
    shutil.copytree(TINY_TASK, task_dir)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("gpus = 0\n", 'gpus = 1\ngpu_types = ["H100"]\n'))
    task = Task(task_dir=task_dir)
    paths = TrialPaths(trial_dir=tmp_path / "trial")
    paths.mkdir()
    env = DockerSandbox(
        environment_dir=task.paths.environment_dir,
        environment_name=task.short_name,
        session_id="gpu-config__env",
        trial_paths=paths,
        task_env_config=task.config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
        sandbox_root=tmp_path / "sandboxes",
    )
    assert env.capabilities.gpus and env.capabilities.disable_internet
    resources = json.loads(Path(asyncio.run(env._write_resources_compose_file())).read_text())
    main = resources["services"]["main"]
    assert main["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}
    ]
    assert main["cpus"] == 1.0 and main["mem_limit"] == "512m"
    assert NO_NETWORK_COMPOSE in env._docker_compose_paths
    mounts = [mount["source"] for mount in env._host_mounts]
    assert mounts and not any(Path(source).is_relative_to(tmp_path / "trial") for source in mounts)


def test_podman_refuses_gpu_tasks_before_the_trial(tmp_path):
    from harbor.models.task.task import Task

    from evaluations.sandbox.containers import PodmanSandbox

    task_dir = tmp_path / "gpu_task"
    shutil.copytree(TINY_TASK, task_dir)
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace("gpus = 0\n", "gpus = 1\n"))
    assert Task(task_dir=task_dir).config.environment.gpus == 1
    assert PodmanSandbox.__mro__.index(PodmanSandbox) == 0
    # Harbor's Podman environment says it has no GPUs; the trial refuses the task.
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    config = TrialConfig(
        task=TaskConfig(path=task_dir),
        trials_dir=tmp_path / "trials",
        trial_name="gpu__refused",
        agent=AgentConfig(name="oracle"),
        environment=EnvironmentConfig(
            import_path="evaluations.sandbox.containers:PodmanSandbox",
            kwargs={"sandbox_root": str(tmp_path / "sandboxes")},
        ),
    )
    with pytest.raises(Exception, match="(?i)gpu"):
        asyncio.run(Trial.create(config))


def test_a_copy_out_stops_at_storage_mb_before_it_lands(tmp_path, engine):
    """The engine's own `cp` wrote a sparse file in full on the host, then applied the limit; the stream stops."""
    check_copy_out_stops_at_storage(make_env(tmp_path, TINY_TASK, engine, storage_poll_sec=3600), tmp_path)
