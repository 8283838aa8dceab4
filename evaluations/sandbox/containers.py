"""Harbor's Docker and Podman environments, made safe and offline.

Plugged in with `EnvironmentConfig(import_path="evaluations.sandbox.containers:PodmanSandbox")`
(or `DockerSandbox`). Harbor's orchestrator does the work (compose build,
up, exec, cp, down, GPU device requests); these subclasses change what
follows:

- **No trial folder in the container.** Harbor's log binds are redirected
  to staging folders, and downloads are link-refusing copies (staging.py):
  a link planted in /logs never reaches a host file.
- **No network without a registry.** Harbor enforces `allow_internet =
  false` with an egress-control sidecar built from Docker Hub images, which
  an offline worker cannot pull. A task without internet instead gets
  `network_mode: none` on its main service (Harbor's own
  `docker-compose-no-network.yaml`), and the environment says it can
  disable the internet, which Harbor otherwise refuses to run.
- **A process limit.** cpus and memory are Harbor's (from task.toml); a
  pids limit (`max_processes`, default 4096) is added, so a fork bomb stays
  inside its container.
- **Images are kept.** The task's image is built under Harbor's
  content-addressed name (compose would name it after the trial's session)
  and is not deleted at the end (Harbor's `down --rmi local` would): a
  second trial of the same task reuses it.
- **Base images through the worker's mirror map** (tasks.images): a FROM
  the map names is built from its target, through a copy of the Dockerfile
  outside the task directory; the image's name says which map it came from.
  What was built, from what, is written at the trial folder's root
  (`ENVIRONMENT_FILE`) for the rollout's page. A failed build is one
  readable line (the image, the package), not a compose command line.
- **Nothing the agent started survives into grading.** `begin_verification`
  (the runner calls it at AGENT_END) freezes the container and kills every
  process in it but its init and keep-alive, from the host side: a fork
  bomb that holds every process slot leaves no room for a command inside.
- **The agent's crash is its own.** A command that fails because the
  container is gone, while the engine answers, raises
  SandboxEndedByAgentError (errors.py): the agent's code killed every
  process, ran out of memory, or passed `storage_mb`, which a watchdog
  checks every few seconds in every phase (storage.py) since overlay
  without quotas cannot cap it. Downloads read the engine's
  `cp CONTAINER:PATH -` as a tar stream and stop at `storage_mb` as they
  are read (the engine's own copy to disk wrote every byte first).
- **Compose v1** (Debian's docker-compose): `exec -T`, and no SELinux
  labels on binds, which it refuses.
- **Uploads without `compose cp`.** podman-compose and compose v1 have no
  `cp`; Harbor tries it for every upload anyway and logs the frontend's
  whole usage text before its tar-stream fallback works. Here such a
  frontend goes to that tar stream at once.

`_docker_compose_paths`, `_egress_control_kernel_support`,
`_run_docker_compose_command`, the Unix platform's tar uploads and Harbor's
compose project naming are Harbor internals: the Harbor version is pinned (pyproject) and tests cover
them on both engines.
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import yaml
from harbor.environments.base import ExecResult, SandboxBuildFailedError
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.docker.docker import DockerEnvironment, _sanitize_docker_compose_project_name
from harbor.environments.docker.docker_unix import UnixOps
from harbor.environments.docker.runtime import ContainerRuntime, resolve_podman_runtime
from harbor.environments.podman import PodmanEnvironment
from harbor.models.task.config import NetworkMode
from tasks import images
from trajectories.run_environment import FILE_NAME as ENVIRONMENT_FILE

from evaluations.sandbox import storage
from tasks import worker_images
from evaluations.sandbox.staging import (
    VERIFIER_LOGS,
    SafeTransfers,
    copy_from_command,
    default_log_mounts,
    empty_folder,
    fresh_sandbox_folder,
    redirect_log_mounts,
    staging_dir,
)

NO_NETWORK_COMPOSE = Path(DockerEnvironment._DOCKER_COMPOSE_BUILD_PATH).parent / "docker-compose-no-network.yaml"
DEFAULT_MAX_PROCESSES = 4096


def default_sandbox_root() -> Path:
    from evaluations.sandbox.bubblewrap import default_sandbox_root as bubblewrap_root

    return bubblewrap_root()


class OfflineCompose(SafeTransfers):
    """The changes above, for any subclass of Harbor's DockerEnvironment (a mixin)."""

    def __init__(self, *args, sandbox_root: str | Path | None = None, max_processes: int = DEFAULT_MAX_PROCESSES,
                 storage_poll_sec: float = storage.POLL_SEC, **kwargs):
        self._sandbox_root = Path(sandbox_root) if sandbox_root else default_sandbox_root()
        self._max_processes = int(max_processes)
        self._storage_poll_sec = float(storage_poll_sec)
        self._base = self._sandbox_root / kwargs["session_id"]
        fresh_sandbox_folder(self._base, kwargs["trial_paths"].trial_dir.name)
        staging_root = staging_dir(self._sandbox_root, kwargs["session_id"])
        mounts = kwargs.get("auto_mounts")
        if mounts is None:
            mounts = default_log_mounts(kwargs["trial_paths"])
        mounts, self._staged = redirect_log_mounts(mounts, kwargs["trial_paths"].trial_dir, staging_root)
        kwargs["auto_mounts"] = self._compose_mounts(mounts)
        kwargs["auto_mounting"] = True
        super().__init__(*args, **kwargs)
        self._init_transfers(self.task_env_config.storage_mb)
        self._overrides_compose = self._base / "overrides.compose.json"
        self._container = ""  # the main service's container, once started
        self._substitutions: list[images.Substitution] = []  # the mirror map's, for this trial's build
        self._own_pids: set[int] = set()  # its init and keep-alive, as host pids
        self._watchdog: asyncio.Task | None = None
        self._removed = False  # stop() removed the containers: nothing is left to run a command in

    @classmethod
    def _compose_mounts(cls, mounts: list[dict]) -> list[dict]:
        """The mounts as this host's Compose frontend accepts them."""
        return mounts

    @classmethod
    def _egress_control_kernel_support(cls) -> bool:
        # The sidecar's images come from Docker Hub; offline there is none.
        return False

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return super().capabilities.model_copy(update={"disable_internet": True})  # type: ignore[misc]

    @property
    def without_network(self) -> bool:
        return self.network_policy.network_mode == NetworkMode.NO_NETWORK  # type: ignore[attr-defined]

    @property
    def _docker_compose_paths(self) -> list[Path]:
        paths = list(super()._docker_compose_paths)  # type: ignore[misc]
        if self.without_network:
            paths.append(NO_NETWORK_COMPOSE)
        if self._overrides_compose.exists():
            paths.append(self._overrides_compose)
        return paths

    async def start(self, force_build: bool) -> None:
        self._base.mkdir(parents=True, exist_ok=True)
        main: dict = {"pids_limit": self._max_processes}
        if not self.task_env_config.docker_image:
            main.update(self._mirrored_build())
            # Harbor's content-addressed name for the task's image; without it
            # compose names the image after the session, one per trial.
            main["image"] = self._main_image_name  # type: ignore[attr-defined]
        self._overrides_compose.write_text(json.dumps({"services": {"main": main}}))
        await super().start(force_build)  # type: ignore[misc]
        self._container = await self._main_container()
        self._record_environment()
        # The container's own processes (its init and keep-alive): killing
        # the keep-alive would stop the container.
        self._own_pids = set(await self._host_pids())
        if self.task_env_config.storage_mb:
            self._watchdog = asyncio.create_task(
                storage.watch(self.task_env_config.storage_mb, self._used_bytes, self._end, self._storage_poll_sec)
            )

    def _mirrored_build(self) -> dict:
        """The compose build settings that apply the worker's mirror map ({} when it maps none of the task's images).

        The copy of the Dockerfile lives in the session's own folder; the
        build context stays the task's environment directory, unchanged.
        The image is named after the map's targets (their ids included): a
        task built once from a stand-in and once from the published image
        are two images, never one reused for the other.
        """
        dockerfile = Path(self.environment_dir) / "Dockerfile"  # type: ignore[attr-defined]
        if not dockerfile.is_file():
            return {}
        try:
            mirrors = images.MirrorMap.from_environment()
        except images.ImageMirrorError as exc:
            raise SandboxBuildFailedError(str(exc)) from None
        text, pairs = images.mirrored_dockerfile(dockerfile.read_text(), mirrors)
        if not pairs:
            return {}
        engine = type(self).runtime().engine[0]  # type: ignore[attr-defined]
        self._substitutions = [
            images.Substitution(requested=requested, used=used, image_id=worker_images.image_id(engine, used),
                                stand_in_for=worker_images.image_label(engine, used, worker_images.STANDIN_LABEL))
            for requested, used in pairs
        ]
        copy = self._base / "Dockerfile.mirrored"
        copy.write_text(text)
        digest = hashlib.sha256(json.dumps([s.as_dict() for s in self._substitutions]).encode()).hexdigest()[:10]
        self._env_vars.main_image_name = f"{self._main_image_name}__mirror-{digest}"  # type: ignore[attr-defined]
        return {"build": {"context": str(self.environment_dir), "dockerfile": str(copy)}}  # type: ignore[attr-defined]

    def _record_environment(self) -> None:
        """What the trial ran in, at the trial folder's root: the image, its id, the substitutions made."""
        engine = type(self).runtime().engine[0]  # type: ignore[attr-defined]
        image = self.task_env_config.docker_image or self._main_image_name  # type: ignore[attr-defined]
        record = {
            "writer": "autolab-site sandbox",
            "engine": engine,
            "image": image,
            "image_id": worker_images.image_id(engine, image),
            "substitutions": [substitution.as_dict() for substitution in self._substitutions],
        }
        path = self.trial_paths.trial_dir / ENVIRONMENT_FILE  # type: ignore[attr-defined]
        path.write_text(json.dumps(record, indent=2))

    async def _run_docker_compose_command(self, command: list[str], *args, **kwargs):
        """Harbor's compose call; a failed `build` is SandboxBuildFailedError with one readable line.

        Harbor's own message is the whole compose command line and its
        output (a 900-character line ending mid-word); the operator needs
        the image or the package at fault, and the output stays in the
        trial's log.
        """
        if command[:1] == ["down"] and self._removed:
            # Harbor's stop() downs the project again after ours: nothing is left, and a compose call costs seconds.
            return ExecResult(stdout="", stderr="", return_code=0)
        if command[:1] != ["build"]:
            return await super()._run_docker_compose_command(command, *args, **kwargs)  # type: ignore[misc]
        try:
            return await super()._run_docker_compose_command(command, *args, **kwargs)  # type: ignore[misc]
        except RuntimeError as exc:
            self.logger.warning("image build failed: %s", exc)  # type: ignore[attr-defined]
            used = [substitution.used for substitution in self._substitutions]
            raise SandboxBuildFailedError(images.build_failure(str(exc), used)) from None

    async def stop(self, delete: bool) -> None:
        """Remove the containers at once and keep the task's image for the next trial.

        Harbor's own `down --rmi local` deletes the image it just built, so
        every trial of a task would build it again; and the keep-alive, the
        container's PID 1, ignores SIGTERM, so a plain `down` waits out its
        10 s grace on every trial. Nothing in the container needs a clean
        shutdown once the trial is over. Harbor's own stop then only clears
        its compose files: its chown of the log binds and its second `down`
        would each be a compose call into containers that are gone (seconds
        apiece, twice per sealed trial), so they are skipped.
        """
        self._stop_watching()
        down = None
        try:
            down = await self._run_docker_compose_command(  # type: ignore[attr-defined]
                ["down", "--volumes", "--remove-orphans", "-t", "0"], check=False
            )
        finally:
            # A `down` that failed leaves Harbor's own to try again.
            self._removed = down is not None and down.return_code == 0
            try:
                # Harbor's bookkeeping (its compose files).
                await super().stop(False)  # type: ignore[misc]
            finally:
                if delete:
                    shutil.rmtree(self._base, ignore_errors=True)
        self._raise_if_ended()

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        """Harbor's upload; on a frontend without `compose cp`, the tar stream Harbor falls back to, at once.

        Harbor tries `compose cp` whatever the runtime declares (its
        downloads look at `supports_compose_cp`, its uploads do not), and
        logs the frontend's usage text when it fails: five screens in every
        sealed trial's log on podman. The result is the same files, owned
        by root, as after Harbor's own fallback.
        """
        if self._without_compose_cp:
            await self._platform._upload_file_with_tar(source_path, target_path)  # type: ignore[attr-defined]
        else:
            await super().upload_file(source_path, target_path)  # type: ignore[misc]

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        """Harbor's upload of a folder's contents; without `compose cp`, its tar stream at once (see upload_file)."""
        if self._without_compose_cp:
            await self._platform._upload_dir_with_tar(source_dir, target_dir)  # type: ignore[attr-defined]
        else:
            await super().upload_dir(source_dir, target_dir)  # type: ignore[misc]

    @property
    def _without_compose_cp(self) -> bool:
        return not type(self).runtime().supports_compose_cp and isinstance(self._platform, UnixOps)  # type: ignore[attr-defined]

    async def prepare_logs_for_host(self) -> None:
        """Harbor's chown of the log binds from inside the container; nothing once stop() has removed it.

        Harbor's stop() calls it first, and ours has already removed the
        containers: each chown would be a failing exec (and an inspect of how
        the container ended); it never ran in a live container before either.
        """
        if self._removed:
            return
        await super().prepare_logs_for_host()  # type: ignore[misc]

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None):
        """Harbor's exec; once the agent's code has ended the container, SandboxEndedByAgentError.

        A failed command is checked against the container's state: when the
        container is gone although the engine answers, the agent's code
        ended it (it killed every process, ran out of memory, or the
        storage watchdog stopped it), and every later command says so too.
        """
        if self._ended:
            raise self._ended_by_agent(self._ended)
        result = await super().exec(command, cwd=cwd, env=env, timeout_sec=timeout_sec, user=user)  # type: ignore[misc]
        if result.return_code != 0 and self._container:
            how = await self._how_it_ended()
            if how:
                raise self._ended_by_agent(how)
        return result

    async def begin_verification(self) -> None:
        """Before grading: the agent's disk measured once more, every process it left killed, /logs/verifier emptied.

        The watchdog looks every few seconds: what the agent wrote since its
        last look is measured now, before anything is copied out. Processes
        are killed from the host side, the container frozen meanwhile: a
        fork bomb that holds every process slot leaves no room for a command
        inside, and a frozen one cannot fork while it is killed. The
        container's own processes (its init and keep-alive) stay. The agent
        could write /logs/verifier (a container has no read-only phase for
        it): what it left there, a link the verifier's output would follow
        included, is removed. The watchdog keeps watching through grading
        (the graded code runs here too, or in the verifier's container,
        watched from its start) until `stop()`.
        """
        if not self._ended and self._container and self.task_env_config.storage_mb:
            await storage.check(self.task_env_config.storage_mb, self._used_bytes, self._end)
        if self._ended or not self._container:
            return
        await self._engine("pause", self._container)
        try:
            for _ in range(3):
                leftovers = [pid for pid in await self._host_pids() if pid not in self._own_pids]
                if not leftovers:
                    break
                for pid in leftovers:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        finally:
            await self._engine("unpause", self._container)
        for staged in self._staged:
            if staged.target == VERIFIER_LOGS:
                empty_folder(staged.staging)

    async def _copy_out_of_engine(self, sandbox_path: str, target: Path, *, folder: bool, keep, select,
                                  max_bytes: int):
        """The engine's `cp CONTAINER:PATH -`, a tar stream read through the copy's limit (staging.copy_from_command).

        The engine's own copy to a host folder writes every byte first (a
        sparse file in full) and is checked only afterwards. The stream
        comes from the engine, never from a program in the container, and a
        stopped container (the watchdog's, or one that crashed) copies too.
        """
        if not self._container:
            raise RuntimeError(f"{sandbox_path}: the sandbox has no container")
        source = sandbox_path.rstrip("/") + "/." if folder else sandbox_path
        argv = list(type(self).runtime().engine_cmd("cp", f"{self._container}:{source}", "-"))  # type: ignore[attr-defined]
        return await asyncio.to_thread(copy_from_command, argv, target, keep=keep, select=select, max_bytes=max_bytes)

    # -- the container seen from the host ----------------------------------------------

    async def _engine(self, *args: str) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *type(self).runtime().engine_cmd(*args),  # type: ignore[attr-defined]
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await process.communicate()
        return process.returncode or 0, out.decode(errors="replace").strip()

    async def _main_container(self) -> str:
        project = _sanitize_docker_compose_project_name(self.session_id)  # type: ignore[attr-defined]
        code, out = await self._engine(
            "ps", "-a", "-q", "--filter", f"label=com.docker.compose.project={project}",
            "--filter", "label=com.docker.compose.service=main",
        )
        return out.split()[0] if code == 0 and out else ""

    async def _inspect(self, template: str) -> str | None:
        code, out = await self._engine("inspect", "--format", template, self._container)
        return out if code == 0 else None

    async def _host_pids(self) -> list[int]:
        """The container's processes, as host pids (those in its init's pid namespace)."""
        init = await self._inspect("{{.State.Pid}}")
        try:
            namespace = os.readlink(f"/proc/{int(init or 0)}/ns/pid") if init and int(init) > 0 else ""
        except (OSError, ValueError):
            return []
        found = []
        for entry in os.listdir("/proc") if namespace else ():
            if entry.isdigit():
                try:
                    if os.readlink(f"/proc/{entry}/ns/pid") == namespace:
                        found.append(int(entry))
                except OSError:
                    continue
        return found

    async def _how_it_ended(self) -> str:
        """How the agent ended the container, or "" while it runs (or the engine cannot say: not the agent's)."""
        if self._ended:
            return self._ended
        state = await self._inspect("{{.State.Running}} {{.State.OOMKilled}} {{.State.ExitCode}}")
        if state is None:
            return ""
        running, oom, code = (state.split() + ["", "", ""])[:3]
        if running == "true":
            return ""
        if oom == "true":
            return f"it ran out of memory (memory_mb = {self.task_env_config.memory_mb})"
        return f"every process in it was killed, and the container stopped (exit code {code})"

    async def _used_bytes(self) -> int:
        """The container's own files (its writable layer) and its log folders, in bytes."""
        code, out = await self._engine("container", "inspect", "--size", "--format", "{{.SizeRw}}", self._container)
        size = int(out) if code == 0 and out.lstrip("-").isdigit() else 0
        return size + sum(storage.folder_bytes(staged.staging) for staged in self._staged)

    async def _end(self, how: str) -> None:
        """The storage watchdog's verdict: stop the container at once, saying why."""
        self._ended = how
        await self._engine("kill", self._container)

    def _stop_watching(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None


class PodmanSandbox(OfflineCompose, PodmanEnvironment):
    """Harbor's Podman environment (rootful podman, podman-compose), offline and link-safe."""

    @classmethod
    @functools.cache
    def runtime(cls) -> ContainerRuntime:
        # Harbor looks for podman-compose on PATH only; a worker started as
        # .venv/bin/celery has the venv's own copy beside its Python.
        compose = podman_compose_path()
        if compose is None:
            return resolve_podman_runtime()
        return ContainerRuntime(
            engine=("podman",),
            compose=(compose, "--in-pod=false"),
            supports_compose_wait=False,
            supports_compose_cp=False,
            supports_compose_project_directory=False,
        )


def podman_compose_path() -> str | None:
    """podman-compose on PATH, or beside this Python (a venv's bin)."""
    return shutil.which("podman-compose") or shutil.which("podman-compose", path=str(Path(sys.executable).parent))


class DockerSandbox(OfflineCompose, DockerEnvironment):
    """Harbor's Docker environment, offline and link-safe; GPUs through Compose device requests."""

    @classmethod
    @functools.cache
    def runtime(cls) -> ContainerRuntime:
        # Compose v2 (`docker compose`) when the plugin is there; else
        # compose v1 (`docker-compose`, Debian's), which lacks `up --wait`
        # and `cp`: Harbor polls instead and copies with `docker cp`.
        return docker_runtime()

    @classmethod
    def _compose_mounts(cls, mounts: list[dict]) -> list[dict]:
        # Harbor labels its log binds for SELinux (`bind: {selinux: z}`),
        # which compose v1 refuses; a host on compose v1 has no use for it.
        if not compose_v1(cls.runtime()):
            return mounts
        return [{key: value for key, value in mount.items() if key != "bind"} for mount in mounts]

    async def _run_docker_compose_command(self, command: list[str], *args, **kwargs):
        # Compose v1 gives `exec` a TTY unless told not to (v2 asks the
        # terminal): without -T every exec from a worker fails with "the
        # input device is not a TTY".
        if command[:1] == ["exec"] and "-T" not in command and compose_v1(type(self).runtime()):
            command = ["exec", "-T", *command[1:]]
        if command[:1] == ["build"] and compose_v1(type(self).runtime()):
            # The classic builder keeps the containers of a failed step (one per failed build, forever).
            command = ["build", "--force-rm", *command[1:]]
        if command[:1] == ["config"] and "--output" in command and compose_v1(type(self).runtime()):
            return await self._config_to_file(command[command.index("--output") + 1], *args, **kwargs)
        return await super()._run_docker_compose_command(command, *args, **kwargs)

    async def _config_to_file(self, output: str, *args, **kwargs):
        """Compose v2's `config --format json --output FILE`, on compose v1 (which prints YAML, and only that).

        Harbor asks for it when a GPU task brings its own compose file (7 of
        AutoLab v1.1's 11 do), to see whether that file reserves the GPUs
        already; v1 refused it and no such task started.
        """
        result = await super()._run_docker_compose_command(["config"], *args, **kwargs)
        Path(output).write_text(json.dumps(compose_v1_config(result.stdout or "")))
        return result


def docker_runtime() -> ContainerRuntime:
    """Harbor's Docker runtime for the Compose frontend this host has (v2 plugin, else v1)."""
    from harbor.environments.docker.runtime import DOCKER_RUNTIME

    if compose_v2_works():
        return DOCKER_RUNTIME
    compose = docker_compose_v1_path()
    if compose is None:
        return DOCKER_RUNTIME
    return ContainerRuntime(
        engine=("docker",),
        compose=(compose,),
        supports_compose_wait=False,
        supports_compose_cp=False,
        supports_compose_project_directory=True,
    )


def compose_v1_config(printed: str) -> dict:
    """The configuration `docker-compose config` printed, without the warnings Harbor's capture mixes in."""
    lines = [line for line in printed.splitlines() if not re.match(r"(WARNING|ERROR|INFO|DEBUG):", line)]
    document = yaml.safe_load("\n".join(lines))
    if not isinstance(document, dict) or not isinstance(document.get("services"), dict):
        raise RuntimeError(f"docker-compose config printed no configuration: {printed[:500]}")
    return document


def compose_v1(runtime: ContainerRuntime) -> bool:
    return Path(runtime.compose[0]).name == "docker-compose"


@functools.cache
def compose_v2_works() -> bool:
    try:
        done = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def docker_compose_v1_path() -> str | None:
    """docker-compose (compose v1) on PATH, or beside this Python."""
    return shutil.which("docker-compose") or shutil.which("docker-compose", path=str(Path(sys.executable).parent))
