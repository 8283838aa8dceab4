"""A process started in a user namespace of its own, its ids 0-65535 mapped to unprivileged host ids.

The bubblewrap sandbox runs in one: its root is HOST_ID_BASE on the host,
never the host's root, so a file the agent makes (a setuid copy of a shell)
belongs to an id no one logs in as, and a process of the sandbox holds no
privilege on anything of the host's (an abstract socket that trusts uid 0,
a root-owned file of the host that a bind exposes).

The namespace is made by HELPER, run as the worker's root: it enters a
mount namespace of its own where the sandbox's folder is bound at
`/tmp` (bwrap resolves its binds by path, as the sandbox's root, which may
not enter the worker's sandbox root: that is the worker's alone), makes
the user namespace, waits for the worker to write the id maps
(`map_ids`), becomes the namespace's root and runs the command. Django-free.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HOST_ID_BASE = 0x70000000  # above systemd's container ranges (524288-1879048191)
ID_COUNT = 65536
FOLDER_INSIDE = "/tmp"

HELPER = r"""
import ctypes, os, sys
go, folder, *command = sys.argv[1:]
# Found now: once it is the namespace's root, this Python may not read its own library (under /root).
program = command[0]
if "/" not in program:
    for place in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        if os.access(os.path.join(place, program), os.X_OK):
            program = os.path.join(place, program)
            break
libc = ctypes.CDLL(None, use_errno=True)
def mount(source, target, flags):
    if libc.mount(source, target, None, flags, None) != 0:
        error = ctypes.get_errno()
        sys.exit(f"mount {target!r}: {os.strerror(error)}")
os.unshare(os.CLONE_NEWNS)
mount(None, b"/", (1 << 14) | (1 << 18))  # MS_REC | MS_PRIVATE
mount(folder.encode(), b"/tmp", (1 << 12) | (1 << 14))  # MS_BIND | MS_REC
os.unshare(os.CLONE_NEWUSER)
if os.read(int(go), 1) != b"1":
    sys.exit("the worker wrote no id map")
os.close(int(go))
os.setgroups([])
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
os.execv(program, command)
"""


def helper_argv(go_fd: int, folder: str) -> list[str]:
    """The argv prefix that runs what follows as the root of a new user namespace, `folder` at FOLDER_INSIDE."""
    return [sys.executable, "-I", "-S", "-c", HELPER, str(go_fd), folder]


def inside(path: Path, folder: Path) -> str:
    """Where a host path below `folder` is for the helper's command (other paths stay as they are)."""
    path, folder = Path(path), Path(folder)
    if path == folder or path.is_relative_to(folder):
        return str(Path(FOLDER_INSIDE) / path.relative_to(folder))
    return str(path)


def map_ids(pid: int, go_fd: int, timeout_sec: float = 10) -> None:
    """Write the id maps of `pid`'s new user namespace once it has one, then let it go on (closes go_fd)."""
    ours = os.readlink("/proc/self/ns/user")
    deadline = time.monotonic() + timeout_sec
    try:
        while True:
            try:
                if os.readlink(f"/proc/{pid}/ns/user") != ours:
                    break
            except OSError:
                raise RuntimeError(f"the sandbox's process {pid} exited before its user namespace was made") from None
            if time.monotonic() > deadline:
                raise TimeoutError("the sandbox's user namespace was not made in time")
            time.sleep(0.001)
        line = f"0 {HOST_ID_BASE} {ID_COUNT}\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w") as handle:
                handle.write(line)
        os.write(go_fd, b"1")
    finally:
        os.close(go_fd)


def run(command: list[str], folder: Path, *, timeout_sec: float) -> str:
    """Run `command` as the root of a user namespace of its own, `folder` at FOLDER_INSIDE: "" when it succeeds, else why."""
    import subprocess

    go_read, go_write = os.pipe()
    try:
        process = subprocess.Popen(
            [*helper_argv(go_read, str(folder)), *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, pass_fds=(go_read,),
        )
    except OSError as exc:
        os.close(go_write)
        return str(exc)
    finally:
        os.close(go_read)
    problem = ""
    try:
        map_ids(process.pid, go_write)
    except (RuntimeError, TimeoutError, OSError) as exc:
        problem = str(exc)
    try:
        _, errors = process.communicate(timeout=timeout_sec)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return f"{command[0]} did not finish in {timeout_sec} s"
    if process.returncode == 0:
        return ""
    return errors.strip() or problem or f"exit code {process.returncode}"
