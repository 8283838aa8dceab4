"""A Harbor environment that runs a task in a bubblewrap sandbox on the host.

Plugged in with
`EnvironmentConfig(import_path="evaluations.sandbox.bubblewrap:BubblewrapEnvironment")`.

How it works, and why:

- `start()` lays the task out in a host folder (`rootfs/`, which becomes `/`),
  applies the Dockerfile (see `dockerfile.py`) and starts a *holder*: a
  `bwrap --unshare-pid --unshare-net ... sleep infinity` that owns the
  sandbox's pid, network, ipc and uts namespaces and its mount table. The
  holder dies with the worker process (`--die-with-parent`), and the kernel
  kills every process of a pid namespace when its init dies, so nothing the
  agent started can outlive the trial, even when the worker is killed.
- The holder runs in a user namespace of its own (userns.py): the
  sandbox's ids 0-65535 are host ids from `userns.HOST_ID_BASE`, so its
  root is never the host's root. What the agent leaves on the host (a
  setuid copy of a shell) belongs to an id no one logs in as, and what the
  host side writes into the sandbox (its root, uploads, log folders) is
  given to the sandbox's ids (`_own`). Every bind is `nosuid,nodev`
  (bwrap's), and the sandbox folder lies in a root only the worker enters
  (staging.private_root).
- `exec()` enters the holder's namespaces with `nsenter` (so a tmux server
  started by one exec is still there for the next), drops every capability
  with `setpriv`, clears the environment (the worker's API keys never reach
  the sandbox) and runs `bash -c`. The sandbox sees only its own processes.
- Limits: a cgroup (v1, `autolab/<session>` under the pids, memory and cpu
  controllers) when the host lets us create one, plus `prlimit` for CPU
  time, file size and core dumps (and address space / process count when
  there is no cgroup).
- The sandbox has no host `/etc`: its own minimal one (passwd, group, hosts,
  resolv.conf, certificates, the dynamic linker's cache) is written into its
  root, so nothing root-only of the host is readable. The host's `/usr` is
  bound read-only, `/bin`, `/lib`, ... are links into it in the sandbox's
  root, and while the agent runs that root is read-only but for its
  workspace (every WORKDIR), `/tmp`, `/var/tmp`, `$HOME` and its log
  folders: `/bin` cannot be swapped. (Harbor's own uploads, such as the
  oracle's `/solution`, are written from the host side.)
- Phases: a Dockerfile's RUN steps run in a *build* phase (root writable);
  the agent runs in the *agent* phase, where `/logs/verifier` is read-only
  and `/tests` does not exist; `begin_verification()` (called by the runner
  at AGENT_END, or on the first upload to `/tests`) kills the holder, and
  with it everything the agent left running, and starts a new one in the
  *verify* phase, which binds `/logs/verifier` writable and `/tests` from a
  host folder the agent never saw, and keeps the capabilities to drop to
  another user (setuid, setgid), so the verifier can run the agent's code
  unprivileged. Paths listed in `read_only_paths` (default `/orig`, where
  AutoLab pins original files) are read-only always.
- Sealed grading (sealing.py) gives the verifier an environment of its own:
  Harbor starts a second one, without an agent log folder, which this class
  builds as a fresh root from the task's Dockerfile and starts straight in
  the verify phase; Harbor then uploads the carried artifacts into it. The
  agent's root is never the verifier's.

Needs root on the worker host (nsenter into the holder's namespaces). Tasks
that need more than the host's tools get "needs a container backend: ..."
from `_validate_definition()`, i.e. before the trial starts.
"""
from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import shlex
import shutil
import signal
import stat
import subprocess
import tarfile
import tempfile
import time
from glob import glob
from pathlib import Path, PurePosixPath

from harbor.environments.base import BaseEnvironment, ExecResult, SandboxBuildFailedError
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.models.task.config import NetworkMode, TaskOS

from evaluations.sandbox import storage, userns
from tasks.dockerfile import DEFAULT_PATH, BuildPlan, CopyStep, RunStep, parse_dockerfile
from evaluations.sandbox.staging import SafeTransfers, fresh_sandbox_folder, default_log_mounts, redirect_log_mounts, staging_dir
from autolab_site.safe_files import UnsafePath, copy_file, copy_tree, shift_owners

logger = logging.getLogger(__name__)

MARKER_VAR = "AUTOLAB_SANDBOX"
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_CONTROLLERS = ("pids", "memory", "cpu", "freezer")
HOST_RO_BINDS = ("/usr",)
# What the sandbox's own /etc holds of the host's (world-readable files only):
# the dynamic linker's cache (without it nothing under /usr/lib/<arch> loads),
# the alternatives links (awk, which, ...), certificates, shells' defaults.
ETC_FROM_HOST = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl/certs", "ca-certificates.crt",
    "nsswitch.conf", "localtime", "timezone", "bash.bashrc", "profile", "inputrc", "mime.types", "os-release",
    "debian_version", "shells", "terminfo", "python3", "python3.11", "protocols", "services",
)
PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"
HOSTS = "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n127.0.1.1 sandbox\n"
# Writable for the agent besides its workspace and log folders.
AGENT_WRITABLE = ("/tmp", "/var/tmp", "/root")
# What the verifier phase may keep of root's capabilities: enough to run the
# agent's code as another user, nothing that reaches past the sandbox.
VERIFY_CAPABILITIES = "-all,+setuid,+setgid"
TOOLS = ("bwrap", "nsenter", "setpriv", "prlimit")


class NeedsContainerBackend(RuntimeError):
    """The task needs something the host sandbox cannot give it."""


def default_sandbox_root() -> Path:
    return Path(tempfile.gettempdir()) / "autolab-sandboxes"


def host_problems() -> list[str]:
    """Why this host cannot run bubblewrap sandboxes at all (empty when it can)."""
    problems = [f"{tool} is not installed" for tool in TOOLS if shutil.which(tool) is None]
    if shutil.which("tmux") is None:
        problems.append("tmux is not installed (terminus-2 drives tmux)")
    if os.geteuid() != 0:
        problems.append("the worker is not root (the sandbox enters its namespaces with nsenter)")
    if not problems:
        failure = _bwrap_probe()
        if failure:
            problems.append(f"bwrap cannot create namespaces here: {failure}")
    return problems


@functools.cache
def _bwrap_probe() -> str:
    """"" when bwrap can build a sandbox like ours on this host (in a user namespace of its own), else its error."""
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--proc", "/proc", "--dev", "/dev",
            "--", "/usr/bin/true"]
    if Path("/usr/lib64").exists():
        argv[argv.index("--proc"):argv.index("--proc")] = ["--symlink", "usr/lib64", "/lib64"]
    with tempfile.TemporaryDirectory() as folder:
        return userns.run(argv, Path(folder), timeout_sec=30)


def task_problems(environment_dir: Path, env_config) -> list[str]:
    """Why a task cannot run in the host sandbox (empty when it can).

    `env_config` is Harbor's task `[environment]` config.
    """
    problems: list[str] = []
    if (env_config.gpus or 0) > 0:
        problems.append(f"the task needs {env_config.gpus} GPU(s)")
    if getattr(env_config, "tpu", None) is not None:
        problems.append("the task needs a TPU")
    if env_config.os == TaskOS.WINDOWS:
        problems.append("the task runs on Windows")
    if (environment_dir / "docker-compose.yaml").exists() or (environment_dir / "docker-compose.yml").exists():
        problems.append("the environment is a docker-compose project")
    dockerfile = environment_dir / "Dockerfile"
    if not dockerfile.is_file():
        if env_config.docker_image:
            problems.append(f"the task uses the prebuilt image {env_config.docker_image}")
        else:
            problems.append("environment/Dockerfile is missing")
        return problems
    problems.extend(parse_dockerfile(dockerfile.read_text()).unsupported)
    return problems


def check_task_dir(task_dir: Path) -> list[str]:
    """`task_problems` for a Harbor task folder, for callers outside a trial."""
    from harbor.models.task.task import Task as HarborTask

    task = HarborTask(task_dir=Path(task_dir))
    return task_problems(task.paths.environment_dir, task.config.environment)


def write_etc(etc: Path, *, network: bool) -> None:
    """The sandbox's own /etc: its users, hosts and resolver, and the host's world-readable ETC_FROM_HOST.

    Links are copied as links (they point into /usr); a file or folder that
    is not readable by everyone on the host is left out, whatever its name.
    """
    etc.mkdir(parents=True, exist_ok=True)
    for name in ETC_FROM_HOST:
        _copy_public(Path("/etc") / name, etc / name)
    (etc / "passwd").write_text(PASSWD)
    (etc / "group").write_text(GROUP)
    (etc / "hosts").write_text(HOSTS)
    (etc / "hostname").write_text("sandbox\n")
    resolver = ""
    if network:
        try:
            resolver = Path("/etc/resolv.conf").read_text()
        except OSError:
            pass
    (etc / "resolv.conf").write_text(resolver)


def _copy_public(source: Path, target: Path) -> None:
    try:
        info = source.lstat()
    except OSError:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_symlink():
        if not target.is_symlink() and not target.exists():
            target.symlink_to(os.readlink(source))
    elif source.is_dir():
        if info.st_mode & 0o005 != 0o005:
            return
        target.mkdir(exist_ok=True)
        for child in sorted(source.iterdir()):
            _copy_public(child, target / child.name)
    elif source.is_file() and info.st_mode & 0o004:
        shutil.copyfile(source, target)
        target.chmod(0o644)


def _pids_with_marker(marker: str) -> list[int]:
    needle = f"{MARKER_VAR}={marker}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _cgroup_dirs(marker: str) -> list[Path]:
    return [CGROUP_ROOT / controller / "autolab" / marker for controller in CGROUP_CONTROLLERS]


def _cgroup_pids(marker: str) -> set[int]:
    pids: set[int] = set()
    for directory in _cgroup_dirs(marker):
        try:
            pids.update(int(line) for line in (directory / "cgroup.procs").read_text().split())
        except (OSError, ValueError):
            continue
    return pids


def kill_sandbox(marker: str) -> int:
    """SIGKILL every process of the sandbox `marker` (its session id); return how many.

    Works from any process on the host (the reaper, a cancel), not only the
    one that started the sandbox: processes are found by their cgroup and by
    the marker variable every sandbox process carries.
    """
    killed = 0
    for _ in range(5):
        pids = (_cgroup_pids(marker) | set(_pids_with_marker(marker))) - {os.getpid()}
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
            except PermissionError:
                logger.warning("cannot kill sandbox process %s", pid)
    # Wait for the kernel to tear the processes down, so that a new sandbox
    # with the same marker never shares a cgroup with dying ones.
    for _ in range(100):
        if not sandbox_pids(marker):
            break
        time.sleep(0.02)
    for directory in _cgroup_dirs(marker):
        try:
            directory.rmdir()
        except OSError:
            pass
    return killed


def sweep_cgroups(older_than_sec: float = 300) -> int:
    """Remove empty sandbox cgroups left by crashed workers; returns how many."""
    removed = 0
    cutoff = time.time() - older_than_sec
    for controller in CGROUP_CONTROLLERS:
        parent = CGROUP_ROOT / controller / "autolab"
        try:
            children = [child for child in parent.iterdir() if child.is_dir()]
        except OSError:
            continue
        for child in children:
            try:
                if child.stat().st_mtime < cutoff and not (child / "cgroup.procs").read_text().strip():
                    child.rmdir()
                    removed += 1
            except OSError:
                continue
    return removed


def sandbox_pids(marker: str) -> set[int]:
    """Live processes of a sandbox (for tests and the reaper)."""
    alive = set()
    for pid in _cgroup_pids(marker) | set(_pids_with_marker(marker)):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.add(pid)
    return alive


class BubblewrapEnvironment(SafeTransfers, BaseEnvironment):
    def __init__(
        self,
        *args,
        sandbox_root: str | Path | None = None,
        max_processes: int = 1024,
        cpu_time_limit_sec: int | None = 24 * 3600,
        use_cgroups: bool = True,
        read_only_paths: tuple[str, ...] | list[str] = ("/orig",),
        storage_poll_sec: float = 5.0,
        **kwargs,
    ):
        # Set before super().__init__(), which reads capabilities and calls
        # _validate_definition().
        self._sandbox_root = Path(sandbox_root) if sandbox_root else default_sandbox_root()
        self._max_processes = int(max_processes)
        self._cpu_time_limit_sec = cpu_time_limit_sec
        self._want_cgroups = use_cgroups
        self._storage_poll_sec = float(storage_poll_sec)
        self._read_only_paths = [str(PurePosixPath(path)) for path in read_only_paths]
        self._plan: BuildPlan | None = None
        self._holder: asyncio.subprocess.Process | None = None
        self._holder_pid: int | None = None
        self._enter_pid: int | None = None
        self._phase = "build"
        self._cgroups: list[Path] = []
        # The log folders are bound from staging folders of the sandbox's
        # own, never from the trial folder (see staging.py).
        kill_sandbox(kwargs["session_id"])  # an earlier attempt's, whose worker died
        fresh_sandbox_folder(self._sandbox_root / kwargs["session_id"], kwargs["trial_paths"].trial_dir.name)
        # Entered (never listed) by the sandbox's root, which binds its
        # folders from here (userns.py); the sandbox root above stays the
        # worker's alone.
        (self._sandbox_root / kwargs["session_id"]).chmod(0o711)
        self._staging_root = staging_dir(self._sandbox_root, kwargs["session_id"])
        mounts = kwargs.get("auto_mounts")
        if mounts is None:
            mounts = default_log_mounts(kwargs["trial_paths"])
        kwargs["auto_mounts"], self._staged = redirect_log_mounts(
            mounts, kwargs["trial_paths"].trial_dir, self._staging_root
        )
        _own(self._staging_root)
        kwargs["auto_mounting"] = True
        super().__init__(*args, **kwargs)
        self._init_transfers(self.task_env_config.storage_mb)
        self._watchdog: asyncio.Task | None = None
        self._built_bytes = 0  # the root's size before the agent ran
        self._marker = self.session_id
        self._base = self._sandbox_root / self.session_id
        self._rootfs = self._base / "rootfs"
        self._tests_dir = self._base / "tests"
        # Harbor gives a separate verifier's environment no agent log folder.
        self._grades_only = not any(str(m.get("target", "")).rstrip("/") == "/logs/agent" for m in self._mounts)

    # -- Harbor's contract ---------------------------------------------------

    @staticmethod
    def type() -> str:
        return "bubblewrap"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True, mounted=True)

    def _validate_definition(self) -> None:
        problems = host_problems()
        if problems:
            raise NeedsContainerBackend("bubblewrap sandbox unavailable on this host: " + "; ".join(problems))
        problems = task_problems(self.environment_dir, self.task_env_config)
        if problems:
            raise NeedsContainerBackend("needs a container backend: " + "; ".join(problems))
        self._plan = parse_dockerfile((self.environment_dir / "Dockerfile").read_text())

    @property
    def marker(self) -> str:
        return self._marker

    @property
    def phase(self) -> str:
        return self._phase

    async def start(self, force_build: bool) -> None:
        assert self._plan is not None
        self._prepare_rootfs()
        self._setup_cgroups()
        first = "verify" if self._grades_only else "agent"
        if any(isinstance(step, RunStep) for step in self._plan.steps):
            self._phase = "build"
            await self._start_holder()
            await self._apply_plan(self._plan)
            await self._stop_holder()
            kill_sandbox(self._marker)
            self._setup_cgroups()
        else:
            await self._apply_plan(self._plan)  # COPY steps only: written from the host side
        self._own_root()
        await self._enter(first)
        if self.task_env_config.storage_mb:
            # Watched in every phase, from here to stop(): the agent's, and
            # grading, where the graded code runs (a verifier's own root too).
            self._built_bytes = storage.folder_bytes(self._rootfs)
            self._watchdog = asyncio.create_task(
                storage.watch(self.task_env_config.storage_mb, self._used_bytes, self._end, self._storage_poll_sec)
            )

    async def _used_bytes(self) -> int:
        """What the agent added to its root, and its log folders, in bytes."""
        rootfs = await asyncio.to_thread(storage.folder_bytes, self._rootfs)
        return max(rootfs - self._built_bytes, 0) + sum(storage.folder_bytes(m.staging) for m in self._staged)

    async def _end(self, how: str) -> None:
        """The storage watchdog's verdict: end the sandbox at once, saying why."""
        self._ended = how
        kill_sandbox(self._marker)

    def _stop_watching(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _sandbox_alive(self) -> bool:
        try:
            status = Path(f"/proc/{self._enter_pid}/status").read_text()
        except (OSError, TypeError):
            return False
        return not dying(status)

    def _check_not_ended(self) -> None:
        """SandboxEndedByAgentError once the agent's code has ended its sandbox (every process killed, ...)."""
        if not self._ended and self._phase == "agent" and self._enter_pid is not None and not self._sandbox_alive():
            self._ended = "every process in it was killed, and the sandbox ended"
        if self._ended:
            raise self._ended_by_agent(self._ended)

    async def stop(self, delete: bool) -> None:
        self._stop_watching()
        await self._stop_holder()
        kill_sandbox(self._marker)
        self._cgroups = []
        if delete:
            shutil.rmtree(self._base, ignore_errors=True)
        self._raise_if_ended()

    async def begin_verification(self) -> None:
        """Kill everything the agent started and remount for the verifier.

        Idempotent. What the agent wrote since the watchdog's last look is
        measured first, before anything is copied out. The verifier phase
        binds /logs/verifier writable and /tests from a host folder created
        now, out of the agent's reach; the watchdog keeps watching.
        """
        if self._phase == "verify":
            return
        if not self._ended and self.task_env_config.storage_mb:
            await storage.check(self.task_env_config.storage_mb, self._used_bytes, self._end)
        await self._stop_holder()
        kill_sandbox(self._marker)
        self._setup_cgroups()
        await self._enter("verify")

    async def _enter(self, phase: str) -> None:
        """Start the holder of `phase` (the previous one is stopped)."""
        self._phase = phase
        if phase == "verify":
            shutil.rmtree(self._tests_dir, ignore_errors=True)
            self._tests_dir.mkdir(parents=True)
            _own(self._tests_dir)
        await self._start_holder()

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        ids = self._ids_of(self._resolve_user(user))
        variables = {**(self._plan.env if self._plan else {"PATH": DEFAULT_PATH})}
        variables.setdefault("HOME", "/root")
        variables.update(self._merge_env(env) or {})
        variables[MARKER_VAR] = self._marker
        workdir = cwd or self.task_env_config.workdir or (self._plan.workdir if self._plan else "/")
        return await self._run_in_sandbox(command, workdir=workdir, variables=variables, timeout_sec=timeout_sec,
                                          ids=ids)

    def _ids_of(self, user: str | int | None) -> tuple[int, int] | None:
        """(uid, gid) that `[agent] user` / `[verifier] user` name in the sandbox's /etc/passwd; None for root."""
        if user in (None, "root", 0, "0"):
            return None
        try:
            lines = (self._rootfs / "etc" / "passwd").read_text().splitlines()
        except OSError:
            lines = []
        for line in lines:
            fields = line.split(":")
            if len(fields) >= 4 and str(user) in (fields[0], fields[2]) and fields[2].isdigit() and fields[3].isdigit():
                return int(fields[2]), int(fields[3])
        if str(user).isdigit():
            return int(user), int(user)
        raise ValueError(f"no user {user!r} in the sandbox's /etc/passwd")

    # Uploads write into folders the sandbox can change (its root, its
    # staged logs): through transfer's link-refusing writes, never by path.
    # Downloads are SafeTransfers', from the host locations below.

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        await self._maybe_begin_verification(target_path)
        root, relative = self._host_location(target_path, for_write=True)
        copy_file(source_path, root, relative)
        _own(root, relative)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        await self._maybe_begin_verification(target_dir)
        root, relative = self._host_location(target_dir, for_write=True)
        report = copy_tree(source_dir, root, target_relative=relative)
        _own(root, relative)
        if report.refused:
            raise UnsafePath(f"not uploaded to {target_dir}: " + "; ".join(report.refused[:20]))

    # -- layout ---------------------------------------------------------------

    def _prepare_rootfs(self) -> None:
        for name in ("usr", "etc", "proc", "dev", "tmp", "root", "logs", "run", "var/tmp"):
            (self._rootfs / name).mkdir(parents=True, exist_ok=True)
        (self._rootfs / "tmp").chmod(0o1777)
        (self._rootfs / "var" / "tmp").chmod(0o1777)
        (self._rootfs / "root").chmod(0o700)
        write_etc(self._rootfs / "etc", network=self._network_policy.network_mode == NetworkMode.PUBLIC)
        # Merged-/usr symlinks made on the host side: bwrap's --symlink fails
        # with "File exists" when the rootfs is reused by the next holder.
        for link, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
            path = self._rootfs / link
            if not path.exists() and not path.is_symlink() and Path("/" + target).exists():
                path.symlink_to(target)
        for path in self._read_only_paths:
            self._ro_dir(path).mkdir(parents=True, exist_ok=True)

    def _own_root(self) -> None:
        """The sandbox's root and read-only folders, as the host wrote them, given to the sandbox's own root."""
        _own(self._rootfs)
        for path in self._read_only_paths:
            _own(self._ro_dir(path))

    def _ro_dir(self, sandbox_path: str) -> Path:
        return self._base / "ro" / sandbox_path.lstrip("/")

    def _mount_table(self) -> list[tuple[str, Path, bool]]:
        """(sandbox path, host path, writable), outermost first.

        The root is writable to the sandbox except in the agent phase, when
        only the agent's own places are (`_agent_writable`).
        """
        table: list[tuple[str, Path, bool]] = [("/", self._rootfs, self._phase != "agent")]
        table += [(path, Path(path), False) for path in HOST_RO_BINDS]
        if self._phase == "agent":
            table += [(path, self._rootfs / path.lstrip("/"), True) for path in self._agent_writable()]
        for mount in self._mounts:
            if mount.get("type") != "bind":
                continue
            target = str(PurePosixPath(mount["target"]))
            writable = not mount.get("read_only")
            if target == "/logs/verifier" and self._phase != "verify":
                writable = False
            table.append((target, Path(mount["source"]), writable))
        table += [(path, self._ro_dir(path), False) for path in self._read_only_paths]
        if self._phase == "verify":
            table.append(("/tests", self._tests_dir, True))
        return table

    def _agent_writable(self) -> list[str]:
        """What the agent may write besides its log folders: its workspace, /tmp, /var/tmp and $HOME."""
        places = set(AGENT_WRITABLE) | set(self._plan.workdirs if self._plan else ())
        if self.task_env_config.workdir:
            places.add(self.task_env_config.workdir)
        normal = {str(PurePosixPath(os.path.normpath(path))) for path in places}
        return sorted(
            path for path in normal
            if path != "/" and not any(path == b or path.startswith(b + "/") for b in HOST_RO_BINDS)
        )

    def _host_location(self, sandbox_path: str, *, for_write: bool = False) -> tuple[Path, str]:
        """(host folder of the mount, path below it) for a sandbox path.

        The mount's host folder is ours; what lies below it is the sandbox's
        and is only ever entered through `transfer`, without following links.
        `for_write` is Harbor's upload from the host side: the root, read-only
        to the agent's processes, takes it; read-only mounts do not.
        """
        path = PurePosixPath(os.path.normpath("/" + str(sandbox_path).lstrip("/")))
        best: tuple[str, Path, bool] | None = None
        for target, source, writable in self._mount_table():
            if path == PurePosixPath(target) or path.is_relative_to(target):
                if best is None or len(PurePosixPath(target).parts) >= len(PurePosixPath(best[0]).parts):
                    best = (target, source, writable)
        assert best is not None
        target, source, writable = best
        if for_write and not writable and target != "/":
            raise PermissionError(f"{sandbox_path} is read-only in the sandbox")
        return source, _relative(path, target)

    def _host_path(self, sandbox_path: str, *, for_write: bool) -> Path:
        """A sandbox path on the host, for building the root before the agent runs."""
        source, relative = self._host_location(sandbox_path, for_write=for_write)
        host = source / relative
        real_source = os.path.realpath(source)
        real = os.path.realpath(host)
        if real != real_source and not real.startswith(real_source + os.sep):
            raise PermissionError(f"{sandbox_path} resolves outside the sandbox")
        return host

    async def _maybe_begin_verification(self, target: str) -> None:
        # Only the verifier uploads tests: treat that as the end of the agent
        # phase even when no runner hook called begin_verification().
        path = PurePosixPath(target)
        if path == PurePosixPath("/tests") or path.is_relative_to("/tests"):
            await self.begin_verification()

    # -- Dockerfile ----------------------------------------------------------

    async def _apply_plan(self, plan: BuildPlan) -> None:
        for directory in plan.workdirs:
            self._host_path(directory, for_write=True).mkdir(parents=True, exist_ok=True)
        for step in plan.steps:
            if isinstance(step, CopyStep):
                self._copy_step(step)
            elif isinstance(step, RunStep):
                self._own_root()  # what the host wrote so far is the sandbox root's to change
                variables = {**step.env, "HOME": step.env.get("HOME", "/root"), MARKER_VAR: self._marker}
                result = await self._run_in_sandbox(step.command, workdir=step.workdir, variables=variables, timeout_sec=None)
                if result.return_code != 0:
                    raise SandboxBuildFailedError(
                        f"Dockerfile RUN failed ({result.return_code}): {step.command}\n{result.stdout or ''}{result.stderr or ''}"
                    )

    def _copy_target(self, sandbox_path: str) -> Path:
        pure = PurePosixPath(sandbox_path)
        for path in self._read_only_paths:
            if pure == PurePosixPath(path) or pure.is_relative_to(path):
                return self._ro_dir(path) / pure.relative_to(path)
        return self._host_path(sandbox_path, for_write=True)

    def _copy_step(self, step: CopyStep) -> None:
        context = self.environment_dir.resolve()
        matches: list[Path] = []
        for pattern in step.sources:
            found = sorted(glob(str(context / pattern)))
            if not found:
                raise SandboxBuildFailedError(f"COPY source not found in the build context: {pattern}")
            for item in found:
                resolved = Path(item).resolve()
                if resolved != context and not resolved.is_relative_to(context):
                    raise SandboxBuildFailedError(f"COPY source outside the build context: {pattern}")
                matches.append(resolved)
        dest_is_dir = step.dest.endswith("/") or len(matches) > 1
        dest = self._copy_target(step.dest.rstrip("/") or "/")
        for source in matches:
            if step.extract:
                dest.mkdir(parents=True, exist_ok=True)
                with tarfile.open(source) as archive:
                    archive.extractall(dest, filter="data")
            elif source.is_dir():
                shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
            else:
                target = dest / source.name if dest_is_dir or dest.is_dir() else dest
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
            if step.chmod:
                mode = int(step.chmod, 8)
                copied = dest if source.is_dir() else (dest / source.name if dest_is_dir or dest.is_dir() else dest)
                for item in [copied, *(copied.rglob("*") if copied.is_dir() else [])]:
                    item.chmod(mode)

    # -- processes -----------------------------------------------------------

    def _setup_cgroups(self) -> None:
        self._cgroups = []
        if not self._want_cgroups or os.geteuid() != 0:
            return
        for directory in _cgroup_dirs(self._marker):
            controller_root = directory.parent.parent
            if not controller_root.is_dir() or not os.access(controller_root, os.W_OK):
                continue
            try:
                directory.mkdir(parents=True, exist_ok=True)
                self._write_limits(directory, controller_root.name)
            except OSError as exc:
                self.logger.debug("cgroup %s unavailable: %s", directory, exc)
                continue
            self._cgroups.append(directory)

    def _write_limits(self, directory: Path, controller: str) -> None:
        if controller == "pids":
            (directory / "pids.max").write_text(str(self._max_processes))
        elif controller == "memory" and self._effective_memory_mb:
            limit = str(int(self._effective_memory_mb) * 1024 * 1024)
            (directory / "memory.limit_in_bytes").write_text(limit)
            swap = directory / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text(limit)
        elif controller == "cpu" and self._effective_cpus:
            (directory / "cpu.cfs_period_us").write_text("100000")
            (directory / "cpu.cfs_quota_us").write_text(str(int(float(self._effective_cpus) * 100000)))

    def _has_cgroup(self, controller: str) -> bool:
        return any(directory.parent.parent.name == controller for directory in self._cgroups)

    def _limit_prefix(self) -> list[str]:
        """`sh -c` joining the cgroups, then `prlimit`: both inherited by the sandbox."""
        join = "; ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self._cgroups)
        script = (join + "; " if join else "") + 'exec "$@"'
        limits = ["prlimit", "--core=0"]
        if self._cpu_time_limit_sec:
            limits.append(f"--cpu={int(self._cpu_time_limit_sec)}")
        if self._effective_storage_mb:
            limits.append(f"--fsize={int(self._effective_storage_mb) * 1024 * 1024}")
        if self._effective_memory_mb and not self._has_cgroup("memory"):
            limits.append(f"--as={int(self._effective_memory_mb) * 1024 * 1024}")
        if not self._has_cgroup("pids"):
            # Counts every process of the user on the host, not only the
            # sandbox's (the sandbox has no capability to escape it as root).
            limits.append(f"--nproc={self._max_processes}")
        return ["/bin/sh", "-c", script, "sh", *limits, "--"]

    def _host_env(self) -> dict[str, str]:
        # Nothing of the worker's environment (API keys) reaches the sandbox.
        return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", MARKER_VAR: self._marker}

    def _holder_argv(self, info_fd: int) -> list[str]:
        argv = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
        if self._network_policy.network_mode != NetworkMode.PUBLIC:
            argv.append("--unshare-net")
        argv += ["--info-fd", str(info_fd), "--hostname", "sandbox"]
        root, *_ = self._mount_table()
        # Sources as the helper sees them: this sandbox's folder at userns.FOLDER_INSIDE.
        argv += ["--bind" if root[2] else "--ro-bind", userns.inside(self._rootfs, self._base), "/"]
        for path in HOST_RO_BINDS:
            argv += ["--ro-bind", path, path]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        for target, source, writable in self._mount_table()[1 + len(HOST_RO_BINDS):]:
            source.mkdir(parents=True, exist_ok=True)
            # bwrap cannot make a mount point inside a read-only root.
            _make_folder(self._rootfs, target)
            argv += ["--bind" if writable else "--ro-bind", userns.inside(source, self._base), target]
        argv += ["--clearenv", "--setenv", MARKER_VAR, self._marker, "--", "/usr/bin/sleep", "infinity"]
        return argv

    async def _start_holder(self) -> None:
        read_fd, write_fd = os.pipe()
        go_read, go_write = os.pipe()
        try:
            self._holder = await asyncio.create_subprocess_exec(
                *self._limit_prefix(),
                *userns.helper_argv(go_read, str(self._base)),
                *self._holder_argv(write_fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(write_fd, go_read),
                env=self._host_env(),
                start_new_session=True,
            )
        except BaseException:
            os.close(go_write)
            raise
        finally:
            os.close(write_fd)
            os.close(go_read)
        loop = asyncio.get_running_loop()
        try:
            await asyncio.to_thread(userns.map_ids, self._holder.pid, go_write)
        except (RuntimeError, TimeoutError, OSError):
            pass  # the holder's own error follows, from its info pipe and stderr
        info = await loop.run_in_executor(None, _read_all, read_fd)
        try:
            self._holder_pid = int(json.loads(info.decode())["child-pid"])
            # bwrap reports the child before it has finished building the
            # mount table: entering it then finds a half-made root. The
            # sandbox's own command starts only once the root is final.
            self._enter_pid = await _wait_for_command(self._holder_pid, b"/usr/bin/sleep")
        except (ValueError, KeyError, TimeoutError) as exc:
            stderr = b""
            if self._holder.stderr is not None:
                try:
                    stderr = await asyncio.wait_for(self._holder.stderr.read(), 5)
                except TimeoutError:
                    pass
            raise RuntimeError(f"bubblewrap sandbox failed to start: {stderr.decode(errors='replace')}") from exc

    async def _stop_holder(self) -> None:
        holder, self._holder = self._holder, None
        if self._holder_pid:
            try:
                os.kill(self._holder_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._holder_pid = None
        self._enter_pid = None
        if holder is not None:
            if holder.returncode is None:
                try:
                    os.killpg(holder.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                await asyncio.wait_for(holder.wait(), 10)
            except TimeoutError:
                self.logger.warning("bubblewrap holder %s did not exit", holder.pid)

    async def _run_in_sandbox(
        self, command: str, *, workdir: str, variables: dict[str, str], timeout_sec: int | None,
        ids: tuple[int, int] | None = None,
    ) -> ExecResult:
        self._check_not_ended()
        if self._holder_pid is None or self._enter_pid is None:
            raise RuntimeError("the sandbox is not running")
        argv = [
            *self._limit_prefix(),
            "nsenter", f"--target={self._enter_pid}",
            "--user", "--mount", "--pid", "--net", "--ipc", "--uts", "--root", f"--wdns={workdir}",
            "--",
            "/usr/bin/setpriv", f"--bounding-set={VERIFY_CAPABILITIES if self._phase == 'verify' else '-all'}",
            "--inh-caps=-all", "--no-new-privs",
            *([f"--reuid={ids[0]}", f"--regid={ids[1]}", "--clear-groups"] if ids else []), "--",
            "/usr/bin/env", "-i", *(f"{key}={value}" for key, value in variables.items()),
            "/bin/bash", "-c", command,
        ]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._host_env(),
            start_new_session=True,
        )
        callback = self._output_callback()
        stdout_parts: list[bytes] = []
        stderr_parts: list[bytes] = []

        async def pump(stream: asyncio.StreamReader, parts: list[bytes], name: str) -> None:
            while chunk := await stream.read(65536):
                parts.append(chunk)
                if callback is not None:
                    await callback(chunk.decode(errors="replace"), name)  # type: ignore[arg-type]

        readers = [
            asyncio.create_task(pump(process.stdout, stdout_parts, "stdout")),  # type: ignore[arg-type]
            asyncio.create_task(pump(process.stderr, stderr_parts, "stderr")),  # type: ignore[arg-type]
        ]
        try:
            await _wait_exit(process, timeout_sec)
        except TimeoutError:
            _killpg(process.pid)
            await _wait_exit(process, None)
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds")
        except asyncio.CancelledError:
            _killpg(process.pid)
            raise
        finally:
            # A background child (`server &`) may hold the pipes open: take
            # what is already written and stop reading.
            _, pending = await asyncio.wait(readers, timeout=0.2)
            for task in pending:
                task.cancel()
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
        self._check_not_ended()
        stdout = b"".join(stdout_parts).decode(errors="replace")
        stderr = b"".join(stderr_parts).decode(errors="replace")
        return ExecResult(stdout=stdout or None, stderr=stderr or None, return_code=process.returncode or 0)


def dying(status: str) -> bool:
    """A process (its /proc/<pid>/status) that is dead or about to die: a zombie, or SIGKILL pending.

    `kill -9 -1` in the sandbox sends SIGKILL to its keep-alive before the
    command returns, but the keep-alive dies only once it is scheduled: on a
    loaded host the command's own exit can come first. A pending SIGKILL
    already decides it, so the verdict does not depend on the scheduler.
    """
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    state = fields.get("State", "").strip()[:1]
    if state in ("Z", "X", ""):
        return True
    sigkill = 1 << (signal.SIGKILL - 1)
    return any(int(fields.get(name, "0").strip() or "0", 16) & sigkill for name in ("SigPnd", "ShdPnd"))


async def _wait_exit(process: asyncio.subprocess.Process, timeout_sec: float | None) -> None:
    """Wait for the process itself to exit.

    asyncio's `Process.wait()` also waits for its pipes to close, which never
    happens while a background process the command started holds them.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_sec if timeout_sec else None
    delay = 0.002
    while process.returncode is None:
        if deadline is not None and loop.time() >= deadline:
            raise TimeoutError
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


async def _wait_for_command(init_pid: int, command: bytes, timeout_sec: float = 15) -> int:
    """The pid of the child of `init_pid` running `command`, once it runs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_sec
    while loop.time() < deadline:
        try:
            children = Path(f"/proc/{init_pid}/task/{init_pid}/children").read_text().split()
        except OSError:
            raise TimeoutError(f"the sandbox's init {init_pid} exited") from None
        for child in children:
            try:
                if Path(f"/proc/{child}/cmdline").read_bytes().startswith(command):
                    return int(child)
            except OSError:
                continue
        await asyncio.sleep(0.002)
    raise TimeoutError(f"the sandbox's command did not start within {timeout_sec} s")


def _own(root: Path, relative: str = "") -> None:
    """What the host wrote below root/relative, given to the sandbox's ids (its root's, for the host's root)."""
    shift_owners(root, relative, userns.HOST_ID_BASE, userns.ID_COUNT)


def _make_folder(root: Path, sandbox_path: str) -> None:
    """mkdir -p of a sandbox path below `root`, from the host side, never through a link the sandbox made."""
    current = root
    for part in PurePosixPath(sandbox_path).parts[1:]:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            current.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            raise PermissionError(f"{sandbox_path}: {current} is not a folder of the sandbox's own")


def _relative(path: PurePosixPath, mount_target: str) -> str:
    relative = path.relative_to(mount_target).as_posix()
    return "" if relative == "." else relative


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_all(fd: int) -> bytes:
    """Read the holder's --info-fd until bwrap closes it (once it is set up)."""
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            chunks.append(chunk)
            if chunks and b"}" in chunk:
                break
    finally:
        os.close(fd)
    return b"".join(chunks)
