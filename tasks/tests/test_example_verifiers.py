"""The example verifiers grade the agent's code without trusting it.

Run on the host as the tests' user; the candidate's code only drops to an
unprivileged user when that user is root (as in a sandbox), so the hostile
candidates below need root (CI runs as root).
"""
from __future__ import annotations

import os
import re
import time

import pytest

from tasks.taskdir import parse_task_dir

from .test_example_tasks import EXAMPLES, Sandbox

CANDIDATE_FILES = sorted(EXAMPLES.glob("**/tests/candidate.py"))
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


def test_candidate_code_cannot_write_the_verifiers_result(tmp_path):
    require_root()
    sandbox = Sandbox(EXAMPLES / "count_primes", tmp_path)
    solve = sandbox.app / "solve.py"
    solve.write_text(solve.read_text() + FORGER.format(logs=str(sandbox.logs)))
    fields, _ = sandbox.verify()
    assert fields["reward"] == 0.0 and fields["correctness"] is True
    time.sleep(0.3)  # a surviving daemon would have rewritten it by now
    assert '"reward": 1.0' not in (sandbox.logs / "verifier" / "reward.json").read_text()
    assert not _live_processes_of(65534)


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


def _live_processes_of(uid: int) -> list[str]:
    """Processes of `uid` that still run (a killed one may wait as a zombie for a parent that never reaps)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        if int(status["Uid"].split()[0]) == uid and not status["State"].strip().startswith("Z"):
            found.append(pid)
    return found
