"""Verifier for ring_classifier: integrity, held-out accuracy, reward.

Trains /app/model.py on all of /app/data/train.csv in a fresh process, asks it
for labels of the held-out points (features only) and scores the accuracy.
Writes LOGS_DIR/verifier/reward.json like AutoLab's verifiers: the reward
plus correctness, metric and, for a zero score, the reason
("build_file_modified", "no_output_file", ...).
"""
import csv
import hashlib
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import candidate  # noqa: E402  (beside this file in tests/)

APP_DIR = os.environ.get("APP_DIR", "/app")
TESTS_DIR = os.environ.get("TESTS_DIR", "/tests")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")

# The anchors published in task.toml ([optimization]); higher is better.
BASELINE = 0.60
REFERENCE = 0.93
TIMEOUT_SEC = 120

# The candidate's harness, run as the candidate on copies of model.py, the
# training data and the held-out features (never their labels; candidate.py).
HARNESS = r"""
import csv, importlib.util, json, sys
print("READY", flush=True)
sys.stdin.readline()
print("START", flush=True)
def rows(path):
    with open(path) as handle:
        return list(csv.DictReader(handle))
train = rows("train.csv")
X = [[float(r["x"]), float(r["y"]), float(r["z"])] for r in train]
y = [int(r["label"]) for r in train]
points = [[float(r["x"]), float(r["y"]), float(r["z"])] for r in rows("points.csv")]
spec = importlib.util.spec_from_file_location("model", "model.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.fit(X, y)
print("RESULT " + json.dumps([int(p) for p in module.predict(model, points)]), flush=True)
"""


def anchored_linear(value, baseline, reference):
    """(value - baseline) / (reference - baseline), clipped to [0, 1]."""
    reward = (value - baseline) / (reference - baseline)
    return min(1.0, max(0.0, reward))


def finish(reward, **details):
    """Write reward.json the way AutoLab's verifiers do: the reward beside
    every other field, numeric or not (`"reason": "build_file_modified"`).
    Harbor 0.25's own verifier rejects non-numeric fields; the site's runner
    plugs in a tolerant one that keeps them."""
    out = os.path.join(LOGS_DIR, "verifier")
    os.makedirs(out, exist_ok=True)
    fields = {"reward": round(reward, 6)}
    for key, value in details.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        fields[key] = value
    with open(os.path.join(out, "reward.json"), "w") as handle:
        json.dump(fields, handle)
    print(json.dumps(fields))
    return 0


def modified_read_only_files():
    """Read-only files whose SHA-256 differs from the values pinned in tests/."""
    modified = []
    with open(os.path.join(TESTS_DIR, "read_only.sha256")) as handle:
        for line in handle:
            if not line.strip():
                continue
            digest, name = line.split(None, 1)
            try:
                with open(os.path.join(APP_DIR, name.strip()), "rb") as source:
                    actual = hashlib.sha256(source.read()).hexdigest()
            except OSError:
                actual = ""
            if actual != digest:
                modified.append(name.strip())
    return modified


def predictions(features_path):
    files = {
        "model.py": os.path.join(APP_DIR, "model.py"),
        "train.csv": os.path.join(APP_DIR, "data", "train.csv"),
        "points.csv": features_path,
    }
    predicted, _ = candidate.run(HARNESS, files, None, timeout=TIMEOUT_SEC)
    if not isinstance(predicted, list):
        raise candidate.CandidateError("the predictions are not a list")
    return predicted


def main():
    candidate.guard_grader_files(TESTS_DIR, os.path.join(LOGS_DIR, "verifier"))
    modified = modified_read_only_files()
    if modified:
        return finish(0.0, reason="build_file_modified", files=modified)
    if not os.path.isfile(os.path.join(APP_DIR, "model.py")):
        return finish(0.0, reason="no_output_file", correctness=False)
    with open(os.path.join(TESTS_DIR, "heldout.csv")) as handle:
        heldout = list(csv.DictReader(handle))
    with tempfile.TemporaryDirectory() as scratch:
        features_path = os.path.join(scratch, "points.csv")
        with open(features_path, "w") as handle:
            handle.write("x,y,z\n")
            for row in heldout:
                handle.write(f"{row['x']},{row['y']},{row['z']}\n")
        try:
            predicted = predictions(features_path)
        except candidate.CandidateError as error:
            return finish(0.0, **error.fields())
    if len(predicted) != len(heldout) or any(p not in (0, 1) for p in predicted):
        return finish(0.0, reason="malformed_predictions", correctness=False, count=len(predicted))
    correct = sum(p == int(row["label"]) for p, row in zip(predicted, heldout))
    accuracy = correct / len(heldout)
    return finish(
        anchored_linear(accuracy, BASELINE, REFERENCE),
        correctness=True,
        metric=round(accuracy, 4),
        baseline_score=BASELINE,
        reference_score=REFERENCE,
    )


if __name__ == "__main__":
    sys.exit(main())
