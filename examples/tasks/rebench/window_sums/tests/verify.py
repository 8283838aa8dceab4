"""Verifier for window_sums: the final submission's score, and the run's score log.

The final score is measured here with the verifier's own copies of the
scoring tool and the starting solution. The score log the agent's calls of
/app/score.py left in LOGS_DIR/agent/score_log.jsonl is checked (each entry's
score recomputed from its raw runtime) and written to
LOGS_DIR/verifier/score_log.json, where the site reads it.
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile

TESTS_DIR = os.environ.get("TESTS_DIR", "/tests")
APP_DIR = os.environ.get("APP_DIR", "/app")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")
sys.path.insert(0, TESTS_DIR)

import candidate  # noqa: E402  (runs the agent's code as the candidate)
import score  # noqa: E402  (the verifier's copy of the scoring tool)


def score_log():
    entries = []
    try:
        with open(os.path.join(LOGS_DIR, "agent", "score_log.jsonl")) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return entries
    for line in lines:
        try:
            entry = json.loads(line)
            at = float(entry["at"])
            raw = entry.get("raw")
            value = score.normalised(float(raw)) if raw is not None else 0.0
        except (ValueError, KeyError, TypeError):
            continue
        entries.append({"at": at, "raw": raw, "score": round(value, 6)})
    return entries


def main():
    out = os.path.join(LOGS_DIR, "verifier")
    candidate.guard_grader_files(TESTS_DIR, out)
    log = score_log()
    with open(os.path.join(out, "score_log.json"), "w") as handle:
        json.dump({"entries": log}, handle)
    # Time the submission against the verifier's own starter, in a clean folder.
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(os.path.join(TESTS_DIR, "starter.py"), os.path.join(work, "starter.py"))
        try:
            shutil.copy(os.path.join(APP_DIR, "solve.py"), os.path.join(work, "solve.py"))
        except OSError:
            fields = {"reward": 0.0, "reason": "no_output_file", "correctness": False}
        else:
            runtime_ms, error = score.measure(work)
            if runtime_ms is None:
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
