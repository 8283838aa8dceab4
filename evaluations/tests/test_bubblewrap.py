"""The bubblewrap Harbor environment: Dockerfile reading, isolation, limits, phases."""
from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from pathlib import Path

import pytest

from evaluations.sandbox.bubblewrap import (
    BubblewrapEnvironment,
    NeedsContainerBackend,
    check_task_dir,
    sandbox_pids,
)
from tasks.dockerfile import CopyStep, RunStep, parse_dockerfile

from evaluations.tests.sandbox_helpers import TINY_TASK, check_copy_out_stops_at_storage, require_sandbox

# -- Dockerfile interpretation (pure) -----------------------------------------

SUPPORTED = """
FROM python:3.12-slim
ARG LEVEL=2
WORKDIR /app
COPY src/ /app/
COPY ["a b.txt", "/data/"]
ENV MODE=fast PATH=/app/bin:$PATH
ENV LEGACY some value
RUN python3 -c "print(1)" \\
    && echo level=${LEVEL}
CMD ["python3", "main.py"]
EXPOSE 8000
"""


def test_supported_dockerfile_becomes_a_plan():
    plan = parse_dockerfile(SUPPORTED)
    assert plan.unsupported == []
    assert plan.base_image == "python:3.12-slim"
    assert plan.workdir == "/app"
    assert plan.env["MODE"] == "fast"
    assert plan.env["LEGACY"] == "some value"
    assert plan.env["PATH"].startswith("/app/bin:/usr/local/sbin")
    copies = [step for step in plan.steps if isinstance(step, CopyStep)]
    assert [(c.sources, c.dest) for c in copies] == [(["src/"], "/app/"), (["a b.txt"], "/data/")]
    (run,) = [step for step in plan.steps if isinstance(step, RunStep)]
    assert run.command.startswith('python3 -c "print(1)"') and run.workdir == "/app"


@pytest.mark.parametrize(
    "dockerfile, reason",
    [
        ("FROM debian\nRUN apt-get update && apt-get install -y gcc", "apt"),
        ("FROM python:3.12\nRUN pip install numpy", "pip install"),
        ("FROM python:3.12\nRUN curl -O https://x/y", "network"),
        ("FROM golang AS build\nFROM debian\nCOPY --from=build /x /x", "multi-stage"),
        ("FROM python:3.12\nUSER app", "USER app"),
        ("FROM python:3.12\nADD https://example.org/a.tgz /a", "URL"),
        ("FROM python:3.12\nCOPY tool /usr/local/bin/tool", "host system directory"),
        ("WORKDIR /app", "no FROM"),
    ],
)
def test_dockerfiles_needing_a_container_are_refused_with_a_reason(dockerfile, reason):
    assert any(reason in problem for problem in parse_dockerfile(dockerfile).unsupported)


def test_offline_pip_install_is_allowed():
    assert parse_dockerfile("FROM python:3.12\nRUN pip install --no-index ./wheels/x.whl").unsupported == []


def test_tiny_task_is_supported():
    assert check_task_dir(TINY_TASK) == []


def copy_task(tmp_path: Path, dockerfile: str | None = None, toml_extra: str = "") -> Path:
    task = tmp_path / "task"
    shutil.copytree(TINY_TASK, task)
    if dockerfile is not None:
        (task / "environment" / "Dockerfile").write_text(dockerfile)
    if toml_extra:
        text = (task / "task.toml").read_text().replace("gpus = 0\n", toml_extra)
        (task / "task.toml").write_text(text)
    return task


def test_gpu_and_apt_tasks_are_refused(tmp_path):
    gpu = copy_task(tmp_path / "g", toml_extra="gpus = 1\n")
    assert any("GPU" in p for p in check_task_dir(gpu))
    apt = copy_task(tmp_path / "a", dockerfile="FROM debian\nRUN apt-get install -y gcc\n")
    assert any("apt" in p for p in check_task_dir(apt))


# -- the environment ----------------------------------------------------------


def make_env(tmp_path: Path, task_dir: Path = TINY_TASK, **kwargs) -> BubblewrapEnvironment:
    from harbor.models.task.config import NetworkMode, NetworkPolicy
    from harbor.models.task.task import Task
    from harbor.models.trial.paths import TrialPaths

    task = Task(task_dir=task_dir)
    paths = TrialPaths(trial_dir=tmp_path / "trial")
    paths.mkdir()
    return BubblewrapEnvironment(
        environment_dir=task.paths.environment_dir,
        environment_name=task.short_name,
        session_id=f"test-bwrap-{uuid.uuid4().hex[:8]}",
        trial_paths=paths,
        task_env_config=task.config.environment,
        network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK),
        sandbox_root=tmp_path / "sandboxes",
        **kwargs,
    )


def test_refused_task_fails_before_start(tmp_path):
    require_sandbox()
    task = copy_task(tmp_path, dockerfile="FROM debian\nRUN apt-get install -y gcc\n")
    with pytest.raises(NeedsContainerBackend, match="needs a container backend: RUN installs system packages"):
        make_env(tmp_path, task)


@pytest.mark.sandbox
def test_sandbox_isolation_phases_and_cleanup(tmp_path, monkeypatch):
    require_sandbox()
    monkeypatch.setenv("AUTOLAB_PROBE_SECRET", "must-not-leak")
    env = make_env(tmp_path)

    async def scenario() -> dict:
        seen = {}
        await env.start(force_build=False)
        try:
            seen["build"] = await env.exec("pwd; cat build.txt; echo $TINY_N; env")
            seen["procs"] = await env.exec("ls /proc | grep -c '^[0-9]'; tail -n +3 /proc/net/dev")
            seen["ro"] = await env.exec(
                "touch /usr/x || echo usr-ro; touch /orig/x || echo orig-ro; "
                "touch /logs/verifier/reward.json || echo verifier-ro; ls /tests || echo no-tests; "
                "echo hi > /logs/agent/note.txt"
            )
            await env.download_dir("/logs/agent", env.trial_paths.agent_dir)
            seen["caps"] = await env.exec("grep CapEff /proc/self/status")
            await env.exec("tmux new-session -d -s main; (sleep 300 &)")
            seen["tmux"] = await env.exec("tmux has-session -t main && echo alive")
            seen["memory"] = await env.exec("python3 -c 'x = bytearray(900 * 1024 * 1024)'")
            seen["agent_pids"] = sandbox_pids(env.marker)
            await env.begin_verification()
            seen["verify"] = await env.exec(
                "tmux has-session -t main 2>/dev/null || echo tmux-gone; ps -eo args | grep -c '^sleep 300' || true; "
                "echo ok > /logs/verifier/probe.txt && echo verifier-rw; test -d /tests && echo tests-dir"
            )
            await env.download_dir("/logs/verifier", env.trial_paths.verifier_dir)
            with pytest.raises(RuntimeError, match="timed out"):
                await env.exec("sleep 30", timeout_sec=1)
        finally:
            await env.stop(delete=True)
        return seen

    seen = asyncio.run(scenario())
    build = seen["build"].stdout
    assert build.startswith("/app\nbuilt\n200000\n")
    assert "must-not-leak" not in build and "AUTOLAB_PROBE_SECRET" not in build
    n_procs, *net = seen["procs"].stdout.split("\n")
    assert int(n_procs) < 10  # only the sandbox's own processes
    assert [line.split(":")[0].strip() for line in net if line.strip()] == ["lo"]  # no network
    for word in ("usr-ro", "orig-ro", "verifier-ro", "no-tests"):
        assert word in seen["ro"].stdout
    assert (env.trial_paths.agent_dir / "note.txt").read_text() == "hi\n"
    assert seen["caps"].stdout.split()[-1] == "0000000000000000"
    assert "alive" in seen["tmux"].stdout
    assert seen["memory"].return_code != 0  # 512 MB task limit
    assert len(seen["agent_pids"]) >= 3
    verify = seen["verify"].stdout
    assert "tmux-gone" in verify and "verifier-rw" in verify and "tests-dir" in verify
    assert verify.split("\n")[1] == "0"  # the agent's background sleep was killed
    assert (env.trial_paths.verifier_dir / "probe.txt").exists()
    assert sandbox_pids(env.marker) == set()
    assert not (tmp_path / "sandboxes" / env.session_id).exists()


@pytest.mark.sandbox
def test_no_host_etc_and_a_root_the_agent_cannot_change(tmp_path):
    """The sandbox's /etc is its own, and outside its workspace, /tmp, /var/tmp and $HOME its root is read-only.

    It once read the host's /etc/shadow, and an agent swapped /bin (a link
    in the sandbox's writable root) for a folder of its own.
    """
    require_sandbox()
    env = make_env(tmp_path)

    async def scenario() -> tuple[str, str]:
        await env.start(force_build=False)
        try:
            agent = await env.exec(
                "head -1 /etc/shadow 2>/dev/null || echo no-shadow; cat /etc/hostname; cut -d: -f1 /etc/passwd | tr '\\n' ' '; "
                "echo; ls /etc/ssh 2>/dev/null || echo no-ssh; "
                "rm /bin 2>/dev/null || echo bin-kept; mkdir /fakebin 2>/dev/null || echo root-ro; "
                "touch /etc/x 2>/dev/null || echo etc-ro; "
                "for place in /app /tmp /var/tmp /root; do touch $place/x && echo $place-rw; done; "
                "awk 'BEGIN { print \"awk-runs\" }'; python3 -c 'import ssl; print(\"ssl-loads\")'"
            )
            await env.begin_verification()
            verify = await env.exec("mkdir /graded && echo verifier-root-rw")
            return agent.stdout or "", verify.stdout or ""
        finally:
            await env.stop(delete=True)

    agent, verify = asyncio.run(scenario())
    lines = agent.splitlines()
    assert lines[:4] == ["no-shadow", "sandbox", "root nobody ", "no-ssh"], agent
    for word in ("bin-kept", "root-ro", "etc-ro", "/app-rw", "/tmp-rw", "/var/tmp-rw", "/root-rw", "awk-runs", "ssl-loads"):
        assert word in lines, (word, agent)
    assert verify.strip() == "verifier-root-rw"
    assert Path("/bin").is_symlink()  # the host's, untouched


@pytest.mark.sandbox
def test_the_verifier_phase_can_run_the_agents_code_as_nobody_and_the_agent_phase_cannot(tmp_path):
    require_sandbox()
    env = make_env(tmp_path)
    drop = "setpriv --reuid=65534 --regid=65534 --clear-groups id -u 2>/dev/null || echo cannot-drop"

    async def scenario() -> tuple[str, str]:
        await env.start(force_build=False)
        try:
            agent = await env.exec(drop)
            await env.begin_verification()
            return agent.stdout.strip(), (await env.exec(drop)).stdout.strip()
        finally:
            await env.stop(delete=True)

    assert asyncio.run(scenario()) == ("cannot-drop", "65534")


@pytest.mark.sandbox
def test_process_limit(tmp_path):
    require_sandbox()
    env = make_env(tmp_path, max_processes=15)

    async def scenario():
        await env.start(force_build=False)
        try:
            if not env._has_cgroup("pids"):
                pytest.skip("no writable pids cgroup (v1) on this host: the limit falls back to RLIMIT_NPROC")
            return await env.exec(
                "python3 -c \"\nimport os, time\nn = 0\ntry:\n    for _ in range(40):\n"
                "        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n        n += 1\n"
                "except OSError:\n    pass\nprint(n)\n\""
            )
        finally:
            await env.stop(delete=True)

    forks = asyncio.run(scenario())
    assert 0 < int(forks.stdout.strip()) < 15


@pytest.mark.sandbox
def test_host_side_copies_stay_inside_the_sandbox(tmp_path):
    require_sandbox()
    env = make_env(tmp_path)

    async def scenario():
        await env.start(force_build=False)
        try:
            await env.exec("ln -s /etc/hostname /app/leak")
            with pytest.raises(FileNotFoundError, match="a symbolic link"):
                await env.download_file("/app/leak", tmp_path / "leak")
            with pytest.raises(PermissionError):
                await env.upload_file(TINY_TASK / "task.toml", "/orig/task.toml")
            await env.exec("mkdir -p /app/up && ln -s /etc /app/up/environment")
            with pytest.raises(PermissionError):
                await env.upload_dir(TINY_TASK, "/app/up")  # its environment/ would land in the host's /etc
            await env.upload_file(TINY_TASK / "task.toml", "/app/uploaded.toml")
            seen = await env.exec("head -c 9 /app/uploaded.toml")
            await env.download_dir("/app", tmp_path / "app-copy")
            return seen
        finally:
            await env.stop(delete=True)

    seen = asyncio.run(scenario())
    assert seen.stdout == "# A tiny "
    assert (tmp_path / "app-copy" / "sum.py").is_file()
    assert not (tmp_path / "app-copy" / "leak").exists()  # refused, never followed
    assert any(r.startswith("leak: a symbolic link") for r in env.transfer_reports[-1].refused)


@pytest.mark.sandbox
@pytest.mark.parametrize("agent, reward", [("oracle", 1.0), ("nop", 0.0)])
def test_harbor_trial_runs_in_the_sandbox(tmp_path, agent, reward):
    require_sandbox()
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    config = TrialConfig(
        task=TaskConfig(path=TINY_TASK),
        trials_dir=tmp_path / "trials",
        trial_name=f"tiny__{agent}__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name=agent),
        environment=EnvironmentConfig(
            import_path="evaluations.sandbox.bubblewrap:BubblewrapEnvironment",
            kwargs={"sandbox_root": str(tmp_path / "sandboxes")},
        ),
    )

    async def run():
        trial = await Trial.create(config)
        return await trial.run()

    result = asyncio.run(run())
    assert result.exception_info is None, result.exception_info
    assert result.verifier_result.rewards["reward"] == reward
    assert os.listdir(tmp_path / "sandboxes") == []


@pytest.mark.sandbox
def test_links_planted_in_the_logs_never_reach_a_host_file(tmp_path):
    """Issue 12's escape: the solution links /logs names to host files; none of them changes."""
    require_sandbox()
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
    from harbor.trial.trial import Trial

    from autolab_site.safe_files import find_links

    from evaluations.tests.escape import FORGED_REWARD, host_files, make_escape_task, make_victims

    victims = make_victims(tmp_path / "host")
    before = host_files(victims)
    config = TrialConfig(
        task=TaskConfig(path=make_escape_task(tmp_path, victims)),
        trials_dir=tmp_path / "trials",
        trial_name=f"escape__{uuid.uuid4().hex[:6]}",
        agent=AgentConfig(name="oracle"),
        environment=EnvironmentConfig(
            import_path="evaluations.sandbox.bubblewrap:BubblewrapEnvironment",
            kwargs={"sandbox_root": str(tmp_path / "sandboxes")},
        ),
        verifier={"import_path": "evaluations.running.verifier:TolerantVerifier"},
    )

    async def run():
        trial = await Trial.create(config)
        return await trial.run()

    result = asyncio.run(run())
    assert host_files(victims) == before
    trial_dir = tmp_path / "trials" / config.trial_name
    assert "planted" in (trial_dir / "agent" / "oracle.txt").read_text()
    assert find_links(trial_dir) == []
    assert (trial_dir / "agent" / "exit-code.txt").read_text() == "3"  # the host's own file
    assert result.verifier_result.rewards["reward"] == 1.0 != FORGED_REWARD


STATUS = "Name:\tsleep\nState:\t{state}\nSigPnd:\t{own}\nShdPnd:\t{shared}\n"
KILL = f"{1 << 8:016x}"  # SIGKILL is signal 9: bit 8
TERM = f"{1 << 14:016x}"  # SIGTERM (15) can be caught: no verdict
NONE = "0" * 16


@pytest.mark.parametrize(
    "state, own, shared, dead",
    [
        ("S (sleeping)", NONE, NONE, False),
        ("R (running)", NONE, NONE, False),
        ("Z (zombie)", NONE, NONE, True),
        ("X (dead)", NONE, NONE, True),
        ("S (sleeping)", NONE, KILL, True),  # kill -9 -1 returned, the keep-alive not yet scheduled
        ("R (running)", KILL, NONE, True),
        ("S (sleeping)", NONE, TERM, False),
    ],
)
def test_a_process_with_sigkill_pending_is_as_good_as_dead(state, own, shared, dead):
    """The sandbox's end must not race the scheduler: on a loaded CI host kill_everything scored no_artifact."""
    from evaluations.sandbox.bubblewrap import dying

    assert dying(STATUS.format(state=state, own=own, shared=shared)) is dead


def test_a_live_process_is_not_dying():
    from evaluations.sandbox.bubblewrap import dying

    assert not dying(Path(f"/proc/{os.getpid()}/status").read_text())


@pytest.mark.sandbox
def test_a_copy_out_stops_at_storage_mb_before_it_lands(tmp_path):
    require_sandbox()
    check_copy_out_stops_at_storage(make_env(tmp_path, storage_poll_sec=3600), tmp_path)


@pytest.mark.sandbox
def test_the_sandboxs_root_is_not_the_hosts_root(tmp_path):
    """Issue 43: the agent, root in its sandbox, was the host's root, and left root-owned setuid copies of bash."""
    require_sandbox()
    from evaluations.sandbox.userns import HOST_ID_BASE

    env = make_env(tmp_path)

    async def scenario() -> tuple[str, set[int]]:
        await env.start(force_build=False)
        try:
            inside = await env.exec("cp /bin/bash /app/rootbash && chmod 6755 /app/rootbash; sleep 60 & id -u")
            processes = {os.stat(f"/proc/{pid}").st_uid for pid in sandbox_pids(env.marker)}
            return inside.stdout.strip(), processes
        finally:
            await env.stop(delete=False)

    uid, processes = asyncio.run(scenario())
    assert uid == "0"
    assert processes and min(processes) >= HOST_ID_BASE, processes
    planted = next((tmp_path / "sandboxes").glob("*/rootfs/app/rootbash")).stat()
    assert planted.st_mode & 0o6000 and (planted.st_uid, planted.st_gid) == (HOST_ID_BASE, HOST_ID_BASE)
    assert (tmp_path / "sandboxes").stat().st_mode & 0o777 == 0o700
