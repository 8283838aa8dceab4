"""The example verifiers grade the agent's code without trusting it.

Run on the host as the tests' user; the candidate's code only drops to an
unprivileged user when that user is root (as in a sandbox), so the hostile
candidates below need root (CI runs as root).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from tasks.taskdir import parse_task_dir

from .test_example_tasks import EXAMPLES, Sandbox

CANDIDATE_FILES = sorted(EXAMPLES.glob("**/tests/candidate.py"))


def candidate_module():
    """The examples' candidate.py (one text in every task), as the verifiers import it."""
    spec = importlib.util.spec_from_file_location("example_candidate", CANDIDATE_FILES[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


candidate = candidate_module()
TIMED = {"count_primes": "tests/verify.py", "rebench/window_sums": "tests/score.py"}


def require_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("the verifier drops the candidate's privileges only when it runs as root")


def test_every_verifier_that_runs_candidate_code_has_the_same_candidate_runner():
    """Harbor uploads a task's tests/ alone, so each task carries candidate.py: one text, everywhere."""
    users = sorted({path.parent for path in EXAMPLES.glob("**/tests/*.py") if "import candidate" in path.read_text()})
    assert users == sorted(path.parent for path in CANDIDATE_FILES) and len(users) == 3
    texts = {path.read_text() for path in CANDIDATE_FILES}
    assert len(texts) == 1, "the copies of candidate.py differ: copy one over the others"


@pytest.mark.parametrize("task, constants", sorted(TIMED.items()))
def test_timed_tasks_state_the_noise_floor_their_verifier_applies(task, constants):
    declared = parse_task_dir(EXAMPLES / task).optimization["noise_floor"]
    code = (EXAMPLES / task / constants).read_text()
    assert float(re.search(r"^NOISE_FLOOR = ([0-9.]+)$", code, re.M).group(1)) == declared == 1.5


FORGER = '''
import json, os, time
LOGS = {logs!r}
def forge():
    with open(os.path.join(LOGS, "verifier", "reward.json"), "w") as handle:
        json.dump({{"reward": 1.0}}, handle)
try:
    forge()
except OSError:
    pass
# A daemon that keeps forging after the verifier has written its result.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(600):
            try:
                forge()
            except OSError:
                pass
            time.sleep(0.01)
    os._exit(0)
'''


VERIFIERS = sorted(path.parent.parent for path in EXAMPLES.glob("**/tests/test.sh"))


@pytest.mark.parametrize("task", VERIFIERS, ids=[str(path.relative_to(EXAMPLES)) for path in VERIFIERS])
def test_a_verifier_that_fails_says_so(tmp_path, task):
    """A verify.py that dies before writing its reward leaves a zero that says it failed, not a clean zero."""
    tests = tmp_path / "tests"
    shutil.copytree(task / "tests", tests)
    (tests / "verify.py").write_text("import sys\nsys.exit(3)\n")
    env = {**os.environ, "APP_DIR": str(tmp_path / "app"), "TESTS_DIR": str(tests), "LOGS_DIR": str(tmp_path / "logs")}
    done = subprocess.run(["bash", str(tests / "test.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    fields = json.loads((tmp_path / "logs" / "verifier" / "reward.json").read_text())
    assert fields == {"reward": 0.0, "reason": "verifier_failed",
                      "error": "verify.py exited with status 3 and wrote no reward"}


def test_a_fast_solution_that_starts_a_fork_bomb_scores_zero(tmp_path):
    """Its processes would share the CPU with the starter the verifier times next: never a score."""
    require_root()
    sandbox = Sandbox(EXAMPLES / "count_primes", tmp_path)
    sandbox.solve()
    solve = sandbox.app / "solve.py"
    solve.write_text(solve.read_text() + FORK_BOMB.replace("def run():\n    return 42\n", ""))
    fields, _ = sandbox.verify()
    assert fields["reward"] == 0.0 and fields["reason"] == "candidate_left_processes", fields
    assert "correctness" not in fields
    assert not candidate_processes()


def test_candidate_code_cannot_write_the_verifiers_result(tmp_path):
    require_root()
    sandbox = Sandbox(EXAMPLES / "count_primes", tmp_path)
    solve = sandbox.app / "solve.py"
    solve.write_text(solve.read_text() + FORGER.format(logs=str(sandbox.logs)))
    fields, _ = sandbox.verify()
    # The daemon it left running is its failure, whatever it printed.
    assert fields["reward"] == 0.0 and fields["reason"] == "candidate_left_processes", fields
    time.sleep(0.3)  # a surviving daemon would have rewritten it by now
    assert '"reward": 1.0' not in (sandbox.logs / "verifier" / "reward.json").read_text()
    assert not candidate_processes()


def test_candidate_code_cannot_slow_the_verifiers_own_starter(tmp_path):
    """The starter the verifier times lives under /tests: a candidate that edits it would look fast."""
    require_root()
    sandbox = Sandbox(EXAMPLES / "count_primes", tmp_path)
    solve = sandbox.app / "solve.py"
    slow = "import time\\ndef count_primes(n):\\n    time.sleep(5)\\n    return 0\\n"
    solve.write_text(solve.read_text() + f'''
try:
    with open({str(sandbox.tests / "starter.py")!r}, "w") as handle:
        handle.write("{slow}")
except OSError:
    pass
''')
    fields, _ = sandbox.verify()
    assert fields["reward"] == 0.0 and fields["correctness"] is True
    assert "time.sleep" not in (sandbox.tests / "starter.py").read_text()


def test_candidate_code_cannot_read_the_held_out_labels(tmp_path):
    require_root()
    sandbox = Sandbox(EXAMPLES / "ring_classifier", tmp_path)
    (sandbox.app / "model.py").write_text(f'''
import csv
def fit(X, y):
    try:
        with open({str(sandbox.tests / "heldout.csv")!r}) as handle:
            return {{tuple(round(float(r[k]), 6) for k in "xyz"): int(r["label"]) for r in csv.DictReader(handle)}}
    except OSError:
        return {{}}
def predict(model, points):
    return [model.get(tuple(round(v, 6) for v in p), 0) for p in points]
''')
    fields, _ = sandbox.verify()
    assert fields["reward"] == 0.0 and fields["correctness"] is True and fields["metric"] < 0.7


def candidate_processes() -> list[int]:
    """Live processes of any uid a candidate runs as."""
    return [pid for uid in _uids_running() if uid in candidate.CANDIDATE_UIDS for pid in candidate.live_processes(uid)]


def _uids_running() -> set[int]:
    uids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            uids.add(os.stat(f"/proc/{pid}").st_uid)
        except OSError:
            continue
    return uids


# The harness of these tests: the candidate's code is `main.py`; its RESULT is what `main.run()` returns.
HARNESS = r"""
import importlib.util, json, sys
print("READY", flush=True)
job = json.loads(sys.stdin.readline())
print("START", flush=True)
spec = importlib.util.spec_from_file_location("main", "main.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("RESULT " + json.dumps(module.run()), flush=True)
"""

FORK_BOMB = """
import os
if os.fork() == 0:
    os.setsid()
    while True:
        try:
            os.fork()
        except OSError:
            pass
def run():
    return 42
"""

SHORT_LIVED_HELPERS = """
import subprocess, threading
def run():
    threads = [threading.Thread(target=sum, args=(range(1000),)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return subprocess.run(["true"]).returncode
"""


def run_candidate(tmp_path, code: str, timeout: float = 30.0):
    main = tmp_path / "main.py"
    main.write_text(code)
    return candidate.run(HARNESS, {"main.py": str(main)}, None, timeout=timeout)


def test_a_fork_bomb_fails_its_run_and_leaves_nothing(tmp_path):
    """The bomb fills its own process limit, prints a right result, and still fails: its processes were left running."""
    require_root()
    started = time.monotonic()
    with pytest.raises(candidate.CandidateError) as failed:
        run_candidate(tmp_path, FORK_BOMB)
    assert failed.value.reason == candidate.LEFT_PROCESSES, failed.value
    assert re.search(r"left \d+ processes running \(its limit: 128\)", str(failed.value)), failed.value
    assert failed.value.fields() == {"reason": "candidate_left_processes", "error": str(failed.value)}
    assert time.monotonic() - started < 25
    assert not candidate_processes()


@pytest.mark.parametrize("code, left", [
    ("import os, time\nif os.fork() == 0:\n    time.sleep(60)\ndef run():\n    return 1\n", "left 1 process running"),
    ("import atexit, time\natexit.register(time.sleep, 60)\ndef run():\n    return 1\n",
     "still running 5 s after printing its result"),
])
def test_a_process_left_running_after_the_result_fails_the_run(tmp_path, code, left):
    require_root()
    with pytest.raises(candidate.CandidateError, match=left) as failed:
        run_candidate(tmp_path, code)
    assert failed.value.reason == candidate.LEFT_PROCESSES
    assert not candidate_processes()


def test_a_candidate_out_of_time_fails_as_a_timeout(tmp_path):
    require_root()
    with pytest.raises(candidate.CandidateError, match="ran out of time") as failed:
        run_candidate(tmp_path, "import time\ntime.sleep(60)\ndef run():\n    return 1\n", timeout=2)
    assert failed.value.reason == candidate.TIMED_OUT and "correctness" not in failed.value.fields()
    assert not candidate_processes()


def test_helpers_that_end_with_the_candidate_are_fine(tmp_path):
    require_root()
    assert run_candidate(tmp_path, SHORT_LIVED_HELPERS)[0] == 0


def test_each_run_is_a_uid_of_its_own_with_no_groups(tmp_path):
    """RLIMIT_NPROC counts a uid's processes across the host: no other run, verifier or user shares the candidate's."""
    require_root()
    code = "import os\ndef run():\n    return [os.getuid(), os.getgid(), os.getgroups()]\n"
    runs = [run_candidate(tmp_path, code)[0] for _ in range(3)]
    assert all(uid == gid and uid in candidate.CANDIDATE_UIDS and groups == [] for uid, gid, groups in runs), runs
    assert len({uid for uid, _, _ in runs}) == 3, runs
