"""Run the agent's code as the candidate, never as the grader.

The verifier runs as root in its sandbox, and the code it grades is the
agent's. Run as root, that code could write the verifier's reward.json,
edit the verifier's own files, read the held-out answers under /tests, or
leave a process behind that rewrites the result once the verifier is done.
So the verifier first makes its own files unreachable (`guard_grader_files`)
and runs the agent's code only through `run`:

- as an unprivileged user (nobody), from a copy in a fresh folder it cannot
  write, in isolated Python (no current folder on the path, no PYTHON*
  variables), so a planted `json.py` or `.pth` file is never imported;
- the harness prints READY, reads its input (one JSON line), prints START
  and only then imports the candidate's code; the verifier's clock runs
  from that START to the RESULT line. The candidate's code cannot see the
  input before the clock starts, nor stop the clock with a time of its
  own: a RESULT it prints early must already be right;
- afterwards every process of that user is killed and every file it left in
  the shared temporary folders removed, before the verifier measures
  anything else.

Run as an ordinary user (a task tried on a laptop), nothing can be dropped:
the code runs as that user.

The same file is in every example task that runs candidate code (Harbor
uploads each task's tests/ alone); a test keeps the copies equal.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

CANDIDATE_UID = 65534  # nobody
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")


class CandidateError(RuntimeError):
    """The candidate's code failed, printed no result, or ran out of time."""


def dropping() -> bool:
    return os.geteuid() == 0


def guard_grader_files(tests_dir: str, verifier_dir: str) -> None:
    """The grader's files out of the candidate's reach: /tests unreadable, /logs/verifier unwritable.

    Harbor makes /logs/verifier world-writable for verifiers that run as
    another user; ours runs as root and writes it alone.
    """
    if not dropping():
        return
    os.makedirs(verifier_dir, exist_ok=True)
    os.chmod(verifier_dir, 0o755)
    os.chmod(tests_dir, 0o700)


def run(harness: str, files: dict[str, str], job, *, timeout: float = 120.0):
    """(RESULT's value, seconds from START to RESULT): `harness` run on copies of `files` (name -> path).

    The harness prints READY, reads `job` (one JSON line) from stdin, prints
    START, imports the candidate's code and prints `RESULT <json>`; it
    finds the copies in its current folder.
    """
    work = tempfile.mkdtemp(prefix="candidate-")
    try:
        for name, path in files.items():
            shutil.copyfile(path, os.path.join(work, name))
            os.chmod(os.path.join(work, name), 0o644)
        os.chmod(work, 0o755)
        return _run_in(work, harness, job, timeout)
    finally:
        end_candidate()
        shutil.rmtree(work, ignore_errors=True)


def _run_in(work: str, harness: str, job, timeout: float):
    as_candidate = {"user": CANDIDATE_UID, "group": CANDIDATE_UID, "extra_groups": []} if dropping() else {}
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [_python(), "-I", "-c", harness],
            cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work, "LC_ALL": "C.UTF-8"},
            start_new_session=True, **as_candidate,
        )
        expired = threading.Event()
        timer = threading.Timer(timeout, lambda: (expired.set(), _kill(process)))
        timer.start()
        try:
            if not _line_starting(process, "READY"):
                raise CandidateError(_failure(process, errors, "the harness did not start", expired))
            try:
                process.stdin.write((json.dumps(job) + "\n").encode())
                process.stdin.close()
            except OSError:
                raise CandidateError(_failure(process, errors, "the harness closed its input", expired)) from None
            if not _line_starting(process, "START"):
                raise CandidateError(_failure(process, errors, "the harness did not read its input", expired))
            started = time.perf_counter()
            line = _line_starting(process, "RESULT ")
            seconds = time.perf_counter() - started
            if line is None:
                raise CandidateError(_failure(process, errors, "no result printed", expired))
            try:
                return json.loads(line[len("RESULT "):]), seconds
            except ValueError:
                raise CandidateError("the result is not JSON") from None
        finally:
            timer.cancel()
            _kill(process)


def _python() -> str:
    """This Python, unless the candidate user cannot run it (a Python under /root): then the system's."""
    if not dropping() or _others_can_run(os.path.realpath(sys.executable)):
        return sys.executable
    return shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable


def _others_can_run(path: str) -> bool:
    folders = [os.path.dirname(path)]
    while folders[-1] != os.path.dirname(folders[-1]):
        folders.append(os.path.dirname(folders[-1]))
    try:
        return bool(os.stat(path).st_mode & 0o001) and all(os.stat(f).st_mode & 0o001 for f in folders)
    except OSError:
        return False


def _line_starting(process, prefix: str) -> str | None:
    for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        if line.startswith(prefix):
            return line
    return None


def _failure(process, errors, what: str, expired: threading.Event) -> str:
    if expired.is_set():
        return "ran out of time"
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    errors.seek(0)
    tail = errors.read()[-2000:].decode(errors="replace").strip()
    return f"{what}: {tail}" if tail else what


def _kill(process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
        process.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        pass


def end_candidate() -> None:
    """Kill every process of the candidate user and remove the files it left in the shared temporary folders.

    A process that kill(-1)s as the candidate user reaches every process of
    that user at once, however many a fork bomb makes.
    """
    if not dropping():
        return
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(CANDIDATE_UID)
                os.setuid(CANDIDATE_UID)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    for folder in SHARED_TEMP:
        _remove_owned(folder)


def _remove_owned(folder: str) -> None:
    """Remove what the candidate user made in `folder`; it can only have made it in folders anyone may write."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == CANDIDATE_UID:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
        elif entry.is_dir(follow_symlinks=False) and info.st_mode & 0o002:
            _remove_owned(entry.path)
