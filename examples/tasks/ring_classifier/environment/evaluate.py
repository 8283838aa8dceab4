"""Local evaluation of /app/model.py: train on 80% of train.csv, score the rest.

Read-only. Prints `accuracy: <value>` (higher is better). The verifier trains
on all of train.csv and scores a held-out set you cannot see.
"""
import csv
import importlib.util
import os
import sys

APP_DIR = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with open(path) as handle:
        rows = list(csv.DictReader(handle))
    X = [[float(row["x"]), float(row["y"]), float(row["z"])] for row in rows]
    y = [int(row["label"]) for row in rows]
    return X, y


def main():
    spec = importlib.util.spec_from_file_location("model", os.path.join(APP_DIR, "model.py"))
    model_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model_module)
    X, y = load(os.path.join(APP_DIR, "data", "train.csv"))
    cut = int(len(X) * 0.8)
    model = model_module.fit(X[:cut], y[:cut])
    predictions = list(model_module.predict(model, X[cut:]))
    if len(predictions) != len(X) - cut:
        print(f"error: {len(predictions)} predictions for {len(X) - cut} rows")
        return 1
    correct = sum(int(p) == t for p, t in zip(predictions, y[cut:]))
    print(f"accuracy: {correct / (len(X) - cut):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
