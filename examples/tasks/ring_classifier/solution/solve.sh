#!/bin/bash
# Reference solution: logistic regression on quadratic features.
APP_DIR=${APP_DIR:-/app}
cat > "$APP_DIR/model.py" <<'PY'
"""Logistic regression on standardised quadratic features.

The label depends on the distance from the origin, which no linear model of
the raw features can see; x*x and y*y make the circle a straight line.
"""
import math


def features(row):
    x, y, z = row
    return [x, y, z, x * x, y * y, z * z]


def standardise(rows, stats=None):
    if stats is None:
        columns = list(zip(*rows))
        means = [sum(c) / len(c) for c in columns]
        spreads = [math.sqrt(sum((v - m) ** 2 for v in c) / len(c)) or 1.0 for c, m in zip(columns, means)]
        stats = (means, spreads)
    means, spreads = stats
    return [[(v - m) / s for v, m, s in zip(row, means, spreads)] for row in rows], stats


def fit(X, y, epochs=300, learning_rate=0.5):
    rows, stats = standardise([features(row) for row in X])
    weights = [0.0] * len(rows[0])
    bias = 0.0
    for _ in range(epochs):
        grad_w = [0.0] * len(weights)
        grad_b = 0.0
        for row, label in zip(rows, y):
            z = bias + sum(w * v for w, v in zip(weights, row))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            error = p - label
            grad_b += error
            for k, v in enumerate(row):
                grad_w[k] += error * v
        bias -= learning_rate * grad_b / len(rows)
        weights = [w - learning_rate * g / len(rows) for w, g in zip(weights, grad_w)]
    return weights, bias, stats


def predict(model, X):
    weights, bias, stats = model
    rows, _ = standardise([features(row) for row in X], stats)
    return [int(bias + sum(w * v for w, v in zip(weights, row)) > 0) for row in rows]
PY
