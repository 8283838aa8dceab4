"""Run the agent's code as the candidate, never as the grader.

The verifier runs as root in its sandbox, and the code it grades is the
agent's. Run as root, that code could write the verifier's reward.json,
edit the verifier's own files, read the held-out answers under /tests, or
leave a process behind that rewrites the result once the verifier is done.
So the verifier first makes its own files unreachable (`guard_grader_files`)
and runs the agent's code only through `run`:

- as an unprivileged user of its own (a fresh uid each run, no name, no
  groups), from a copy in a fresh folder it cannot write, in isolated
  Python (no current folder on the path, no PYTHON* variables), so a
  planted `json.py` or `.pth` file is never imported;
- with at most MAX_PROCESSES processes and threads (RLIMIT_NPROC, which
  the kernel counts per uid: hence a uid of its own, shared with no other
  run, no other verifier on the host and no process of the image). A fork
  bomb fills its own limit and no more, far below the sandbox's (4096 in a
  container, 1024 in bubblewrap), so the verifier can still start, time
  and kill processes;
- the harness prints READY, reads its input (one JSON line), prints START
  and only then imports the candidate's code; the verifier's clock runs
  from that START to the RESULT line. The candidate's code cannot see the
  input before the clock starts, nor stop the clock with a time of its
  own: a RESULT it prints early must already be right;
- a run whose code left a process behind (a fork bomb, a daemon), or was
  still running EXIT_GRACE_SEC after printing its result, fails
  (`candidate_left_processes`), whatever it printed: its processes would
  share the CPU with what the verifier times next, so its score would
  depend on the machine. A run out of time fails as `candidate_timeout`;
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
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The candidate's uids: one drawn for each run, below 65536 (what a user
# namespace usually maps) and above the users an image defines.
CANDIDATE_UIDS = range(40000, 60000)
# Processes and threads of one run (RLIMIT_NPROC counts both).
MAX_PROCESSES = 128
# How long the harness may take to exit after its result.
EXIT_GRACE_SEC = 5.0
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")

# The reward.json reasons of a failed run.
SOLUTION_ERROR = "solution_error"
TIMED_OUT = "candidate_timeout"
LEFT_PROCESSES = "candidate_left_processes"

# Run first in the harness, as the candidate: a hard limit it cannot raise.
_LIMIT = f"import resource; resource.setrlimit(resource.RLIMIT_NPROC, ({MAX_PROCESSES}, {MAX_PROCESSES}))\n"


class CandidateError(RuntimeError):
    """The candidate's code failed, printed no result, ran out of time, or left processes behind."""

    def __init__(self, message: str, reason: str = SOLUTION_ERROR):
        super().__init__(message)
        self.reason = reason

    def fields(self) -> dict:
        """What the verifier's reward.json says of it; only a solution that ran and failed is incorrect."""
        fields = {"reason": self.reason, "error": str(self)[-500:]}
        if self.reason == SOLUTION_ERROR:
            fields["correctness"] = False
        return fields


def failure_fields(error, reason: str = SOLUTION_ERROR) -> dict:
    """reward.json's fields for a failed run: a CandidateError's own, else `reason` with the message (a wrong result)."""
    if isinstance(error, CandidateError):
        return error.fields()
    return {"reason": reason, "correctness": False, "error": str(error)[-500:]}


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
    uid = secrets.choice(CANDIDATE_UIDS) if dropping() else None
    work = tempfile.mkdtemp(prefix="candidate-")
    try:
        for name, path in files.items():
            shutil.copyfile(path, os.path.join(work, name))
            os.chmod(os.path.join(work, name), 0o644)
        os.chmod(work, 0o755)
        return _run_in(work, harness, job, timeout, uid)
    finally:
        end_candidate(uid)
        shutil.rmtree(work, ignore_errors=True)


def _run_in(work: str, harness: str, job, timeout: float, uid: int | None):
    as_candidate = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
    code = _LIMIT + harness if uid is not None else harness
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [_python(), "-I", "-c", code],
            cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work, "LC_ALL": "C.UTF-8",
                 "USER": "candidate", "LOGNAME": "candidate"},
            start_new_session=True, **as_candidate,
        )
        watch = _Watch(process, uid)
        timer = threading.Timer(timeout, watch.expire)
        timer.start()
        failure = None
        try:
            result = _exchange(process, errors, job, watch.expired)
            watch.result_printed()
        except CandidateError as error:
            failure = error
        finally:
            timer.cancel()
            watch.settle()
            _kill(process)
        if watch.left:
            raise CandidateError(watch.left, LEFT_PROCESSES)
        if failure is not None:
            raise failure
        return result


def _exchange(process, errors, job, expired: threading.Event):
    """The harness's protocol: READY, the job, START, RESULT; (value, seconds) or CandidateError."""
    if not _line_starting(process, "READY"):
        raise _failure(process, errors, "the harness did not start", expired)
    try:
        process.stdin.write((json.dumps(job) + "\n").encode())
        process.stdin.close()
    except OSError:
        raise _failure(process, errors, "the harness closed its input", expired) from None
    if not _line_starting(process, "START"):
        raise _failure(process, errors, "the harness did not read its input", expired)
    started = time.perf_counter()
    line = _line_starting(process, "RESULT ")
    seconds = time.perf_counter() - started
    if line is None:
        raise _failure(process, errors, "no result printed", expired)
    try:
        return json.loads(line[len("RESULT "):]), seconds
    except ValueError:
        raise CandidateError("the result is not JSON") from None


class _Watch:
    """What a run left behind, seen once: when it ends, or when it runs out of time (the timer's thread).

    Out of time, the run fails as such, and every process of the candidate
    is killed at once: one that holds the harness's output open would
    otherwise keep the verifier waiting for the end of it.
    """

    def __init__(self, process, uid: int | None):
        self.process, self.uid = process, uid
        self.expired = threading.Event()
        self.left = ""  # what was left running, in a sentence ("" when nothing)
        self._lock = threading.Lock()
        self._printed = False
        self._seen = False

    def expire(self) -> None:
        with self._lock:
            self.expired.set()
            if self._printed and not self._seen:
                self.left = "the candidate was still running at the end of its time, after printing its result"
            self._seen = True
            _kill(self.process)
            end_candidate(self.uid)

    def result_printed(self) -> None:
        """After RESULT the harness exits, or it counts as left running."""
        with self._lock:
            self._printed = True
        self.process.stdout.close()
        try:
            self.process.wait(timeout=EXIT_GRACE_SEC)
        except subprocess.TimeoutExpired:
            with self._lock:
                if not self._seen:
                    self.left = f"the candidate was still running {EXIT_GRACE_SEC:g} s after printing its result"

    def settle(self) -> None:
        """The run has ended: any process of the candidate but the harness was left running."""
        with self._lock:
            if self._seen or self.uid is None:
                return
            self._seen = True
            others = [pid for pid in live_processes(self.uid) if pid != self.process.pid]
            if others and not self.left:
                self.left = (f"the candidate left {len(others)} process{'es' if len(others) > 1 else ''} running "
                             f"(its limit: {MAX_PROCESSES})")


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


def _failure(process, errors, what: str, expired: threading.Event) -> CandidateError:
    if expired.is_set():
        return CandidateError("ran out of time", TIMED_OUT)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    errors.seek(0)
    tail = errors.read()[-2000:].decode(errors="replace").strip()
    return CandidateError(f"{what}: {tail}" if tail else what)


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


def live_processes(uid: int) -> list[int]:
    """The pids of `uid`'s processes that still run (a killed one may wait as a zombie for a parent that never reaps)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
            if int(status["Uid"].split()[0]) == uid and not status["State"].strip().startswith("Z"):
                found.append(int(entry))
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return found


def end_candidate(uid: int | None) -> None:
    """Kill every process of the candidate's `uid` and remove the files it left in the shared temporary folders.

    A process that kill(-1)s as that uid reaches every process of it at
    once, however many a fork bomb makes; it returns once none runs (a
    killed process takes a moment to go), so nothing of the candidate
    shares the CPU with what the verifier times next.
    """
    if uid is None:
        return
    deadline = time.monotonic() + 10
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if not live_processes(uid) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    for folder in SHARED_TEMP:
        _remove_owned(folder, uid)


def _remove_owned(folder: str, uid: int) -> None:
    """Remove what `uid` made in `folder`; it can only have made it in folders anyone may write."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
        elif entry.is_dir(follow_symlinks=False) and info.st_mode & 0o002:
            _remove_owned(entry.path, uid)
