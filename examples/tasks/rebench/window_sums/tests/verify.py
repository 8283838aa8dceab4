"""Verifier for window_sums: the final submission's score, and the run's score log.

Every score is measured here, with the verifier's own copies of the scoring
tool and the starting solution. The score log is the runner's record of the
agent's calls of /app/score.py (LOGS_DIR/scoring: the time of each call and
a snapshot of /app/solve.py taken then, kept where the agent could not write
it): each snapshot is measured again, and the entries are written to
LOGS_DIR/verifier/score_log.json, where the site reads them. Nothing the
agent wrote gives a number.
"""
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile

TESTS_DIR = os.environ.get("TESTS_DIR", "/tests")
APP_DIR = os.environ.get("APP_DIR", "/app")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")
sys.path.insert(0, TESTS_DIR)

import candidate  # noqa: E402  (runs the agent's code as the candidate)
import score  # noqa: E402  (the verifier's copy of the scoring tool)


def measure_file(solve):
    """The calibrated runtime of a copy of solve.py against the verifier's starter, in a clean folder (None: no result)."""
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(os.path.join(TESTS_DIR, "starter.py"), os.path.join(work, "starter.py"))
        try:
            shutil.copy(solve, os.path.join(work, "solve.py"))
        except OSError:
            return None, "no_output_file"
        return score.measure(work)


def score_log():
    """The record's entries, each snapshot measured once: [{"at", "raw", "score"}]."""
    record = os.path.join(LOGS_DIR, "scoring")
    try:
        with open(os.path.join(record, "log.jsonl")) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    measured = {}
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
            at, snapshot = float(entry["at"]), str(entry["snapshot"])
        except (ValueError, KeyError, TypeError):
            continue
        if not re.fullmatch(r"s[0-9]{4}", snapshot):
            continue
        if snapshot not in measured:
            measured[snapshot] = measure_file(os.path.join(record, snapshot, "app", "solve.py"))[0]
        raw = measured[snapshot]
        entries.append({"at": at, "raw": raw, "score": round(score.normalised(raw), 6) if raw is not None else 0.0})
    return entries


def main():
    out = os.path.join(LOGS_DIR, "verifier")
    candidate.guard_grader_files(TESTS_DIR, out)
    log = score_log()
    with open(os.path.join(out, "score_log.json"), "w") as handle:
        json.dump({"entries": log}, handle)
    # Time the submission against the verifier's own starter, in a clean folder.
    runtime_ms, error = measure_file(os.path.join(APP_DIR, "solve.py"))
    if error == "no_output_file":
        fields = {"reward": 0.0, "reason": "no_output_file", "correctness": False}
    elif runtime_ms is None:
        fields = {"reward": 0.0, **candidate.failure_fields(error, "incorrect_result")}
    else:
        fields = {"reward": round(score.normalised(runtime_ms), 6), "correctness": True,
                  "metric": round(runtime_ms, 6), "start_score": score.START_MS,
                  "reference_score": score.REFERENCE_MS}
    fields["score_log_entries"] = len(log)
    with open(os.path.join(out, "reward.json"), "w") as handle:
        json.dump(fields, handle)
    print(json.dumps(fields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
