"""Verifier for sort8_network: integrity, validity (0-1 principle), size, reward.

Writes LOGS_DIR/verifier/reward.json like AutoLab's verifiers: the reward
plus correctness, metric and, for a zero score, the reason
("build_file_modified", "no_output_file", ...).
"""
import hashlib
import json
import math
import os
import sys

APP_DIR = os.environ.get("APP_DIR", "/app")
TESTS_DIR = os.environ.get("TESTS_DIR", "/tests")
LOGS_DIR = os.environ.get("LOGS_DIR", "/logs")

# The anchors published in task.toml ([optimization]); lower is better.
BASELINE = 28
REFERENCE = 19
WIRES = 8


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


def malformed(network):
    """Why `network` is not a list of [i, j] comparators, or ""."""
    if not isinstance(network, list):
        return "not a JSON list"
    for pair in network:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            or not 0 <= pair[0] < pair[1] < WIRES
        ):
            return f"bad comparator {pair!r}"
    return ""


def sorts_everything(network):
    """The 0-1 principle: sorting all 2**8 zero-one inputs means sorting every input."""
    for bits in range(2 ** WIRES):
        values = [(bits >> k) & 1 for k in range(WIRES)]
        for i, j in network:
            if values[i] > values[j]:
                values[i], values[j] = values[j], values[i]
        if any(values[k] > values[k + 1] for k in range(WIRES - 1)):
            return False
    return True


def main():
    modified = modified_read_only_files()
    if modified:
        return finish(0.0, reason="build_file_modified", files=modified)
    path = os.path.join(APP_DIR, "network.json")
    if not os.path.isfile(path):
        return finish(0.0, reason="no_output_file", correctness=False)
    try:
        with open(path) as handle:
            network = json.load(handle)
    except ValueError as error:
        return finish(0.0, reason="invalid_json", correctness=False, error=str(error))
    problem = malformed(network)
    if problem:
        return finish(0.0, reason="malformed_network", correctness=False, error=problem)
    if not sorts_everything(network):
        return finish(0.0, reason="not_a_sorting_network", correctness=False, metric=len(network))
    metric = len(network)
    return finish(
        anchored_linear(metric, BASELINE, REFERENCE),
        correctness=True,
        metric=metric,
        baseline_score=BASELINE,
        reference_score=REFERENCE,
    )


if __name__ == "__main__":
    sys.exit(main())
